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

// ---- a knee must hold

// Regression (issue 11): one 0.4 s host stall at N = 4 produced "knee at concurrency 2" while
// 8..64 went on to 1678-4676 req/s.
// The level that beats it most per doubling is named: 32, (4200/1600)^(1/4) - 1 = 27.3 %.
TEST(FindKnee, AKneeThatALaterLevelBeatsByMoreThanTenPercentIsNoStableKnee) {
  const std::vector<LevelPoint> points = {
      {1, 850, 2 * kMs},   {2, 1600, 2.2 * kMs}, {4, 1550, 400 * kMs}, {8, 1678, 5 * kMs},
      {16, 3000, 6 * kMs}, {32, 4200, 8 * kMs},  {64, 4676, 11 * kMs}};
  const KneeVerdict v = find_knee(points);
  EXPECT_FALSE(v.index.has_value());
  ASSERT_TRUE(v.noisy_index.has_value());
  EXPECT_EQ(*v.noisy_index, 2u);  // concurrency 4, the level that dipped
  EXPECT_EQ(v.summary,
            "no stable knee: the rule matched at concurrency 2, but concurrency 32 later reached "
            "4200 req/s, 2.62x its 1600 req/s (27.3% per doubling), so that knee did not hold: "
            "concurrency 4 looks noisy (a stall or a busy host); rerun it with --repeat 3 or on "
            "a quieter host");
  EXPECT_NE(v.rule.find("no level after the next gains 10% or more per doubling over X[i]"),
            std::string::npos)
      << v.rule;
}

TEST(FindKnee, TheNextCandidateThatHoldsIsTheKneeAndTheNoisyOneIsNamed) {
  std::vector<LevelPoint> points = seed_000_table();
  points[2] = {4, 470, 20 * kMs};  // a stall at 4: flat from 2, p99 4x
  const KneeVerdict v = find_knee(points);
  ASSERT_TRUE(v.index.has_value());
  EXPECT_EQ(*v.index, 5u);  // 32, as without the stall
  EXPECT_EQ(v.noisy_index, 2u);
  EXPECT_EQ(v.summary.rfind("knee at concurrency 32: going to 64 gains 5.9%", 0), 0u) << v.summary;
  EXPECT_NE(v.summary.find("; earlier, the rule matched at concurrency 2"), std::string::npos)
      << v.summary;
}

// A plateau that holds (the next levels within 10 % per doubling) stays the knee; so does a
// curve that flattens gently, 5 % per doubling, whose later levels pass 1.1x X[i] in all.
TEST(FindKnee, AGentlyFlatteningCurveHolds) {
  std::vector<LevelPoint> points = {{1, 100, 1 * kMs}, {2, 190, 1 * kMs}};
  double x = 190, p99 = 1 * kMs;
  for (double n = 4; n <= 64; n *= 2) {
    x *= 1.05;
    p99 *= 1.9;
    points.push_back({n, x, p99});
  }
  const KneeVerdict v = find_knee(points);
  ASSERT_TRUE(v.index.has_value()) << v.summary;
  EXPECT_EQ(*v.index, 1u);  // 64 is 1.28x of 2, but only 5 % per doubling
  EXPECT_FALSE(v.noisy_index.has_value());
}

// A plateau that holds (the next levels within 10 % per doubling) stays the knee.
TEST(FindKnee, APlateauWithinTheMarginHolds) {
  const std::vector<LevelPoint> points = {
      {1, 100, 1 * kMs}, {2, 200, 1 * kMs}, {4, 205, 2 * kMs}, {8, 215, 4 * kMs}};
  const KneeVerdict v = find_knee(points);
  ASSERT_TRUE(v.index.has_value());
  EXPECT_EQ(*v.index, 1u);  // 215 < 1.1 * 200
  EXPECT_FALSE(v.noisy_index.has_value());
}

// ---- the open loop's knee

// Regression (issue 11): a rate sweep whose p99 grew 149x while the server fell behind had no
// knee: throughput still rose 23% per doubling of the rate.
TEST(FindRateKnee, TheLastRateBeforeTheServerFellBehindIsTheKnee) {
  const std::vector<LevelPoint> points = {{500, 500, 1.2 * kMs},
                                          {1000, 1000, 1.3 * kMs},
                                          {2000, 1990, 1.2 * kMs},
                                          {4000, 2450, 178.8 * kMs}};
  EXPECT_FALSE(find_knee(points, 0.10, 1.5, "rate").index.has_value());
  const KneeVerdict v = find_rate_knee(points);
  ASSERT_TRUE(v.index.has_value());
  EXPECT_EQ(*v.index, 2u);
  EXPECT_EQ(v.overloaded_index, 3u);
  EXPECT_EQ(v.summary,
            "knee at rate 2000: at rate 4000 the server completed 2450 req/s (61% of the offered "
            "rate) while p99 grew 149.0x (1.20 -> 178.80 ms)");
}

TEST(FindRateKnee, AServerThatKeepsUpHasNoRateKnee) {
  const std::vector<LevelPoint> points = {
      {500, 500, 1.2 * kMs}, {1000, 999, 1.3 * kMs}, {2000, 1995, 4 * kMs}};
  EXPECT_FALSE(find_rate_knee(points).index.has_value());
  // Behind its rate but with latency in check (a client-side shortfall): not the server's knee.
  const std::vector<LevelPoint> short_of_rate = {{500, 500, 1.2 * kMs}, {1000, 700, 1.3 * kMs}};
  EXPECT_FALSE(find_rate_knee(short_of_rate).index.has_value());
}

}  // namespace
}  // namespace knee::analysis
