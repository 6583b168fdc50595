// External benchmarks (engine/external.h): the adapters on saved outputs of each tool, the
// command runner's failures, and a sweep that keeps the levels measured before one failed.
#include "engine/external.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sstream>

namespace knee::engine {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(KNEE_ENGINE_FIXTURES) + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ExternalAdapter, NamedByTheCommandsFirstWord) {
  EXPECT_EQ(adapter_for("fio --name=x --iodepth={N}"), Adapter::kFio);
  EXPECT_EQ(adapter_for("/usr/bin/pgbench -c {N}"), Adapter::kPgbench);
  EXPECT_EQ(adapter_for("  redis-benchmark -c {N} --csv"), Adapter::kRedisBenchmark);
  EXPECT_EQ(adapter_for("./my-bench {N}"), Adapter::kJson);
  EXPECT_EQ(adapter_named("redis-benchmark"), Adapter::kRedisBenchmark);
  EXPECT_FALSE(adapter_named("wrk").has_value());
}

TEST(ExternalAdapter, FioJsonOfOneJob) {
  auto m = parse_fio_json(fixture("fio_randread_qd4.json"));
  ASSERT_TRUE(m.has_value()) << m.status().message();
  EXPECT_EQ(m->unit, "IOPS");
  EXPECT_DOUBLE_EQ(m->total.throughput, 25170.829171);
  EXPECT_DOUBLE_EQ(m->total.bandwidth_bytes_per_s, 103099716);
  EXPECT_DOUBLE_EQ(m->total.latency_mean_ns, 157755.689673);  // lat_ns: submission to completion
  EXPECT_DOUBLE_EQ(m->total.latency_p99_ns, 252928);
  EXPECT_DOUBLE_EQ(m->total.latency_p999_ns, 4079616);
  EXPECT_DOUBLE_EQ(m->total.in_flight, 4);  // libaio, iodepth 4, one job
  EXPECT_NEAR(m->total.cpu_pct, 5.5 + 43.7, 1e-9);
  EXPECT_EQ(m->files, std::vector<std::string>{"/work/fio_probe.dat"});
  EXPECT_TRUE(m->jobs.empty());
  EXPECT_TRUE(m->notes.empty());
}

TEST(ExternalAdapter, FioJobsAddUpAndASynchronousEngineKeepsOneInFlightEach) {
  // Two psync jobs of iodepth 8, mixed reads and writes; fio's notes precede the JSON.
  auto m = parse_fio_json(fixture("fio_psync_2jobs.json"));
  ASSERT_TRUE(m.has_value()) << m.status().message();
  ASSERT_EQ(m->jobs.size(), 2u);
  EXPECT_NEAR(m->total.throughput, 12039.138943 + 12008.806262 + 11931.506849 + 12116.438356, 1e-6);
  EXPECT_DOUBLE_EQ(m->total.in_flight, 2);
  EXPECT_EQ(m->threads, 2);
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_NE(m->notes[0].find("synchronous"), std::string::npos);
}

TEST(ExternalAdapter, FioPercentilesOfTheWholeLatencyWhenFioHasThem) {
  // --lat_percentiles=1: lat_ns carries percentiles; they, not clat's, go with lat_ns's mean.
  const std::string out = R"({"jobs": [{"jobname": "j", "job options": {"iodepth": "2",
      "ioengine": "libaio"}, "read": {"iops": 100, "total_ios": 100, "bw_bytes": 409600,
      "runtime": 1000, "lat_ns": {"mean": 20000, "max": 90000, "percentile": {"99.000000": 80000}},
      "clat_ns": {"mean": 15000, "percentile": {"99.000000": 60000}}}, "usr_cpu": 1, "sys_cpu": 2}]})";
  auto m = parse_fio_json(out);
  ASSERT_TRUE(m.has_value()) << m.status().message();
  EXPECT_DOUBLE_EQ(m->total.latency_mean_ns, 20000);
  EXPECT_DOUBLE_EQ(m->total.latency_p99_ns, 80000);
  EXPECT_DOUBLE_EQ(m->total.in_flight, 2);
}

TEST(ExternalAdapter, FioWithoutJsonSaysHowToAskForIt) {
  auto m = parse_fio_json("randread: (g=0): rw=randread\n  read: IOPS=25.2k\n");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.status().message().find("--output-format=json"), std::string::npos);
}

TEST(ExternalAdapter, PgbenchSummary) {
  auto m = parse_pgbench(fixture("pgbench_select_c4.txt"));
  ASSERT_TRUE(m.has_value()) << m.status().message();
  EXPECT_EQ(m->unit, "tps");
  EXPECT_DOUBLE_EQ(m->total.throughput, 17408.728216);
  EXPECT_DOUBLE_EQ(m->total.latency_mean_ns, 0.230e6);
  EXPECT_DOUBLE_EQ(m->total.in_flight, 4);
  EXPECT_EQ(m->threads, 2);
  EXPECT_EQ(m->total.errors, 0u);
  EXPECT_FALSE(parse_pgbench("pgbench: error: connection refused\n").has_value());
}

TEST(ExternalAdapter, RedisBenchmarkCsvCombinesTestsRunOneAfterAnother) {
  auto m = parse_redis_benchmark_csv(fixture("redis_benchmark_get_set.csv"),
                                     "redis-benchmark -p 6379 -c 8 -n 20000 -t get,set --csv");
  ASSERT_TRUE(m.has_value()) << m.status().message();
  EXPECT_EQ(m->unit, "ops/s");
  ASSERT_EQ(m->jobs.size(), 2u);
  EXPECT_EQ(m->jobs[0].name, "SET");
  EXPECT_DOUBLE_EQ(m->jobs[1].throughput, 37105.75);
  EXPECT_NEAR(m->total.throughput, 2 / (1 / 41493.78 + 1 / 37105.75), 1e-6);
  EXPECT_DOUBLE_EQ(m->total.in_flight, 8);  // -c 8, no pipeline
  EXPECT_DOUBLE_EQ(m->total.latency_p99_ns, 3.839e6);
  auto pipelined = parse_redis_benchmark_csv(fixture("redis_benchmark_get_set.csv"),
                                             "redis-benchmark -c8 -P 16 --csv");
  ASSERT_TRUE(pipelined.has_value());
  EXPECT_DOUBLE_EQ(pipelined->total.in_flight, 128);
  auto defaults =
      parse_redis_benchmark_csv(fixture("redis_benchmark_get_set.csv"), "redis-benchmark --csv");
  EXPECT_DOUBLE_EQ(defaults->total.in_flight, 50);  // redis-benchmark's default clients
  EXPECT_FALSE(parse_redis_benchmark_csv("GET: 29850.75 requests per second\n", "").has_value());
}

TEST(ExternalAdapter, JsonReadsTheLastObjectLine) {
  auto m = parse_json_line(
      "warming up\n{\"throughput\": 1}\n{\"throughput\": 250.5, \"unit\": \"msg/s\", "
      "\"latency_mean_ms\": 4, \"latency_p99_ms\": 9.5, \"concurrency\": 1, \"errors\": 2}\n\n");
  ASSERT_TRUE(m.has_value()) << m.status().message();
  EXPECT_EQ(m->unit, "msg/s");
  EXPECT_DOUBLE_EQ(m->total.throughput, 250.5);
  EXPECT_DOUBLE_EQ(m->total.latency_mean_ns, 4e6);
  EXPECT_DOUBLE_EQ(m->total.latency_p99_ns, 9.5e6);
  EXPECT_DOUBLE_EQ(m->total.in_flight, 1);
  EXPECT_EQ(m->total.errors, 2u);
  EXPECT_FALSE(parse_json_line("{\"ops\": 3}\n").has_value());
  // Impossible figures are the command's mistake, refused with the field named.
  EXPECT_FALSE(parse_json_line("{\"throughput\": -5}\n").has_value());
  auto negative = parse_json_line("{\"throughput\": 5, \"latency_mean_ms\": -1}\n");
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.status().message().find("latency_mean_ms"), std::string::npos);
  EXPECT_FALSE(parse_json_line("{\"throughput\": 5, \"concurrency\": 0}\n").has_value());
  EXPECT_FALSE(
      parse_json_line("{\"throughput\": 5, \"latency_p50_ms\": 9, \"latency_p99_ms\": 2}\n")
          .has_value());
  EXPECT_FALSE(parse_json_line("done\n").has_value());
}

TEST(ExternalCommand, TemplateNeedsN) {
  EXPECT_EQ(expand_level("fio --iodepth={N} --name=q{N}", 16), "fio --iodepth=16 --name=q16");
  EXPECT_TRUE(check_template("x {N}").is_ok());
  const core::Status s = check_template("fio --iodepth=4");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("{N}"), std::string::npos);
}

TEST(ExternalCommand, CollectsOutputExitAndStderrTail) {
  auto r = run_command("echo out; echo err >&2; exit 3", std::chrono::seconds(10), nullptr);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err_tail, "err\n");
  EXPECT_FALSE(r->timed_out);
}

TEST(ExternalCommand, AHangingCommandAndItsChildrenAreStoppedAtTheTimeout) {
  // The child sleeps in a subshell holding stdout: killing the shell alone would leave it.
  auto r = run_command("(sleep 30; echo late) & echo started; wait", std::chrono::milliseconds(300),
                       nullptr);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->out, "started\n");
  EXPECT_LT(r->wall_s, 10);
}

TEST(ExternalCommand, ADaemonHoldingStdoutIsNotWaitedFor) {
  // Regression: a command that started a daemon (setsid: out of its group) and exited at once
  // was held until the timeout and reported as having run past it.
  auto r =
      run_command("setsid sleep 5 & echo '{\"throughput\": 1}'", std::chrono::seconds(3), nullptr);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "{\"throughput\": 1}\n");
  EXPECT_LT(r->wall_s, 2.5);
}

TEST(ExternalCommand, InterruptStopsIt) {
  std::atomic<bool> interrupt{true};
  auto r = run_command("sleep 30", std::chrono::seconds(60), &interrupt);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->interrupted);
  EXPECT_FALSE(r->timed_out);
}

TEST(ExternalSweep, AFailingLevelStopsTheSweepAndKeepsTheLevelsBefore) {
  ExternalSweepSpec spec;
  // Levels below 8 print a result; 8 fails with a message on stderr.
  spec.command_template =
      "if [ {N} -lt 8 ]; then echo '{\"throughput\": {N}00}'; else echo 'disk full' >&2; exit 1; "
      "fi";
  spec.levels = {1, 2, 8, 16};
  spec.repeats = 2;
  spec.timeout = std::chrono::seconds(10);
  int done = 0;
  ExternalSweepControl control;
  control.on_run_done = [&](const core::ExternalRun&) { ++done; };
  const ExternalSweepResult r = run_external_sweep(spec, control);
  ASSERT_EQ(r.levels.size(), 2u);
  EXPECT_EQ(done, 4);
  EXPECT_EQ(r.levels[1][0].level, 2);
  EXPECT_DOUBLE_EQ(r.levels[1][1].measured.total.throughput, 200);
  ASSERT_FALSE(r.error.is_ok());
  const std::string& m = r.error.message();
  EXPECT_NE(m.find("level 8"), std::string::npos) << m;
  EXPECT_NE(m.find("exited with status 1"), std::string::npos) << m;
  EXPECT_NE(m.find("disk full"), std::string::npos) << m;
  EXPECT_NE(m.find("if [ 8 -lt 8 ]"), std::string::npos) << m;  // the command as run
}

TEST(ExternalSweep, UnparsableOutputNamesTheAdapterAndLevel) {
  ExternalSweepSpec spec;
  spec.command_template = "echo nothing here {N}";
  spec.levels = {3};
  const ExternalSweepResult r = run_external_sweep(spec, {});
  EXPECT_TRUE(r.levels.empty());
  ASSERT_FALSE(r.error.is_ok());
  EXPECT_NE(r.error.message().find("level 3"), std::string::npos);
  EXPECT_NE(r.error.message().find("json output"), std::string::npos);
}

}  // namespace
}  // namespace knee::engine
