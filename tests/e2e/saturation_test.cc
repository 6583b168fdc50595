// The saturated resource, named by the written rule (analysis/saturation.h) from what the sweep
// sampled: the server's CPU for the lab's tracking endpoint, nothing for a timer-only endpoint,
// and the client itself when its core is shared with other work.
#include <gtest/gtest.h>
#include <sched.h>

#include <nlohmann/json.hpp>

#include "support/subprocess.h"

namespace knee {
namespace {

bool have_two_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

nlohmann::json sweep(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {KNEE_BINARY, "sweep"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--json", "-"});
  auto r = testing::run_process(argv, std::chrono::seconds(180));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(Saturation, BuiltInServerIsCpuBoundAtTheKnee) {
  if (!have_two_cpus()) GTEST_SKIP() << "needs CPUs 0 and 1";
  // 2 s levels: with 1 s, one CI run in many caught a noisy second and read the server thread at
  // 78 % (92-95 % in the others); the knee's verdict was right, the share under-sampled.
  auto j = sweep({"--levels", "1,8,32,64", "-d", "2s", "-w", "0.5s"});
  const auto& last = j["levels"].back();
  ASSERT_FALSE(last["saturated"].is_null());
  EXPECT_EQ(last["saturated"]["resource"], "cpu") << last["saturated"]["detail"];
  // The server process itself ran near a full core (one event-loop thread).
  EXPECT_GE(last["resources"]["server"]["busiest_thread_cpu_pct"].get<double>(), 80.0);
}

TEST(Saturation, TimerOnlyEndpointSaturatesNoHardware) {
  if (!have_two_cpus()) GTEST_SKIP() << "needs CPUs 0 and 1";
  testing::BackgroundProcess server(
      {"/usr/bin/taskset", "-c", "0", KNEE_BINARY, "serve", "--port", "0"});
  int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0);
  auto j =
      sweep({"http://127.0.0.1:" + std::to_string(port) + "/slow-async?ms=20", "--levels", "1,8,64",
             "-d", "1s", "-w", "0.3s", "--server-pid", std::to_string(server.pid())});
  for (const auto& level : j["levels"]) {
    EXPECT_EQ(level["saturated"]["resource"], "none")
        << "concurrency " << level["concurrency"] << ": " << level["saturated"]["detail"];
  }
  EXPECT_NE(j["levels"].back()["saturated"]["detail"].get<std::string>().find("software"),
            std::string::npos);
}

TEST(Saturation, ClientSharingItsCoreWithOtherWorkIsFlagged) {
  if (!have_two_cpus()) GTEST_SKIP() << "needs CPUs 0 and 1";
  testing::BackgroundProcess server(
      {"/usr/bin/taskset", "-c", "0", KNEE_BINARY, "serve", "--port", "0"});
  int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0);
  // Another program spins on CPU 1, where the client is pinned.
  testing::BackgroundProcess burner(
      {"/usr/bin/taskset", "-c", "1", "/bin/sh", "-c", "echo spinning; while :; do :; done"});
  ASSERT_EQ(burner.first_line(), "spinning");
  std::vector<std::string> argv = {"/usr/bin/taskset",
                                   "-c",
                                   "1",
                                   KNEE_BINARY,
                                   "sweep",
                                   "http://127.0.0.1:" + std::to_string(port) + "/fast",
                                   "--levels",
                                   "16,64",
                                   "-d",
                                   "1s",
                                   "-w",
                                   "0.3s",
                                   "--json",
                                   "-"};
  auto r = testing::run_process(argv, std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& last = j["levels"].back();
  EXPECT_EQ(last["saturated"]["resource"], "client") << last["saturated"]["detail"];
  bool warned = false;
  for (const auto& w : j["warnings"]) {
    warned = warned || w.get<std::string>().find("client-bound") != std::string::npos;
  }
  EXPECT_TRUE(warned) << j["warnings"];
}

TEST(Sweep, RepeatsGiveRangesInTableAndJson) {
  auto r = testing::run_process({KNEE_BINARY, "sweep", "--levels", "1,8", "-d", "0.5s", "-w",
                                 "0.2s", "--repeat", "3", "--json", "-"},
                                std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const auto& level : j["levels"]) {
    EXPECT_EQ(level["repeats"], 3);
    ASSERT_EQ(level["runs"].size(), 3u);
    const auto& x = level["ranges"]["throughput_rps"];
    EXPECT_LE(x["min"].get<double>(), x["median"].get<double>());
    EXPECT_LE(x["median"].get<double>(), x["max"].get<double>());
    const auto& p99 = level["ranges"]["latency_ns"]["p99"];
    EXPECT_LE(p99["min"].get<double>(), p99["max"].get<double>());
  }
  auto text = testing::run_process(
      {KNEE_BINARY, "sweep", "--levels", "1,8", "-d", "0.3s", "-w", "0.1s", "--repeat", "3"},
      std::chrono::seconds(120));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("median (min-max)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(") "), std::string::npos) << "ranges like 266 (260-273)";
}

}  // namespace
}  // namespace knee
