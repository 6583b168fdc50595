#include "analysis/kneedle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace knee::analysis {
namespace {

// The paper's figure-2 curve y = 5 - 1 / (x + 0.1), n points from 0 to 1 inclusive.
std::vector<ThroughputPoint> figure2(int n) {
  std::vector<ThroughputPoint> pts;
  for (int i = 0; i < n; ++i) {
    const double x = static_cast<double>(i) / (n - 1);
    pts.push_back({x, 5 - 1 / (x + 0.1)});
  }
  return pts;
}

// Seed 000's sweep: concurrency and throughput.
const std::vector<ThroughputPoint> kSeedSweep = {{1, 231},   {2, 468},   {4, 880},  {8, 1515},
                                                 {16, 2417}, {32, 4031}, {64, 4268}};

std::vector<ThroughputPoint> amdahl(double sigma) {
  std::vector<ThroughputPoint> pts;
  for (double n : {1, 2, 4, 8, 16, 32, 64}) pts.push_back({n, n / (1 + sigma * (n - 1))});
  return pts;
}

TEST(Kneedle, PaperFigure2CurveInTenPointsBendsAtTwoNinths) {
  auto k = find_kneedle(figure2(10));
  ASSERT_TRUE(k) << k.status().message();
  ASSERT_TRUE(k->index);
  EXPECT_EQ(*k->index, 2u);
  EXPECT_NEAR(k->knee_concurrency, 0.222, 5e-4);
  EXPECT_EQ(k->x_scale, XScale::kLinear);
  EXPECT_NEAR(k->difference[2], 0.5364, 1e-4);
  EXPECT_DOUBLE_EQ(k->difference.front(), 0.0);
  EXPECT_DOUBLE_EQ(k->difference.back(), 0.0);
  EXPECT_EQ(k->label, "diminishing returns from");
}

TEST(Kneedle, PaperFigure2CurveInStepsOfATenthBendsAtTwoTenths) {
  // The same curve sampled at 0, 0.1, ..., 1 (11 points): the sampling decides the answer.
  auto k = find_kneedle(figure2(11));
  ASSERT_TRUE(k && k->index);
  EXPECT_NEAR(k->knee_concurrency, 0.2, 1e-12);
}

TEST(Kneedle, SeedSweepDiminishesFrom32) {
  auto k = find_kneedle(kSeedSweep);
  ASSERT_TRUE(k && k->index);
  EXPECT_EQ(k->knee_concurrency, 32);
  EXPECT_EQ(k->summary, "diminishing returns from concurrency 32 (Kneedle, linear x-scale)");
}

TEST(Kneedle, StatesTheXScaleItUsed) {
  auto k = find_kneedle(kSeedSweep, XScale::kLog2);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->x_scale, XScale::kLog2);
  EXPECT_NE(k->summary.find("log2 x-scale"), std::string::npos) << k->summary;
  EXPECT_STREQ(x_scale_name(XScale::kLinear), "linear");
  EXPECT_STREQ(x_scale_name(XScale::kLog2), "log2");
}

TEST(Kneedle, AmdahlCurveIsConcaveInNButNotInLog2N) {
  // Why linear is the default: a curve that scales well is convex against log2 N.
  auto linear = find_kneedle(amdahl(0.02));
  ASSERT_TRUE(linear && linear->index);
  EXPECT_EQ(linear->knee_concurrency, 32);
  auto log2 = find_kneedle(amdahl(0.02), XScale::kLog2);
  ASSERT_TRUE(log2);
  EXPECT_FALSE(log2->index);
  EXPECT_TRUE(std::isnan(log2->knee_concurrency));
}

TEST(Kneedle, StraightOrFlatLinesHaveNoKnee) {
  std::vector<ThroughputPoint> line, flat;
  for (double n : {1, 2, 4, 8, 16}) {
    line.push_back({n, 100 * n});
    flat.push_back({n, 100});
  }
  auto k = find_kneedle(line);
  ASSERT_TRUE(k);
  EXPECT_FALSE(k->index);
  EXPECT_NE(k->summary.find("no knee"), std::string::npos);
  auto f = find_kneedle(flat);
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->index);
}

TEST(Kneedle, SensitivityDecidesABarelyBentCurve) {
  // Slightly concave: the bend is real but small; a strict sensitivity refuses it.
  std::vector<ThroughputPoint> pts;
  for (double n : {1, 2, 3, 4, 5, 6, 7, 8}) pts.push_back({n, n - 0.02 * n * n});
  auto loose = find_kneedle(pts, XScale::kLinear, 0.1);
  auto strict = find_kneedle(pts, XScale::kLinear, 1.0);
  ASSERT_TRUE(loose && strict);
  EXPECT_TRUE(loose->index);
  EXPECT_FALSE(strict->index);
}

TEST(Kneedle, RefusesBadInput) {
  EXPECT_FALSE(find_kneedle(std::vector<ThroughputPoint>{{1, 1}, {2, 2}}));
  EXPECT_FALSE(find_kneedle(std::vector<ThroughputPoint>{{1, 1}, {4, 2}, {2, 3}}));
  EXPECT_FALSE(find_kneedle(std::vector<ThroughputPoint>{{1, 1}, {1, 2}, {2, 3}}));
  EXPECT_FALSE(find_kneedle(std::vector<ThroughputPoint>{{0, 1}, {1, 2}, {2, 3}}, XScale::kLog2));
  EXPECT_FALSE(find_kneedle(std::vector<ThroughputPoint>{{1, NAN}, {2, 2}, {3, 3}}));
  EXPECT_FALSE(find_kneedle(kSeedSweep, XScale::kLinear, 0));
  auto e = find_kneedle(std::vector<ThroughputPoint>{{1, 1}, {4, 2}, {2, 3}});
  EXPECT_EQ(e.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(e.status().message().find("strictly increasing"), std::string::npos);
}

}  // namespace
}  // namespace knee::analysis
