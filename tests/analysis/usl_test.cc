#include "analysis/usl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace knee::analysis {
namespace {

std::vector<ThroughputPoint> curve(std::initializer_list<double> levels, double sigma, double kappa,
                                   double lambda) {
  std::vector<ThroughputPoint> pts;
  for (double n : levels) pts.push_back({n, usl_throughput_rps(n, sigma, kappa, lambda)});
  return pts;
}

TEST(Usl, ThroughputFollowsTheLaw) {
  EXPECT_DOUBLE_EQ(usl_throughput_rps(1, 0.3, 0.1, 250), 250);  // X(1) = lambda
  EXPECT_DOUBLE_EQ(usl_throughput_rps(8, 0, 0, 10), 80);        // linear
  EXPECT_NEAR(usl_throughput_rps(4, 0.02, 0.02, 1.0), 4 / 1.3, 1e-12);
}

TEST(Usl, RecoversTheIssueCurve) {
  // Issue 4: sigma = 0.02, kappa = 0.02, lambda = 1, printed to 4 decimals.
  const std::vector<ThroughputPoint> pts = {{1, 1},      {2, 1.8868}, {4, 3.0769},
                                            {6, 3.5294}, {8, 3.5398}, {10, 3.3557}};
  auto fit = fit_usl(pts);
  ASSERT_TRUE(fit) << fit.status().message();
  EXPECT_NEAR(fit->sigma, 0.02, 5e-4);
  EXPECT_NEAR(fit->kappa, 0.02, 5e-4);
  EXPECT_NEAR(fit->lambda_rps, 1.0, 5e-4);
  ASSERT_TRUE(fit->peak_concurrency);
  EXPECT_NEAR(*fit->peak_concurrency, 7.0, 0.05);
  ASSERT_TRUE(fit->peak_throughput_rps);
  EXPECT_NEAR(*fit->peak_throughput_rps, usl_throughput_rps(7, 0.02, 0.02, 1), 1e-3);
  EXPECT_GT(fit->r_squared, 0.99999);
  EXPECT_EQ(fit->points, 6u);
  EXPECT_EQ(fit->held_at_zero, "none");
  EXPECT_FALSE(fit->weak_fit);
  EXPECT_FALSE(fit->peak_extrapolated);
  EXPECT_FALSE(fit->no_retrograde);
  EXPECT_TRUE(fit->flags.empty());
}

TEST(Usl, PointOrderDoesNotMatter) {
  const std::vector<ThroughputPoint> pts = {{10, 3.3557}, {1, 1},      {8, 3.5398},
                                            {2, 1.8868},  {6, 3.5294}, {4, 3.0769}};
  auto fit = fit_usl(pts);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->sigma, 0.02, 5e-4);
  EXPECT_NEAR(fit->kappa, 0.02, 5e-4);
}

TEST(Usl, LinearCurveHasNoRetrogradeRegion) {
  auto fit = fit_usl(curve({1, 2, 4, 8, 16, 32}, 0, 0, 150));
  ASSERT_TRUE(fit) << fit.status().message();
  EXPECT_EQ(fit->sigma, 0.0);
  EXPECT_EQ(fit->kappa, 0.0);
  EXPECT_NEAR(fit->lambda_rps, 150, 1e-6);
  EXPECT_NEAR(fit->r_squared, 1.0, 1e-12);
  EXPECT_EQ(fit->held_at_zero, "sigma and kappa");
  EXPECT_FALSE(fit->peak_concurrency);
  EXPECT_FALSE(fit->peak_throughput_rps);
  EXPECT_TRUE(fit->no_retrograde);
  EXPECT_FALSE(fit->peak_extrapolated);
  EXPECT_EQ(fit->flags, std::vector<std::string>{"no retrograde region"});
}

TEST(Usl, AmdahlCurveKeepsSigmaWithKappaZero) {
  auto fit = fit_usl(curve({1, 2, 4, 8, 16, 32, 64}, 0.05, 0, 231));
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->sigma, 0.05, 1e-6);
  EXPECT_EQ(fit->kappa, 0.0);
  EXPECT_NEAR(fit->lambda_rps, 231, 1e-4);
  EXPECT_EQ(fit->held_at_zero, "kappa");
  EXPECT_TRUE(fit->no_retrograde);
}

TEST(Usl, RecoversKnownParametersFromANoisyCurve) {
  // sigma = 0.03, kappa = 5e-4, lambda = 500 req/s (N* = 44), each point off by up to 2%.
  const double sigma = 0.03, kappa = 5e-4, lambda = 500;
  const double levels[] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96};
  const double noise[] = {0.012,  -0.008, 0.015,  -0.02, 0.004, 0.01,
                          -0.013, 0.007,  -0.005, 0.018, -0.011};
  std::vector<ThroughputPoint> pts;
  for (size_t i = 0; i < std::size(levels); ++i) {
    pts.push_back(
        {levels[i], usl_throughput_rps(levels[i], sigma, kappa, lambda) * (1 + noise[i])});
  }
  auto fit = fit_usl(pts);
  ASSERT_TRUE(fit) << fit.status().message();
  EXPECT_NEAR(fit->sigma, sigma, 0.01);
  EXPECT_NEAR(fit->kappa, kappa, 1e-4);
  EXPECT_NEAR(fit->lambda_rps, lambda, 0.03 * lambda);
  ASSERT_TRUE(fit->peak_concurrency);
  EXPECT_NEAR(*fit->peak_concurrency, std::sqrt((1 - sigma) / kappa), 5);
  EXPECT_GT(fit->r_squared, 0.99);
  EXPECT_LT(fit->r_squared, 1.0);
  EXPECT_TRUE(fit->flags.empty());
}

TEST(Usl, FlagsAWeakFitAndAnExtrapolatedPeak) {
  // Five points up to 16 of a curve that peaks at 44.
  auto fit = fit_usl(curve({1, 2, 4, 8, 16}, 0.03, 5e-4, 500));
  ASSERT_TRUE(fit);
  EXPECT_TRUE(fit->weak_fit);
  EXPECT_TRUE(fit->peak_extrapolated);
  ASSERT_TRUE(fit->peak_concurrency);
  EXPECT_NEAR(*fit->peak_concurrency, std::sqrt(0.97 / 5e-4), 0.01);
  // The flag says why the fit is weak (regression: "fit is weak" stood alone beside R^2 0.997).
  ASSERT_EQ(fit->flags.size(), 2u);
  EXPECT_EQ(fit->flags[0].rfind("fit is weak: ", 0), 0u) << fit->flags[0];
  EXPECT_NE(fit->flags[0].find("fewer than 6"), std::string::npos) << fit->flags[0];
  EXPECT_EQ(fit->flags[1], "peak extrapolated");
}

// Regression: a curve that falls from its first point fitted N* = 0.2 at 242 req/s, below the
// smallest level and above every measured throughput, with no flag.
TEST(Usl, FlagsAPeakBeforeTheFirstLevel) {
  const std::vector<ThroughputPoint> falling = {{1, 100}, {2, 50}, {4, 25}, {8, 12}};
  auto fit = fit_usl(falling);
  ASSERT_TRUE(fit) << fit.status().message();
  ASSERT_TRUE(fit->peak_concurrency);
  ASSERT_LT(*fit->peak_concurrency, 1);
  EXPECT_TRUE(fit->peak_before_data);
  bool flagged = false;
  for (const std::string& f : fit->flags) flagged |= f.starts_with("peak before the first level");
  EXPECT_TRUE(flagged) << testing::PrintToString(fit->flags);
  // A peak inside the data is not flagged.
  auto inside = fit_usl(curve({1, 2, 4, 8, 16, 32, 64, 128}, 0.03, 5e-4, 500));
  ASSERT_TRUE(inside);
  EXPECT_FALSE(inside->peak_before_data);
}

// Standard errors of the Cisco data of Gunther's book, checked against an independent
// Gauss-Newton fit in (lambda, sigma, kappa) directly: se = sqrt(diag(SSE / (n - p) (J^T J)^-1))
// = 19.95 req/s, 0.002598, 2.538e-05. The fit's lambda is the slope at the origin, not X(1).
TEST(Usl, StandardErrorsOfTheCiscoData) {
  const std::vector<ThroughputPoint> pts = {{1, 955.16},  {2, 1878.91},  {4, 3548.68},
                                            {8, 6231.63}, {16, 9432.25}, {32, 11374.5},
                                            {64, 10891.3}};
  auto fit = fit_usl(pts);
  ASSERT_TRUE(fit) << fit.status().message();
  EXPECT_NEAR(fit->lambda_rps, 1011.34, 0.05);
  EXPECT_NE(fit->lambda_rps, 955.16);
  ASSERT_TRUE(fit->lambda_se && fit->sigma_se && fit->kappa_se);
  EXPECT_NEAR(*fit->lambda_se, 19.95, 0.2);
  EXPECT_NEAR(*fit->sigma_se, 0.002598, 0.00003);
  EXPECT_NEAR(*fit->kappa_se, 2.538e-05, 3e-7);
}

// A standard error needs a degree of freedom (more points than free parameters), and a
// parameter held at 0 by the chosen model has none.
TEST(Usl, StandardErrorsOnlyWithADegreeOfFreedomAndForFreeParameters) {
  const std::vector<ThroughputPoint> pts = {{1, 100}, {2, 180}, {4, 250}};
  auto fit = fit_usl(pts);
  ASSERT_TRUE(fit) << fit.status().message();
  const bool sigma_free = fit->held_at_zero == "none" || fit->held_at_zero == "kappa";
  const bool kappa_free = fit->held_at_zero == "none" || fit->held_at_zero == "sigma";
  const size_t free = 1 + (sigma_free ? 1u : 0u) + (kappa_free ? 1u : 0u);
  EXPECT_EQ(fit->lambda_se.has_value(), pts.size() > free) << fit->held_at_zero;
  EXPECT_EQ(fit->sigma_se.has_value(), sigma_free && pts.size() > free);
  EXPECT_EQ(fit->kappa_se.has_value(), kappa_free && pts.size() > free);
}

TEST(Usl, RefusesTooFewOrNonPositivePoints) {
  auto two = fit_usl(std::vector<ThroughputPoint>{{1, 100}, {2, 190}});
  ASSERT_FALSE(two);
  EXPECT_EQ(two.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(two.status().message().find("at least 3 points"), std::string::npos);
  EXPECT_FALSE(fit_usl(std::vector<ThroughputPoint>{{1, 100}, {2, 0}, {4, 300}}));
  EXPECT_FALSE(fit_usl(std::vector<ThroughputPoint>{{0, 100}, {2, 190}, {4, 300}}));
  EXPECT_FALSE(fit_usl(std::vector<ThroughputPoint>{{1, 100}, {2, -190}, {4, 300}}));
  EXPECT_FALSE(fit_usl(std::vector<ThroughputPoint>{{1, 100}, {2, NAN}, {4, 300}}));
  auto same = fit_usl(std::vector<ThroughputPoint>{{2, 100}, {2, 110}, {4, 300}});
  ASSERT_FALSE(same);
  EXPECT_NE(same.status().message().find("distinct"), std::string::npos);
}

}  // namespace
}  // namespace knee::analysis
