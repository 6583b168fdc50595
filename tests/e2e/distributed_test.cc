// Load from several processes merged exactly: `mpirun -np K knee run|sweep` (rank 0 merges and
// reports), and separately started `knee run --part I/K --start-at T` merged by `knee report
// merge`. Every request the lab server answered is in the merged result; a rank that fails or
// dies fails the run and nothing is written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee {
namespace {

using nlohmann::json;

// mpirun as root on a 2-core machine: allowed as root, more ranks than cores, no leak report of
// OpenMPI's own allocations from the ASan build, and a bound on the whole job.
std::vector<std::string> mpirun(int ranks, std::vector<std::string> command) {
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "OMPI_ALLOW_RUN_AS_ROOT=1",
                                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                   "OMPI_MCA_rmaps_base_oversubscribe=1",
                                   "ASAN_OPTIONS=detect_leaks=0",
                                   "mpirun",
                                   "--timeout",
                                   "100",
                                   "-x",
                                   "ASAN_OPTIONS",
                                   "-np",
                                   std::to_string(ranks)};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

class Distributed : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::BackgroundProcess>(
        std::vector<std::string>{KNEE_BINARY, "serve", "--port", "0"});
    port_ = testing::port_of_listening_line(server_->first_line());
    ASSERT_GT(port_, 0) << server_->first_line();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  // The lab server's own count of the requests it answered (each /health read counts itself).
  uint64_t served() const {
    auto r =
        testing::run_process({"/usr/bin/curl", "-s", url("/health")}, std::chrono::seconds(10));
    return json::parse(r.out)["totalRequests"].get<uint64_t>();
  }
  // What a result sent, warm-up included.
  static uint64_t sent(const json& level) {
    return level["sent"].get<uint64_t>() + level["warmup"]["sent"].get<uint64_t>();
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::BackgroundProcess> server_;
  int port_ = -1;
};

TEST_F(Distributed, MpiRunMergesEveryRanksRequestsExactly) {
  const uint64_t before = served();
  const std::string all = dir_.path() + "/all.json";
  const std::string parts = dir_.path() + "/rank";
  auto r =
      testing::run_process(mpirun(2, {KNEE_BINARY, "run", url("/fast"), "-c", "5", "-d", "1s", "-w",
                                      "500ms", "--json", all, "--json-parts", parts, "-q"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const uint64_t after = served();
  const json m = read_json(all);
  // Every request the server answered is in the merged result, warm-up included.
  EXPECT_EQ(sent(m), after - before - 1);
  EXPECT_EQ(m["concurrency"], 5);
  ASSERT_EQ(m["parts"].size(), 2u);
  EXPECT_EQ(m["parts"][0]["connections"], 3);
  EXPECT_EQ(m["parts"][1]["connections"], 2);
  EXPECT_TRUE(m["parts"][1].contains("clock_offset_ms"));
  EXPECT_EQ(m["params"]["merged_from"], json({"rank 0", "rank 1"}));
  EXPECT_EQ(m["latency_ns"]["count"].get<uint64_t>(), m["ok"].get<uint64_t>());

  // The ranks' own files, merged by knee report merge, give the same result.
  auto merged = testing::run_process(
      {KNEE_BINARY, "report", "merge", parts + ".0.json", parts + ".1.json", "--json"});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const json again = json::parse(merged.out);
  EXPECT_EQ(again["latency_ns"], m["latency_ns"]);
  EXPECT_EQ(again["requests"], m["requests"]);
  EXPECT_EQ(again["ok"], m["ok"]);
  EXPECT_EQ(again["errors"], m["errors"]);
  EXPECT_NEAR(again["throughput_rps"].get<double>(), m["throughput_rps"].get<double>(),
              1e-3 * m["throughput_rps"].get<double>());
}

TEST_F(Distributed, OneRankIsTheWholeLoad) {
  const std::string all = dir_.path() + "/one.json";
  auto r = testing::run_process(mpirun(1, {KNEE_BINARY, "run", url("/fast"), "-c", "2", "-d",
                                           "500ms", "-w", "0s", "--json", all, "-q"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json m = read_json(all);
  EXPECT_EQ(m["concurrency"], 2);
  EXPECT_FALSE(m.contains("parts"));
}

TEST_F(Distributed, MpiSweepOfFourRanksSharesEveryLevel) {
  const std::string all = dir_.path() + "/sweep.json";
  auto r = testing::run_process(mpirun(4, {KNEE_BINARY, "sweep", url("/fast"), "--levels", "4,7",
                                           "-d", "1s", "-w", "300ms", "--json", all, "-q"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("merged from 4 parts"), std::string::npos) << r.out;
  const json m = read_json(all);
  ASSERT_EQ(m["levels"].size(), 2u);
  EXPECT_EQ(m["levels"][0]["concurrency"], 4);
  EXPECT_EQ(m["levels"][1]["concurrency"], 7);
  std::vector<int> shares;
  for (const json& p : m["levels"][1]["parts"]) shares.push_back(p["connections"].get<int>());
  EXPECT_EQ(shares, (std::vector<int>{2, 2, 2, 1}));  // the remainder on the first ranks
}

TEST_F(Distributed, ARankThatCannotReachTheTargetFailsTheRunNamingIt) {
  const std::string all = dir_.path() + "/all.json";
  const int closed = testing::free_loopback_port();
  // Rank 1 is pointed at a port where nothing listens.
  const std::string script = std::string("if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then u=") +
                             "http://127.0.0.1:" + std::to_string(closed) +
                             "/; else u=" + url("/fast") + "; fi; exec " + KNEE_BINARY +
                             " run \"$u\" -c 2 -d 1s -w 0s --json " + all + " -q";
  auto r = testing::run_process(mpirun(2, {"/bin/sh", "-c", script}));
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("rank 1 on host"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(all)) << "a half-merged result is never written";
}

TEST_F(Distributed, ASetupFailureOnOneRankEndsEveryRankAtOnce) {
  // Rank 0 alone opens the result file; a path it cannot write must not leave rank 1 waiting.
  auto r = testing::run_process(mpirun(2, {KNEE_BINARY, "run", url("/fast"), "-c", "2", "-d", "1s",
                                           "--json", dir_.path() + "/no/such/dir/all.json", "-q"}),
                                std::chrono::seconds(60));
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("--json: cannot write"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("timeout"), std::string::npos) << "ended by mpirun's timeout: " << r.err;
}

TEST_F(Distributed, ARankThatDiesFailsTheRunAndNothingIsWritten) {
  const std::string all = dir_.path() + "/all.json";
  // Rank 1 is killed a second into a 4 s run.
  const std::string script =
      std::string("if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then (sleep 1.5; ") +
      "kill -9 $$) & fi; exec " + KNEE_BINARY + " run " + url("/fast") +
      " -c 2 -d 3s -w 1s --json " + all + " -q";
  auto r = testing::run_process(mpirun(2, {"/bin/sh", "-c", script}));
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("rank 1"), std::string::npos)
      << "mpirun names the rank: " << r.out << r.err;
  EXPECT_FALSE(std::filesystem::exists(all));
  for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
    ADD_FAILURE() << "left behind: " << e.path();
  }
}

TEST_F(Distributed, SeparateProcessesStartTogetherAndMergeExactly) {
  const uint64_t before = served();
  std::vector<std::thread> parts;
  std::vector<testing::ProcessResult> results(2);
  for (int i = 0; i < 2; ++i) {
    parts.emplace_back([&, i] {
      results[static_cast<size_t>(i)] =
          testing::run_process({KNEE_BINARY, "run", url("/fast"), "-c", "4", "-d", "1s", "-w",
                                "300ms", "--part", std::to_string(i) + "/2", "--start-at", "+2s",
                                "--json", dir_.path() + "/p" + std::to_string(i) + ".json", "-q"});
    });
  }
  for (std::thread& t : parts) t.join();
  for (const auto& r : results) ASSERT_EQ(r.exit_code, 0) << r.err;
  const uint64_t after = served();
  const std::string all = dir_.path() + "/all.json";
  auto m = testing::run_process({KNEE_BINARY, "report", "merge", dir_.path() + "/p0.json",
                                 dir_.path() + "/p1.json", "-o", all});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const json merged = read_json(all);
  EXPECT_EQ(sent(merged), after - before - 1);
  EXPECT_EQ(merged["concurrency"], 4);
  EXPECT_EQ(merged["parts"].size(), 2u);  // (phases that did not overlap would be refused)
  // The output never overwrites an input.
  auto clash = testing::run_process({KNEE_BINARY, "report", "merge", dir_.path() + "/p0.json",
                                     dir_.path() + "/p1.json", "-o", dir_.path() + "/p0.json"});
  EXPECT_EQ(clash.exit_code, 2) << clash.err;
}

TEST(DistributedFlags, BadPartsTimesAndMergesAreRefused) {
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
           {KNEE_BINARY, "run", "http://127.0.0.1:1/", "--part", "2/2"},
           {KNEE_BINARY, "run", "http://127.0.0.1:1/", "--part", "one"},
           {KNEE_BINARY, "run", "http://127.0.0.1:1/", "-c", "1", "--part", "0/2"},
           {KNEE_BINARY, "run", "http://127.0.0.1:1/", "--start-at", "yesterday"},
           {KNEE_BINARY, "run", "http://127.0.0.1:1/", "--start-at", "1000000000"},
           {KNEE_BINARY, "run", "http://127.0.0.1:1/", "--json-parts", "x"},
           {KNEE_BINARY, "sweep", "--part", "0/2"},
           {KNEE_BINARY, "report", "merge", "a.json"}}) {
    auto r = testing::run_process(argv, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, 2) << argv[3] << ": " << r.err;
    EXPECT_NE(r.err.find("knee"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace knee
