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
