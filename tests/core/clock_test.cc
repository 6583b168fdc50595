#include "core/clock.h"

#include <gtest/gtest.h>

namespace knee::core {
namespace {

using std::chrono::milliseconds;

ThreadCpuReading reading(int64_t cpu_ms, std::optional<int64_t> wait_ms, int64_t spin_ms) {
  return {milliseconds(cpu_ms),
          wait_ms ? std::optional<Nanos>(milliseconds(*wait_ms)) : std::nullopt,
          spin_ms * 1'000'000};
}

constexpr int64_t kSecondNs = 1'000'000'000;

TEST(ThreadCpuShares, WorkIsCpuLessSpinAndDemandAddsTheRunQueueWait) {
  // 600 ms of CPU, 200 ms of it spinning, 100 ms waiting for a CPU, over 1 s.
  const ThreadCpuShares s =
      thread_cpu_shares(reading(1000, 50, 300), reading(1600, 150, 500), kSecondNs);
  EXPECT_DOUBLE_EQ(s.share, 0.4);
  EXPECT_DOUBLE_EQ(s.demand, 0.5);
}

TEST(ThreadCpuShares, AnUnreadableRunQueueLeavesTheWaitOut) {
  // Regression: an unreadable /proc (no descriptor left) read as a wait of 0, so the next good
  // reading made one window's wait the thread's whole life's, and the client read as saturated.
  const ThreadCpuShares s =
      thread_cpu_shares(reading(0, std::nullopt, 0), reading(300, 90'000, 0), kSecondNs);
  EXPECT_DOUBLE_EQ(s.share, 0.3);
  EXPECT_DOUBLE_EQ(s.demand, 0.3);
  EXPECT_DOUBLE_EQ(
      thread_cpu_shares(reading(0, 90'000, 0), reading(300, std::nullopt, 0), kSecondNs).demand,
      0.3);
}

TEST(ThreadCpuShares, SharesStayWithinOneCoreAndNoneOverNoTime) {
  const ThreadCpuShares over = thread_cpu_shares(reading(0, 0, 0), reading(900, 400, 0), kSecondNs);
  EXPECT_DOUBLE_EQ(over.share, 0.9);
  EXPECT_DOUBLE_EQ(over.demand, 1.0);
  const ThreadCpuShares spun = thread_cpu_shares(reading(0, 0, 0), reading(100, 0, 200), kSecondNs);
  EXPECT_DOUBLE_EQ(spun.share, 0.0);  // more spin than CPU (a preempted spin): never negative
  const ThreadCpuShares none = thread_cpu_shares(reading(0, 0, 0), reading(100, 0, 0), 0);
  EXPECT_EQ(none.share, 0.0);
  EXPECT_EQ(none.demand, 0.0);
}

}  // namespace
}  // namespace knee::core
