#include "analysis/queueing.h"

#include <gtest/gtest.h>

#include <cmath>

namespace knee::analysis {
namespace {

constexpr double kNsPerMs = 1e6;

// Rounds like the seed's toFixed(decimals).
double fixed(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

// E[R] = integral of P(R > t) dt, by the trapezoid rule out to where the tail is negligible.
double mean_from_survival_ns(const QueueModel& m) {
  const double end_ns = response_quantile_ns(m, 1 - 1e-12);
  const int steps = 200'000;
  const double dt = end_ns / steps;
  double sum = 0.5 * (response_survival(m, 0) + response_survival(m, end_ns));
  for (int i = 1; i < steps; ++i) sum += response_survival(m, i * dt);
  return sum * dt;
}

TEST(Mm1, EightHundredOfAThousandGivesFiveMsAndP99Of23Ms) {
  auto m = mm1(800, 1000);
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_DOUBLE_EQ(m->utilisation, 0.8);
  EXPECT_DOUBLE_EQ(m->p_wait, 0.8);
  EXPECT_NEAR(m->mean_response_ns / kNsPerMs, 5.000, 1e-9);
  EXPECT_NEAR(m->mean_wait_ns / kNsPerMs, 4.000, 1e-9);
  EXPECT_NEAR(response_quantile_ns(*m, 0.99) / kNsPerMs, 23.026, 5e-4);
  EXPECT_NEAR(response_quantile_ns(*m, 0.50) / kNsPerMs, 1000 * std::log(2.0) / 200, 1e-9);
  // Little's law: L = lambda W = 4, Lq = lambda Wq = 3.2.
  EXPECT_NEAR(m->mean_in_system, 4.0, 1e-9);
  EXPECT_NEAR(m->mean_queue_length, 3.2, 1e-9);
}

TEST(Mm1, RefusesUtilisationAtOrAboveOneAsUnstable) {
  for (double lambda : {1000.0, 1200.0}) {
    auto m = mm1(lambda, 1000);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.status().code(), core::Status::Code::kInvalidArgument);
    EXPECT_NE(m.status().message().find("unstable"), std::string::npos) << m.status().message();
    EXPECT_NE(m.status().message().find("grows without bound"), std::string::npos);
  }
  EXPECT_FALSE(mm1(10, 0));
  EXPECT_FALSE(mm1(-1, 100));
  EXPECT_FALSE(mm1(NAN, 100));
}

TEST(Mmc, OneServerEqualsMm1) {
  auto one = mmc(1, 800, 1000);
  auto ref = mm1(800, 1000);
  ASSERT_TRUE(one && ref);
  EXPECT_NEAR(one->p_wait, ref->p_wait, 1e-12);
  EXPECT_NEAR(one->mean_wait_ns, ref->mean_wait_ns, 1e-6);
  EXPECT_NEAR(one->mean_response_ns, ref->mean_response_ns, 1e-6);
  EXPECT_NEAR(one->mean_queue_length, ref->mean_queue_length, 1e-9);
  EXPECT_NEAR(one->mean_in_system, ref->mean_in_system, 1e-9);
  // The M/M/c response-time distribution with c = 1 is the M/M/1 exponential.
  for (double t_ms : {0.1, 1.0, 5.0, 23.0, 60.0}) {
    EXPECT_NEAR(response_survival(*one, t_ms * kNsPerMs), std::exp(-200 * t_ms / 1000), 1e-12);
  }
}

TEST(Mmc, ErlangCOfTwoServersAndOneErlangIsOneThird) {
  EXPECT_DOUBLE_EQ(erlang_b(2, 1.0), 0.2);
  EXPECT_DOUBLE_EQ(erlang_c(2, 1.0), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(erlang_b(1, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(erlang_c(1, 0.8), 0.8);  // M/M/1: P(wait) = rho
  EXPECT_TRUE(std::isnan(erlang_c(2, 2.0)));
  EXPECT_TRUE(std::isnan(erlang_b(0, 1.0)));
  auto m = mmc(2, 1, 1);  // lambda 1/s, mu 1/s: a = 1, rho = 0.5
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->p_wait, 1.0 / 3.0);
  EXPECT_NEAR(m->mean_wait_ns, 1e9 / 3, 1e-3);      // C / (c mu - lambda) = 1/3 s
  EXPECT_NEAR(m->mean_response_ns, 4e9 / 3, 1e-3);  // + 1 / mu
  EXPECT_NEAR(m->mean_queue_length, 1.0 / 3, 1e-12);
  EXPECT_NEAR(m->mean_in_system, 4.0 / 3, 1e-12);
}

TEST(Mmc, ErlangRecursionHoldsForManyServers) {
  // 1000 servers at 95%: factorials would overflow; the recursion gives a probability.
  const double c = erlang_c(1000, 950);
  EXPECT_GT(c, 0.0);
  EXPECT_LT(c, 1.0);
  // Erlang B of 10 servers and 5 Erlangs, the textbook value 0.01838.
  EXPECT_NEAR(erlang_b(10, 5.0), 0.018385, 1e-6);
}

TEST(Mmc, ResponseDistributionIntegratesToTheMean) {
  // One case per branch of the survival function: c - 1 - a > 0, = 0 and < 0.
  struct Case {
    int c;
    double lambda, mu;
  };
  for (Case k : {Case{3, 1.0, 1.0}, Case{2, 1.0, 1.0}, Case{4, 3.5, 1.0}, Case{8, 7900, 1000}}) {
    auto m = mmc(k.c, k.lambda, k.mu);
    ASSERT_TRUE(m);
    EXPECT_NEAR(mean_from_survival_ns(*m) / m->mean_response_ns, 1.0, 1e-6) << "c = " << k.c;
    for (double q : {0.5, 0.9, 0.99, 0.999}) {
      const double t = response_quantile_ns(*m, q);
      EXPECT_NEAR(response_survival(*m, t), 1 - q, 1e-9) << "c = " << k.c << " q = " << q;
    }
  }
}

TEST(Mmc, SurvivalIsContinuousAcrossTheLimitCase) {
  auto at = mmc(2, 1.0, 1.0);  // c - 1 - a = 0 exactly
  auto below = mmc(2, 1.0 - 1e-9, 1.0);
  auto above = mmc(2, 1.0 + 1e-9, 1.0);
  ASSERT_TRUE(at && below && above);
  for (double t_s : {0.1, 1.0, 3.0, 10.0}) {
    EXPECT_NEAR(response_survival(*below, t_s * 1e9), response_survival(*at, t_s * 1e9), 1e-8);
    EXPECT_NEAR(response_survival(*above, t_s * 1e9), response_survival(*at, t_s * 1e9), 1e-8);
  }
}

TEST(Mmc, MoreServersWaitLessAtTheSameUtilisation) {
  auto one = mmc(1, 800, 1000);
  auto eight = mmc(8, 6400, 1000);
  ASSERT_TRUE(one && eight);
  EXPECT_DOUBLE_EQ(eight->utilisation, 0.8);
  EXPECT_LT(eight->p_wait, one->p_wait);
  EXPECT_LT(response_quantile_ns(*eight, 0.99), response_quantile_ns(*one, 0.99));
}

// The wait alone: P(Wq > t) = C e^-(c mu - lambda) t. Two servers of 1000 req/s at 1500 req/s:
// C = 0.642857, theta = 500/s; p50 = ln(C / 0.5) / 500 = 0.5026 ms, p99 = ln(C / 0.01) / 500 =
// 8.3267 ms; 35.7 % find a server free, so quantiles below that are 0. Erlang B(2, 1.5) =
// 1.125 / 3.625 = 0.310345.
TEST(Mmc, WaitQuantilesAndErlangB) {
  auto m = mmc(2, 1500, 1000);
  ASSERT_TRUE(m);
  EXPECT_NEAR(m->p_wait, 0.642857, 1e-6);
  EXPECT_NEAR(wait_quantile_ns(*m, 0.50), 0.502628e6, 10);
  EXPECT_NEAR(wait_quantile_ns(*m, 0.99), 8.32667e6, 10);
  EXPECT_EQ(wait_quantile_ns(*m, 0.30), 0);
  EXPECT_TRUE(std::isnan(wait_quantile_ns(*m, 1.0)));
  // The quantile inverts the survival: P(Wq > t_q) = 1 - q.
  const double t = wait_quantile_ns(*m, 0.9) / 1e9;
  EXPECT_NEAR(m->p_wait * std::exp(-500 * t), 0.1, 1e-12);
  EXPECT_NEAR(erlang_b(2, 1.5), 0.310345, 1e-6);
}

TEST(Mmc, RefusesUnstableAndBadInput) {
  auto m = mmc(2, 2000, 1000);
  ASSERT_FALSE(m);
  EXPECT_NE(m.status().message().find("unstable"), std::string::npos);
  EXPECT_NE(m.status().message().find("c mu = 2 x 1000 = 2000 req/s"), std::string::npos)
      << m.status().message();
  EXPECT_FALSE(mmc(0, 1, 1));
  EXPECT_FALSE(mmc(2, 1, -1));
  EXPECT_TRUE(std::isnan(response_quantile_ns(*mmc(2, 1, 1), 1.0)));
  EXPECT_TRUE(std::isnan(response_quantile_ns(*mmc(2, 1, 1), 0.0)));
}

TEST(Mm1Table, ReproducesTheSeedTable) {
  // Seed 000, "The Cost of Approaching Saturation": mu = 4268 req/s.
  auto rows = mm1_utilisation_table(4268);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 7u);
  const double arrival[] = {1280, 2134, 2988, 3414, 3841, 4055, 4225};
  const double mean_ms[] = {0.33, 0.47, 0.78, 1.17, 2.34, 4.69, 23.43};
  const double ratio[] = {1.0, 1.4, 2.3, 3.5, 7.0, 14.0, 70.0};
  for (size_t i = 0; i < rows->size(); ++i) {
    const UtilisationRow& r = (*rows)[i];
    EXPECT_DOUBLE_EQ(r.utilisation, kSeedUtilisations[i]);
    EXPECT_EQ(fixed(r.arrival_rps, 0), arrival[i]) << i;
    EXPECT_EQ(fixed(r.mean_response_ns / kNsPerMs, 2), mean_ms[i]) << i;
    EXPECT_EQ(fixed(r.ratio_to_first, 1), ratio[i]) << i;
    EXPECT_NEAR(r.p50_ns, std::log(2.0) * r.mean_response_ns, 1e-6);
    EXPECT_NEAR(r.p90_ns, std::log(10.0) * r.mean_response_ns, 1e-6);
    EXPECT_NEAR(r.p99_ns, std::log(100.0) * r.mean_response_ns, 1e-6);
  }
  EXPECT_NEAR((*rows)[6].ratio_to_first, 70.0, 1e-9);  // 0.70 / 0.01
}

TEST(Mm1Table, RefusesBadInput) {
  EXPECT_FALSE(mm1_utilisation_table(0));
  const double bad[] = {0.5, 1.0};
  EXPECT_FALSE(mm1_utilisation_table(4268, bad));
  EXPECT_FALSE(mm1_utilisation_table(4268, std::span<const double>()));
}

TEST(PeakHeadroom, ReproducesTheSeedPeakLines) {
  // "peak 416.67 req/s -> utilization 9.8%, upper bound is 10.2x peak, modeled average time
  // 0.26 ms"; "peak 833.33 ... 19.5%, 5.1x, 0.29 ms".
  auto reads = peak_headroom(4268, 416.67);
  ASSERT_TRUE(reads);
  EXPECT_EQ(fixed(100 * reads->utilisation, 1), 9.8);
  EXPECT_EQ(fixed(reads->headroom, 1), 10.2);
  ASSERT_TRUE(reads->mean_response_ns);
  EXPECT_EQ(fixed(*reads->mean_response_ns / kNsPerMs, 2), 0.26);
  EXPECT_EQ(reads->band, HeadroomBand::kAmple);

  auto doubled = peak_headroom(4268, 833.33);
  ASSERT_TRUE(doubled);
  EXPECT_EQ(fixed(100 * doubled->utilisation, 1), 19.5);
  EXPECT_EQ(fixed(doubled->headroom, 1), 5.1);
  EXPECT_EQ(fixed(*doubled->mean_response_ns / kNsPerMs, 2), 0.29);
  EXPECT_EQ(doubled->band, HeadroomBand::kComfortable);
}

TEST(PeakHeadroom, BandsFollowTheRatio) {
  auto band = [](double mu, double peak) { return peak_headroom(mu, peak)->band; };
  EXPECT_EQ(band(100, 200), HeadroomBand::kDoesNotHold);
  EXPECT_EQ(band(100, 100), HeadroomBand::kDoesNotHold);  // rho = 1: no steady state
  EXPECT_EQ(band(150, 100), HeadroomBand::kNoRoom);
  EXPECT_EQ(band(200, 100), HeadroomBand::kOneFailure);
  EXPECT_EQ(band(250, 100), HeadroomBand::kOneFailure);
  EXPECT_EQ(band(300, 100), HeadroomBand::kModest);
  EXPECT_EQ(band(500, 100), HeadroomBand::kComfortable);
  EXPECT_EQ(band(1000, 100), HeadroomBand::kAmple);
  auto over = peak_headroom(100, 200);
  EXPECT_FALSE(over->mean_response_ns);
  EXPECT_NE(over->verdict.find("does not hold"), std::string::npos);
  EXPECT_NE(peak_headroom(250, 100)->verdict.find("one failure erases the margin"),
            std::string::npos);
  EXPECT_FALSE(peak_headroom(0, 100));
  EXPECT_FALSE(peak_headroom(100, 0));
}

}  // namespace
}  // namespace knee::analysis
