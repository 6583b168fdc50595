#include "core/run_stats.h"

#include <gtest/gtest.h>

namespace knee::core {
namespace {

void record_some(RunStats& s, int64_t base, int n) {
  for (int i = 0; i < n; ++i) {
    ++s.sent;
    ++s.completed;
    s.count_status(200);
    s.latency_ns.record(base + i * 1000);
  }
  ++s.sent;
  s.count_error(ErrorKind::kTimeout, "");
  s.count_error(ErrorKind::kConnect, "ECONNREFUSED");
  ++s.reconnects;
  s.client_cpu_ns += 5;
  s.client_wall_ns = std::max<int64_t>(s.client_wall_ns, base);
}

TEST(RunStats, MergeEqualsRecordingBoth) {
  RunStats a, b, both;
  record_some(a, 1'000'000, 50);
  record_some(both, 1'000'000, 50);
  record_some(b, 7'000'000, 30);
  record_some(both, 7'000'000, 30);
  a.merge(b);
  EXPECT_EQ(a.latency_ns, both.latency_ns);
  EXPECT_EQ(a.sent, both.sent);
  EXPECT_EQ(a.completed, both.completed);
  EXPECT_EQ(a.errors, both.errors);
  EXPECT_EQ(a.status, both.status);
  EXPECT_EQ(a.causes, both.causes);
  EXPECT_EQ(a.reconnects, both.reconnects);
  EXPECT_EQ(a.client_cpu_ns, both.client_cpu_ns);
  EXPECT_EQ(a.client_wall_ns, both.client_wall_ns);
}

// Each worker thread's shares are its own: the run keeps the busiest thread's, over the phase and
// over its busiest second alike (max, not sum).
TEST(RunStats, MergeKeepsTheBusiestThreadsShares) {
  RunStats a, b;
  a.max_thread_cpu_demand = 0.4;
  a.max_thread_cpu_demand_1s = 0.95;
  a.max_pool_full_share_1s = 0.2;
  b.max_thread_cpu_demand = 0.6;
  b.max_thread_cpu_demand_1s = 0.7;
  b.max_pool_full_share_1s = 0.8;
  a.merge(b);
  EXPECT_EQ(a.max_thread_cpu_demand, 0.6);
  EXPECT_EQ(a.max_thread_cpu_demand_1s, 0.95);
  EXPECT_EQ(a.max_pool_full_share_1s, 0.8);  // the busiest worker's pool
}

TEST(RunStats, ConnectAndStatusErrorsAreNotRequestFailures) {
  RunStats s;
  s.count_error(ErrorKind::kConnect, "ECONNREFUSED");
  s.count_error(ErrorKind::kStatus, "503");
  s.count_error(ErrorKind::kTimeout, "");
  s.count_error(ErrorKind::kEofMidBody, "EOF");
  EXPECT_EQ(s.request_failures(), 2u);
  EXPECT_EQ(s.total_errors(), 4u);
  EXPECT_EQ(s.causes.at("connect: ECONNREFUSED"), 1u);
  EXPECT_EQ(s.causes.at("timeout"), 1u);
}

// A server that cuts each body at a new length makes a new cause every time; the causes stay
// bounded, and every failure is still counted under its kind.
TEST(RunStats, CausesStayBoundedWhateverTheServerDoes) {
  RunStats a, b;
  for (int i = 0; i < 1000; ++i) {
    a.count_error(ErrorKind::kEofMidBody, "received " + std::to_string(i) + " of 5000 bytes");
    b.count_error(ErrorKind::kEofMidBody,
                  "received " + std::to_string(i + 1000) + " of 5000 bytes");
  }
  EXPECT_LE(a.causes.size(), RunStats::kMaxCauses + 1);
  a.merge(b);
  EXPECT_LE(a.causes.size(), RunStats::kMaxCauses + 1);
  EXPECT_EQ(a.error_count(ErrorKind::kEofMidBody), 2000u);
  uint64_t counted = 0;
  for (const auto& [cause, n] : a.causes) counted += n;
  EXPECT_EQ(counted, 2000u);
  EXPECT_GT(a.causes.at("eof_mid_body: other causes"), 0u);
  EXPECT_EQ(a.causes.at("eof_mid_body: received 0 of 5000 bytes"), 1u);
}

TEST(RunResult, LittlesLawFromThroughputAndMeanLatency) {
  RunResult r;
  r.duration_s = 2.0;
  r.connections = 4;
  for (int i = 0; i < 2000; ++i) {  // 1000 req/s at 4 ms each: N = 4
    ++r.stats.completed;
    r.stats.latency_ns.record(4'000'000);
  }
  EXPECT_DOUBLE_EQ(r.throughput_rps(), 1000.0);
  EXPECT_NEAR(r.littles_n(), 4.0, 4.0 * 1e-3);
}

}  // namespace
}  // namespace knee::core

namespace knee::core {
namespace {

RunResult part_run(int64_t base, int n, double start_epoch_s, int connections) {
  RunResult r;
  record_some(r.stats, base, n);
  r.stats.ok_completed_in_phase = static_cast<uint64_t>(n);
  r.connections = connections;
  r.threads = 1;
  r.duration_s = 2.0;
  r.measure_start_epoch_s = start_epoch_s;
  for (int s = 0; s < 2; ++s) {
    LatencyInterval in;
    in.start_s = s;
    in.length_s = 1;
    in.count = n / 2;
    in.p50_ns = base;
    in.p99_ns = base + 1000 * n;
    in.max_ns = base + 1000 * n;
    r.intervals.push_back(in);
  }
  return r;
}

TEST(MergeParts, EqualsRecordingEverySampleIntoOneRun) {
  const RunResult a = part_run(1'000'000, 50, 1000.0, 3);
  const RunResult b = part_run(9'000'000, 30, 1000.0, 2);
  RunStats both;
  record_some(both, 1'000'000, 50);
  record_some(both, 9'000'000, 30);
  const RunResult m = merge_parts({a, b});
  EXPECT_EQ(m.stats.latency_ns, both.latency_ns);
  EXPECT_EQ(m.stats.latency_ns.count(), 80);
  EXPECT_EQ(m.stats.sent, a.stats.sent + b.stats.sent);
  EXPECT_EQ(m.stats.errors, both.errors);
  EXPECT_EQ(m.connections, 5);
  EXPECT_EQ(m.threads, 2);
  EXPECT_DOUBLE_EQ(m.duration_s, 2.0);
  EXPECT_DOUBLE_EQ(m.throughput_rps(), 40.0);  // 80 ok over the 2 s both covered
  ASSERT_EQ(m.intervals.size(), 2u);
  EXPECT_EQ(m.intervals[0].count, 25 + 15);
  EXPECT_EQ(m.intervals[1].max_ns, 9'000'000 + 30'000);
}

TEST(MergeParts, SkewedStartsWidenThePhaseAndAlignIntervalsByWallClock) {
  const RunResult a = part_run(1'000'000, 40, 1000.0, 1);
  const RunResult b = part_run(1'000'000, 40, 1001.0, 1);  // began a second later
  const RunResult m = merge_parts({a, b});
  EXPECT_DOUBLE_EQ(m.measure_start_epoch_s, 1000.0);
  EXPECT_DOUBLE_EQ(m.duration_s, 3.0);  // 1000 .. 1003
  ASSERT_EQ(m.intervals.size(), 3u);
  EXPECT_EQ(m.intervals[0].count, 20);  // a's first second only
  EXPECT_EQ(m.intervals[1].count, 40);  // a's second and b's first
  EXPECT_EQ(m.intervals[2].count, 20);
  EXPECT_DOUBLE_EQ(m.intervals[2].start_s, 2.0);
}

TEST(MergeParts, OnePartIsItself) {
  const RunResult a = part_run(1'000'000, 10, 5.0, 4);
  const RunResult m = merge_parts({a});
  EXPECT_EQ(m.stats.latency_ns, a.stats.latency_ns);
  EXPECT_EQ(m.connections, 4);
}

}  // namespace
}  // namespace knee::core
