#include "engine/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace knee::engine {
namespace {

std::vector<int64_t> take(ArrivalSchedule s, int n) {
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(s.next_ns());
    s.advance();
  }
  return out;
}

TEST(ArrivalSchedule, UniformSpacingIsOneOverRate) {
  EXPECT_EQ(take(ArrivalSchedule(Arrival::kUniform, 1000, 1, 0, 1), 4),
            (std::vector<int64_t>{0, 1'000'000, 2'000'000, 3'000'000}));
}

TEST(ArrivalSchedule, ThreadsShareOneGlobalSequence) {
  for (Arrival a : {Arrival::kUniform, Arrival::kPoisson}) {
    std::vector<int64_t> global = take(ArrivalSchedule(a, 2500, 42, 0, 1), 300);
    std::vector<int64_t> merged;
    for (int t = 0; t < 3; ++t) {
      std::vector<int64_t> part = take(ArrivalSchedule(a, 2500, 42, t, 3), 100);
      merged.insert(merged.end(), part.begin(), part.end());
    }
    std::sort(merged.begin(), merged.end());
    EXPECT_EQ(merged, global);
  }
}

TEST(ArrivalSchedule, PoissonIsSeededWithTheRightMeanGap) {
  std::vector<int64_t> a = take(ArrivalSchedule(Arrival::kPoisson, 1000, 7, 0, 1), 100'000);
  EXPECT_EQ(a, take(ArrivalSchedule(Arrival::kPoisson, 1000, 7, 0, 1), 100'000));
  EXPECT_NE(a, take(ArrivalSchedule(Arrival::kPoisson, 1000, 8, 0, 1), 100'000));
  double mean_gap = static_cast<double>(a.back()) / static_cast<double>(a.size());
  EXPECT_NEAR(mean_gap, 1e6, 1e6 * 0.02);  // 100k exponential gaps: sd of the mean 0.3 %
}

using namespace std::chrono_literals;

// Arrivals of a profile up to its end (a schedule ends with kNever).
std::vector<int64_t> all_of(ArrivalSchedule s) {
  std::vector<int64_t> out;
  while (s.next_ns() != ArrivalSchedule::kNever) {
    out.push_back(s.next_ns());
    s.advance();
  }
  return out;
}

TEST(RateProfile, RampsLinearlyFromStageToStage) {
  const RateProfile p({{10s, 100}, {20s, 500}, {10s, 0}});
  EXPECT_EQ(p.total(), 40s);
  EXPECT_EQ(p.peak_rps(), 500);
  EXPECT_DOUBLE_EQ(p.rate_at(5e9), 50);
  EXPECT_DOUBLE_EQ(p.rate_at(20e9), 300);
  EXPECT_DOUBLE_EQ(p.rate_at(35e9), 250);
  EXPECT_EQ(p.rate_at(41e9), 0);
  // Areas under the ramps: 0.5 * 10 * 100, then (100 + 500) / 2 * 20, then 0.5 * 10 * 500.
  EXPECT_NEAR(p.arrivals_until(10e9), 500, 1e-6);
  EXPECT_NEAR(p.arrivals_until(30e9), 6500, 1e-6);
  EXPECT_NEAR(p.arrivals_until(40e9), 9000, 1e-6);
  EXPECT_NEAR(p.arrivals_until(1e12), 9000, 1e-6);
  size_t hint = 0;
  for (double u : {0.0, 1.0, 499.0, 500.0, 3000.0, 6500.0, 8999.0}) {
    const std::optional<double> t = p.time_of(u, hint);
    ASSERT_TRUE(t) << u;
    EXPECT_NEAR(p.arrivals_until(*t), u, 1e-6) << "time_of inverts arrivals_until at " << u;
  }
  EXPECT_FALSE(p.time_of(9000.5, hint)) << "no arrival past the last stage";
}

TEST(RateProfile, AZeroLengthStageJumpsAndAFlatZeroStageSendsNothing) {
  const RateProfile p({{0s, 200}, {1s, 200}, {1s, 0}, {1s, 0}, {1s, 100}});
  EXPECT_DOUBLE_EQ(p.rate_at(0.5e9), 200);
  EXPECT_NEAR(p.arrivals_until(1e9), 200, 1e-6);
  EXPECT_NEAR(p.arrivals_until(3e9), 300, 1e-6);
  const std::vector<int64_t> a = all_of(ArrivalSchedule(Arrival::kUniform, p, 1, 0, 1));
  EXPECT_EQ(a.size(), 350u);  // 200 + 100 + 0 + 50, the first at 0
  for (int64_t t : a) {
    EXPECT_FALSE(t > 2'000'000'000 && t < 3'000'000'000)
        << "an arrival in the silent stage at " << t;
  }
}

TEST(ArrivalSchedule, StagesOfOneConstantRateAreTheConstantSchedule) {
  const RateProfile p({{0s, 1000}, {1s, 1000}});
  std::vector<int64_t> staged = all_of(ArrivalSchedule(Arrival::kUniform, p, 1, 0, 1));
  ASSERT_EQ(staged.size(), 1000u);
  EXPECT_EQ(staged, take(ArrivalSchedule(Arrival::kUniform, 1000, 1, 0, 1), 1000));
}

TEST(ArrivalSchedule, StagedArrivalsFollowTheRampOnEveryThread) {
  const RateProfile p({{2s, 1000}, {2s, 0}});
  for (Arrival a : {Arrival::kUniform, Arrival::kPoisson}) {
    std::vector<int64_t> global = all_of(ArrivalSchedule(a, p, 3, 0, 1));
    std::vector<int64_t> merged;
    for (int t = 0; t < 3; ++t) {
      std::vector<int64_t> part = all_of(ArrivalSchedule(a, p, 3, t, 3));
      merged.insert(merged.end(), part.begin(), part.end());
    }
    std::sort(merged.begin(), merged.end());
    EXPECT_EQ(merged, global);
    // The half second at the top of the ramp, 750 to 1000 req/s, holds 875 * 0.5 arrivals.
    const auto in = std::count_if(global.begin(), global.end(), [](int64_t t) {
      return t >= 1'500'000'000 && t < 2'000'000'000;
    });
    EXPECT_NEAR(static_cast<double>(in), 437.5, a == Arrival::kUniform ? 1.0 : 70.0);
    EXPECT_NEAR(static_cast<double>(global.size()), 2000, a == Arrival::kUniform ? 1.0 : 150.0);
  }
}

TEST(Stages, ParsesDurationsAndRates) {
  auto s = parse_stages("30s:100,1m:500,0:50,30s:0");
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(*s, (std::vector<Stage>{{30s, 100}, {60s, 500}, {0s, 50}, {30s, 0}}));
}

TEST(Stages, BadTextsNameTheStageAndTheForm) {
  for (const auto& [text, words] : std::vector<std::pair<std::string, std::string>>{
           {"30s", "'30s' is not DURATION:RATE"},
           {"30s:-1", "the rate '-1' is not from 0 to 1e6"},
           {"30s:2e6", "the rate '2e6'"},
           {"30s:abc", "the rate 'abc'"},
           {"x:100", "in 'x:100'"},
           {"10s:0,5s:0", "no stage has a rate above 0"},
           {"0:100", "the stages last no time"},
           {"10s:100,", "'' is not DURATION:RATE"}}) {
    auto s = parse_stages(text);
    ASSERT_FALSE(s) << text;
    EXPECT_EQ(s.status().field(), "stages");
    EXPECT_NE(s.status().message().find(words), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().find("DURATION:RATE"), std::string::npos);
  }
}

}  // namespace
}  // namespace knee::engine
