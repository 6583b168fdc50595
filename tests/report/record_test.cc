// The run record (report/record.h): every figure of a core::RunResult survives JSON, so that
// results written by separate processes can be merged exactly.
#include "report/record.h"

#include <gtest/gtest.h>

#include "support/report_fixtures.h"

namespace knee::report {
namespace {

// A run with every part of RunResult filled, unknown host figures included.
core::RunResult full_run() {
  core::RunResult r = testing::synthetic_closed_run(8, 2000, 4.0, 2, 85.0);
  core::RunStats& s = r.stats;
  s.service_time_ns.record(3'456'789);
  s.send_lag_ns.record(12'345);
  s.loop_lag_ns.record(67'891);
  s.latency_ns.record(int64_t{5'000'000'000'000});  // above 1 h: clamped
  s.count_error(core::ErrorKind::kEofMidBody, "received 3 of 100 bytes");
  s.count_status(503);
  s.connects.opened = 9;
  s.connects.tcp_ns.record(45'000);
  s.connects.tls_version = "TLSv1.3";
  s.connects.h2_goaway_error = "NO_ERROR";
  s.warmup.sent = 77;
  s.warmup.errors[static_cast<size_t>(core::ErrorKind::kTimeout)] = 1;
  s.in_system_ns = 1.5e10;
  s.late_with_connection_free = 6;  // regression: left out of the record
  s.unsolicited_bytes = 12;
  s.unsolicited_closes = 3;
  s.max_thread_cpu_demand = 0.5;
  s.max_thread_cpu_demand_1s = 0.96;
  s.max_pool_full_share_1s = 0.75;
  s.last_ok_ns = 1'999'000'000;
  core::EndpointStats e;
  e.name = "GET /a";
  e.share = 0.25;
  e.sent = 5;
  e.completed = 5;
  e.status[200] = 5;
  e.latency_ns.record(1'000'000);
  s.endpoints.push_back(e);
  r.use->cpu_busy_pct.push_back(core::kUnknown);  // an offline CPU
  r.use->cpu_busy_max_pct.push_back(core::kUnknown);
  r.use->server->requests = core::kUnknown;
  r.use->server->busiest_thread_cpu_max_pct = 97.5;
  core::DiskUse d;
  d.device = "vda";
  d.read_await_ms = core::kUnknown;
  r.use->disks.push_back(d);
  core::LatencyInterval in;
  in.start_s = 0;
  in.length_s = 1;
  in.count = 4000;
  in.p99_ns = 9'000'000;
  r.intervals.push_back(in);
  r.measure_start_epoch_s = 1'796'212'800.125;
  r.requests_asked = 0;
  return r;
}

TEST(RunRecord, EveryFigureSurvivesJson) {
  RunRecord r{full_run(), "loadgen-2", 1, 3};
  auto back = decode_record(encode_record(r));
  ASSERT_TRUE(back) << back.status().what();
  EXPECT_EQ(*back, r);
  const core::RunResult& b = back->result;
  EXPECT_EQ(b.stats.latency_ns, r.result.stats.latency_ns);  // counts, min, max, clamped
  EXPECT_EQ(b.stats.latency_ns.clamped_count(), 1);
  EXPECT_EQ(b.stats.errors, r.result.stats.errors);
  EXPECT_EQ(b.stats.status, r.result.stats.status);
  EXPECT_EQ(b.stats.causes, r.result.stats.causes);
  EXPECT_EQ(b.stats.connects.tcp_ns, r.result.stats.connects.tcp_ns);
  EXPECT_EQ(b.stats.endpoints.at(0).status.at(200), 5u);
  EXPECT_TRUE(std::isnan(b.use->cpu_busy_pct.back()));
  EXPECT_TRUE(std::isnan(b.use->disks.at(0).read_await_ms));
  EXPECT_DOUBLE_EQ(b.throughput_rps(), r.result.throughput_rps());
  EXPECT_DOUBLE_EQ(b.measure_start_epoch_s, r.result.measure_start_epoch_s);
  EXPECT_EQ(b.stats.late_with_connection_free, 6u);
  EXPECT_EQ(b.stats.unsolicited_bytes, 12u);
  EXPECT_EQ(b.stats.unsolicited_closes, 3u);
  EXPECT_DOUBLE_EQ(b.stats.max_thread_cpu_demand_1s, 0.96);
  EXPECT_DOUBLE_EQ(b.stats.max_pool_full_share_1s, 0.75);
  EXPECT_DOUBLE_EQ(b.use->server->busiest_thread_cpu_max_pct, 97.5);
  // A record from before the figure existed reads it as unknown.
  nlohmann::json old = to_json_value(r);
  old["result"]["use"]["server"].erase("busiest_thread_cpu_max_pct");
  auto before = decode_record(old.dump());
  ASSERT_TRUE(before) << before.status().what();
  EXPECT_TRUE(std::isnan(before->result.use->server->busiest_thread_cpu_max_pct));
  old["result"]["stats"].erase("max_pool_full_share_1s");
  auto unsampled = decode_record(old.dump());
  ASSERT_TRUE(unsampled) << unsampled.status().what();
  EXPECT_EQ(unsampled->result.stats.max_pool_full_share_1s, 0.0);
  EXPECT_EQ(back->host, "loadgen-2");
  EXPECT_EQ(back->part, 1);
  EXPECT_EQ(back->parts, 3);
}

TEST(RunRecord, BadRecordsAreRefusedWithWhere) {
  EXPECT_FALSE(decode_record("not json"));
  RunRecord r{full_run(), "h", 0, 1};
  nlohmann::json j = to_json_value(r);
  j["result"]["stats"]["latency_ns"]["hdr"] = "!!!!";
  auto bad = decode_record(j.dump());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("latency_ns"), std::string::npos) << bad.status().what();
  j = to_json_value(r);
  j["result"]["stats"]["latency_ns"]["max"] = 1;  // below its highest bucket
  EXPECT_FALSE(decode_record(j.dump()));
  j = to_json_value(r);
  j["part"] = 3;  // of 1
  EXPECT_FALSE(decode_record(j.dump()));
  j = to_json_value(r);
  j["result"].erase("connections");
  auto missing = decode_record(j.dump());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("connections is missing"), std::string::npos);
}

}  // namespace
}  // namespace knee::report
