#include "analysis/knee.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace knee::analysis {
namespace {

constexpr double kMs = 1e6;  // ns per ms

// Seed 000, "What Happens as Concurrency Increases": the measured table.
std::vector<LevelPoint> seed_000_table() {
  const double n[] = {1, 2, 4, 8, 16, 32, 64};
  const double x[] = {231, 468, 880, 1515, 2417, 4031, 4268};
  const double p99_ms[] = {4.78, 5.05, 5.38, 6.14, 7.57, 9.56, 16.46};
  std::vector<LevelPoint> points;
  for (size_t i = 0; i < 7; ++i) points.push_back({n[i], x[i], p99_ms[i] * kMs});
  return points;
}

TEST(FindKnee, SeedTableHasKneeAt32) {
  const std::vector<LevelPoint> points = seed_000_table();
  const KneeVerdict v = find_knee(points);
  ASSERT_TRUE(v.index.has_value());
  EXPECT_EQ(*v.index, 5u);
  EXPECT_EQ(points[*v.index].concurrency, 32);
  ASSERT_EQ(v.gain_per_doubling.size(), 6u);
  // Levels double, so g_i is the plain ratio minus one.
  EXPECT_NEAR(v.gain_per_doubling[0], 468.0 / 231.0 - 1, 1e-12);
  EXPECT_NEAR(v.gain_per_doubling[5], 4268.0 / 4031.0 - 1, 1e-12);  // 5.9%
  EXPECT_EQ(v.summary,
            "knee at concurrency 32: going to 64 gains 5.9% throughput per doubling "
            "(4031 -> 4268 req/s) while p99 grows 1.72x (9.56 -> 16.46 ms)");
}

TEST(FindKnee, RuleStatesTheThresholds) {
  const KneeVerdict v = find_knee(seed_000_table(), 0.2, 2.0);
  EXPECT_NE(v.rule.find("less than 20%"), std::string::npos) << v.rule;
  EXPECT_NE(v.rule.find("at least 2x"), std::string::npos) << v.rule;
  EXPECT_NE(v.rule.find("log2(N[i+1]/N[i])"), std::string::npos) << v.rule;
  // 32 -> 64 grows p99 only 1.72x, short of 2x.
  EXPECT_FALSE(v.index.has_value());
}

TEST(FindKnee, LinearCurveHasNoKnee) {
  std::vector<LevelPoint> points;
  for (double n = 1; n <= 256; n *= 2) points.push_back({n, 100 * n, 5 * kMs * (1 + n / 64)});
  const KneeVerdict v = find_knee(points);
  EXPECT_FALSE(v.index.has_value());
  EXPECT_EQ(v.summary, "no knee within the sweep");
  ASSERT_EQ(v.gain_per_doubling.size(), points.size() - 1);
  for (double g : v.gain_per_doubling) EXPECT_NEAR(g, 1.0, 1e-12);
}

TEST(FindKnee, FlatThroughputWithFlatP99HasNoKnee) {
  // Throughput is flat from the start, but latency does not grow: the p99 condition fails.
  const std::vector<LevelPoint> points = {
      {1, 1000, 2 * kMs}, {2, 1000, 2 * kMs}, {4, 1000, 2.1 * kMs}, {8, 1000, 2.2 * kMs}};
  const KneeVerdict v = find_knee(points);
  EXPECT_FALSE(v.index.has_value());
  for (double g : v.gain_per_doubling) EXPECT_NEAR(g, 0.0, 0.0);
}

TEST(FindKnee, NonDoublingLevelsUseLog2Exponent) {
  // Levels 1, 3, 10. By hand:
  //   g0 = (250/100)^(1/log2 3) - 1      = 2.5^0.6309298 - 1  = 0.7826751
  //   g1 = (290/250)^(1/log2(10/3)) - 1  = 1.16^0.5757166 - 1 = 0.0892048
  // The step 3 -> 10 gains 16% in throughput, but it spans 1.74 doublings: per doubling it is
  // 8.9%, under 10%, so with p99 growing 2x the knee is at 3.
  const std::vector<LevelPoint> points = {
      {1, 100, 4 * kMs}, {3, 250, 5 * kMs}, {10, 290, 10 * kMs}};
  const KneeVerdict v = find_knee(points);
  ASSERT_EQ(v.gain_per_doubling.size(), 2u);
  EXPECT_NEAR(v.gain_per_doubling[0], 0.7826751, 1e-7);
  EXPECT_NEAR(v.gain_per_doubling[1], 0.0892048, 1e-7);
  ASSERT_TRUE(v.index.has_value());
  EXPECT_EQ(*v.index, 1u);
  EXPECT_EQ(v.summary.rfind("knee at concurrency 3: going to 10 gains 8.9%", 0), 0u) << v.summary;
}

TEST(FindKnee, FewerThanTwoPointsHasNoKnee) {
  EXPECT_FALSE(find_knee({}).index.has_value());
  EXPECT_TRUE(find_knee({}).gain_per_doubling.empty());
  const std::vector<LevelPoint> one = {{32, 4031, 9.56 * kMs}};
  const KneeVerdict v = find_knee(one);
  EXPECT_FALSE(v.index.has_value());
  EXPECT_TRUE(v.gain_per_doubling.empty());
  EXPECT_EQ(v.summary, "no knee within the sweep");
  EXPECT_FALSE(v.rule.empty());
}

TEST(FindKnee, NeverTheLastLevelWhenTheSweepEndsRising) {
  // Still scaling at the last level: no knee, even though the sweep stops there.
  const std::vector<LevelPoint> points = {{1, 100, 1 * kMs}, {2, 190, 1 * kMs}, {4, 350, 1 * kMs}};
  EXPECT_FALSE(find_knee(points).index.has_value());
}

TEST(FindKnee, TakesTheSmallestQualifyingLevel) {
  const std::vector<LevelPoint> points = {
      {1, 100, 1 * kMs}, {2, 200, 1 * kMs}, {4, 205, 2 * kMs}, {8, 206, 4 * kMs}};
  const KneeVerdict v = find_knee(points);
  ASSERT_TRUE(v.index.has_value());
  EXPECT_EQ(*v.index, 1u);
  EXPECT_EQ(v.gain_per_doubling.size(), 3u);  // gains after the knee are still reported
}

TEST(FindKnee, FallingThroughputCountsAsFlat) {
  const std::vector<LevelPoint> points = {{1, 100, 1 * kMs}, {2, 180, 1 * kMs}, {4, 150, 3 * kMs}};
  const KneeVerdict v = find_knee(points);
  ASSERT_TRUE(v.index.has_value());
  EXPECT_EQ(*v.index, 1u);
  EXPECT_LT(v.gain_per_doubling[1], 0);
}

TEST(FindKnee, SkipsPairsThatBreakPreconditions) {
  const std::vector<LevelPoint> points = {
      {1, 100, 1 * kMs},  // pair 0: throughput 0 at the next level -> skipped
      {2, 0, 1 * kMs},    // pair 1: throughput 0 here -> skipped
      {4, 400, 1 * kMs},  // pair 2: concurrency goes down -> skipped
      {3, 401, 9 * kMs},  // pair 3: valid, flat and p99 grows 2x -> knee
      {6, 402, 18 * kMs}};
  const KneeVerdict v = find_knee(points);
  ASSERT_EQ(v.gain_per_doubling.size(), 4u);
  EXPECT_TRUE(std::isnan(v.gain_per_doubling[0]));
  EXPECT_TRUE(std::isnan(v.gain_per_doubling[1]));
  EXPECT_TRUE(std::isnan(v.gain_per_doubling[2]));
  EXPECT_FALSE(std::isnan(v.gain_per_doubling[3]));
  ASSERT_TRUE(v.index.has_value());
  EXPECT_EQ(*v.index, 3u);
}

TEST(FindKnee, ZeroP99NeverQualifies) {
  const std::vector<LevelPoint> points = {{1, 100, 0}, {2, 101, 5 * kMs}};
  const KneeVerdict v = find_knee(points);
  EXPECT_FALSE(v.index.has_value());
  EXPECT_NEAR(v.gain_per_doubling[0], 0.01, 1e-12);
}

}  // namespace
}  // namespace knee::analysis
