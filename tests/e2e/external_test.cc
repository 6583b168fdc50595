// knee sweep --exec with the real tools on this host (issue 15): fio on a small file, pgbench
// against a PostgreSQL and redis-benchmark against a redis-server that the tests start on
// loopback ports; and the bad inputs, each with its exit code and the level measured before.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/postgres.h"
#include "support/redis_server.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A short random-read job on `file`: {N} is the queue depth.
std::string fio_command(const std::string& file, const std::string& extra = "") {
  return "fio --name=randread --filename=" + file +
         " --size=16M --rw=randread --bs=4k --ioengine=libaio --iodepth={N} --runtime=1 "
         "--time_based --output-format=json " +
         extra;
}

TEST(ExternalSweep, FioQueueDepthsWithTheDeviceNamedAndTheTextReRendered) {
  testing::TempDir dir("knee-fio");
  const std::string json_path = dir.file("fio.json");
  auto r = testing::run_process(
      {KNEE_BINARY, "sweep", "--quiet", "--exec", fio_command(dir.file("f.dat"), "--direct=1"),
       "--levels", "1,8", "--json", json_path},
      std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("fio sweep of `fio --name=randread"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("iodepth"), std::string::npos);
  const json doc = json::parse(read_file(json_path));
  EXPECT_EQ(doc["kind"], "external_sweep");
  EXPECT_EQ(doc["unit"], "IOPS");
  ASSERT_EQ(doc["levels"].size(), 2u);
  for (const json& l : doc["levels"]) {
    EXPECT_GT(l["total"]["throughput"].get<double>(), 0);
    EXPECT_EQ(l["total"]["in_flight"], l["level"]);
    EXPECT_TRUE(l["little"]["holds"].get<bool>()) << l.dump();  // iodepth = IOPS x mean lat
    EXPECT_FALSE(l["saturated"]["resource"].get<std::string>().empty());
  }
  EXPECT_EQ(doc["files"][0], dir.file("f.dat"));
  // /tmp on a block device here names it; on a tmpfs /tmp direct I/O would have failed above.
  EXPECT_TRUE(doc.contains("device")) << doc.dump();
  // The saved result prints what the sweep printed.
  auto again = testing::run_process({KNEE_BINARY, "report", json_path});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
}

TEST(ExternalSweep, FilesInMemoryChangeTheVerdict) {
  testing::TempDir dir("knee-fio-mem");
  const std::string file = "/dev/shm/knee-fio-" + std::to_string(getpid()) + ".dat";
  auto r = testing::run_process({KNEE_BINARY, "sweep", "--quiet", "--json", "-", "--exec",
                                 fio_command(file), "--levels", "1,4"},
                                std::chrono::seconds(120));
  std::remove(file.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_FALSE(doc.contains("device")) << doc.dump();
  EXPECT_EQ(doc["fs_type"], "tmpfs");
  for (const json& l : doc["levels"]) EXPECT_NE(l["saturated"]["resource"], "disk");
  bool said = false;
  for (const json& w : doc["warnings"]) {
    said = said || w.get<std::string>().find("in memory") != std::string::npos;
  }
  EXPECT_TRUE(said) << doc["warnings"].dump();
}

TEST(ExternalSweep, PgbenchClientsAgainstALocalPostgres) {
  std::string error;
  auto pg = testing::PostgresServer::start(error);
  ASSERT_NE(pg, nullptr) << error;
  auto init = testing::run_process({"/usr/bin/pgbench", "-i", "-s", "1", "-q", pg->url()});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  auto r = testing::run_process({KNEE_BINARY, "sweep", "--quiet", "--json", "-", "--exec",
                                 "pgbench -S -T 1 -j 1 -c {N} " + pg->url(), "--levels", "1,2,4"},
                                std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["adapter"], "pgbench");
  EXPECT_EQ(doc["unit"], "tps");
  ASSERT_EQ(doc["levels"].size(), 3u);
  for (const json& l : doc["levels"]) {
    EXPECT_EQ(l["total"]["in_flight"], l["level"]);  // "number of clients"
    EXPECT_GT(l["total"]["throughput"].get<double>(), 0);
    EXPECT_TRUE(l.contains("little")) << l.dump();
  }
  EXPECT_TRUE(doc.contains("usl") && (doc["usl"].is_object() || doc.contains("usl_error")));
  pg->stop();
}

TEST(ExternalSweep, RedisBenchmarkClientsAgainstALocalRedis) {
  std::string error;
  auto redis = testing::RedisServer::start(error);
  ASSERT_NE(redis, nullptr) << error;
  const std::string port = std::to_string(redis->port());
  auto r = testing::run_process(
      {KNEE_BINARY, "sweep", "--quiet", "--json", "-", "--exec",
       "redis-benchmark -h 127.0.0.1 -p " + port + " -n 5000 -t get -c {N} --csv", "--levels",
       "1,4,16", "--repeat", "2"},
      std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["adapter"], "redis-benchmark");
  EXPECT_EQ(doc["unit"], "ops/s");
  ASSERT_EQ(doc["levels"].size(), 3u);
  EXPECT_EQ(doc["levels"][2]["total"]["in_flight"], 16);
  EXPECT_EQ(doc["levels"][0]["runs"].size(), 2u);
  redis->stop();
}

TEST(ExternalSweep, BadInputIsRefusedOrStopsWithTheLevelsMeasured) {
  // No {N}: nothing runs, exit 2.
  auto no_n = testing::run_process({KNEE_BINARY, "sweep", "--exec", "fio --iodepth=4"});
  EXPECT_EQ(no_n.exit_code, 2);
  EXPECT_NE(no_n.err.find("{N}"), std::string::npos) << no_n.err;
  // Regression: an empty --exec ran an HTTP sweep of the built-in server; --adapter alone too.
  auto empty = testing::run_process({KNEE_BINARY, "sweep", "--exec", "", "--levels", "1"});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("{N}"), std::string::npos) << empty.err;
  auto adapter_alone =
      testing::run_process({KNEE_BINARY, "sweep", "--adapter", "fio", "--levels", "1"});
  EXPECT_EQ(adapter_alone.exit_code, 2);
  EXPECT_NE(adapter_alone.err.find("only with --exec"), std::string::npos) << adapter_alone.err;
  // An HTTP flag with --exec: exit 2, naming it.
  auto http = testing::run_process({KNEE_BINARY, "sweep", "--exec", "echo {N}", "-d", "5s"});
  EXPECT_EQ(http.exit_code, 2);
  EXPECT_NE(http.err.find("--duration"), std::string::npos) << http.err;
  // A command that fails at level 4: levels 1 and 2 are kept and written, exit 1.
  testing::TempDir dir("knee-exec");
  auto failing = testing::run_process(
      {KNEE_BINARY, "sweep", "--quiet", "--json", dir.file("partial.json"), "--exec",
       "if [ {N} -lt 4 ]; then echo '{\"throughput\": {N}0}'; else echo 'no space left' >&2; "
       "exit 5; fi",
       "--levels", "1,2,4,8"});
  EXPECT_EQ(failing.exit_code, 1) << failing.err;
  EXPECT_NE(failing.err.find("level 4"), std::string::npos) << failing.err;
  EXPECT_NE(failing.err.find("exited with status 5"), std::string::npos) << failing.err;
  EXPECT_NE(failing.err.find("no space left"), std::string::npos) << failing.err;
  const json partial = json::parse(read_file(dir.file("partial.json")));
  EXPECT_EQ(partial["levels"].size(), 2u);
  EXPECT_NE(partial["failed"].get<std::string>().find("level 4"), std::string::npos);
  // Output no adapter can read, at the first level: nothing measured, exit 1.
  auto unparsable = testing::run_process({KNEE_BINARY, "sweep", "--exec", "echo hello {N}"});
  EXPECT_EQ(unparsable.exit_code, 1);
  EXPECT_NE(unparsable.err.find("json output"), std::string::npos) << unparsable.err;
  // A hang past --timeout: stopped, named.
  auto hang = testing::run_process(
      {KNEE_BINARY, "sweep", "--exec", "sleep 60; echo {N}", "--timeout", "500ms"},
      std::chrono::seconds(30));
  EXPECT_EQ(hang.exit_code, 1);
  EXPECT_NE(hang.err.find("ran past the timeout"), std::string::npos) << hang.err;
}

TEST(ExternalSweep, AClosedTerminalStopsTheCommand) {
  // Regression: SIGHUP ended knee (129) and left the benchmark running to its end.
  const auto before = std::chrono::steady_clock::now();
  auto r =
      testing::run_process({"/usr/bin/timeout", "--preserve-status", "-s", "HUP", "2", KNEE_BINARY,
                            "sweep", "--exec", "sleep 30; echo {N}", "--levels", "1"},
                           std::chrono::seconds(40));
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
}

}  // namespace
}  // namespace knee
