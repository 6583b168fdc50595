#include "engine/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace knee::engine
