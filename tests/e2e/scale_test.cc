// knee at scale as a user runs it: 10,000 connections in closed loop against `knee serve`, every
// request accounted on both sides, and the client's memory per connection.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee {
namespace {

using json = nlohmann::json;

// The largest resident set of any child waited for so far, bytes (getrusage: ru_maxrss in KiB).
int64_t children_max_rss() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

TEST(Scale, TenThousandConnectionsClosedLoopEveryRequestAccounted) {
  constexpr int kConnections = 10'000;
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_max < kConnections + 200)
    GTEST_SKIP() << "needs " << kConnections + 200 << " files";
  testing::TempDir dir;
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0"});
  const int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0) << server.first_line();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  auto served = [&] {
    auto r = testing::run_process({"/usr/bin/curl", "-s", base + "/health"});
    return json::parse(r.out)["totalRequests"].get<uint64_t>();
  };
  auto run = [&](int connections, const std::string& out) {
    return testing::run_process(
        {KNEE_BINARY, "run", base + "/fast", "-c", std::to_string(connections), "-d", "3s", "-w",
         "1s", "--json", out, "-q"},
        std::chrono::seconds(120));
  };
  auto sent = [](const json& j) {
    return j["sent"].get<uint64_t>() + j["warmup"]["sent"].get<uint64_t>();
  };

  // A small run first: the client's memory without the connections.
  const uint64_t before_small = served();
  auto small = run(100, dir.path() + "/small.json");
  ASSERT_EQ(small.exit_code, 0) << small.err;
  const int64_t rss_small = children_max_rss();
  const uint64_t after_small = served();
  std::ifstream small_in(dir.path() + "/small.json");
  EXPECT_EQ(sent(json::parse(small_in)), after_small - before_small - 1);

  const uint64_t before = served();
  auto big = run(kConnections, dir.path() + "/big.json");
  ASSERT_EQ(big.exit_code, 0) << big.err;
  const int64_t rss_big = children_max_rss();
  const uint64_t after = served();
  std::ifstream in(dir.path() + "/big.json");
  const json j = json::parse(in);
  EXPECT_EQ(j["concurrency"], kConnections);
  uint64_t errors = 0;
  for (const auto& [cause, n] : j["errors"].items()) errors += n.get<uint64_t>();
  EXPECT_EQ(errors, 0u) << j["errors"].dump();
  EXPECT_EQ(j["connects"]["opened"], kConnections);
  EXPECT_GT(j["ok"].get<uint64_t>(), 0u);
  // Every request the server answered is in the result (the /health read counts itself), and
  // every one sent was answered.
  EXPECT_EQ(sent(j), after - before - 1);
  const double per_connection = static_cast<double>(rss_big - rss_small) / (kConnections - 100);
  std::printf("knee run -c %d: client max RSS %.1f MB (-c 100: %.1f MB), %.0f bytes a connection\n",
              kConnections, static_cast<double>(rss_big) / 1e6,
              static_cast<double>(rss_small) / 1e6, per_connection);
  EXPECT_LT(per_connection, 16384);
  EXPECT_EQ(server.terminate(), 0);
}

}  // namespace
}  // namespace knee
