// knee serve's /metrics read by Prometheus's own tools: promtool's linter, and a real
// prometheus scraping it, the value read back through its HTTP API.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "net/socket.h"
#include "support/blocking_client.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee {
namespace {

using testing::run_process;

struct Served {
  std::unique_ptr<testing::BackgroundProcess> process;
  net::SocketAddress address;
};

// knee serve --state DIR on a free port, with a small data set.
Served serve_service(const testing::TempDir& dir) {
  auto made = run_process({KNEE_BINARY, "lab", "data", "--state", dir.path(), "--records", "1k",
                           "--days", "1", "--sellers", "3"});
  EXPECT_EQ(made.exit_code, 0) << made.err;
  Served s;
  s.process = std::make_unique<testing::BackgroundProcess>(
      std::vector<std::string>{KNEE_BINARY, "serve", "--state", dir.path(), "--port", "0"});
  const int port = testing::port_of_listening_line(s.process->first_line());
  EXPECT_GT(port, 0) << s.process->first_line();
  s.address = *net::resolve("127.0.0.1", port);
  return s;
}

TEST(Metrics, PromtoolFindsTheExpositionClean) {
  testing::TempDir dir("knee-e2e-metrics");
  Served served = serve_service(dir);
  testing::Client client(served.address);
  ASSERT_EQ(client.get("/fast")->status, 200);
  ASSERT_EQ(client.get("/tracking/KN0000000001")->status, 200);
  ASSERT_EQ(
      client.post("/events", R"({"no":"KN0000000001","state":"x","zone":"1","step":5})")->status,
      201);
  auto metrics = client.get("/metrics");
  ASSERT_TRUE(metrics);
  const std::string file = dir.file("metrics.txt");
  std::ofstream(file) << metrics->body;
  auto lint = run_process({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + file});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err << "\n" << metrics->body;
}

TEST(Metrics, PrometheusScrapesItAndAnswersAQueryWithTheCount) {
  testing::TempDir dir("knee-e2e-prometheus");
  Served served = serve_service(dir);
  testing::Client client(served.address);
  for (int i = 0; i < 7; ++i) ASSERT_EQ(client.get("/fast")->status, 200);

  const int prometheus_port = testing::free_loopback_port();
  ASSERT_GT(prometheus_port, 0);
  std::ofstream(dir.file("prometheus.yml"))
      << "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: knee\n"
      << "    static_configs:\n      - targets: ['" << served.address.to_string() << "']\n";
  // sh prints the line BackgroundProcess waits for, then becomes prometheus (same pid, so the
  // test's SIGTERM stops it); its log goes to a file.
  testing::BackgroundProcess prometheus(
      {"/bin/sh", "-c",
       "echo starting; exec /usr/bin/prometheus --config.file=" + dir.file("prometheus.yml") +
           " --storage.tsdb.path=" + dir.file("tsdb") + " --web.listen-address=127.0.0.1:" +
           std::to_string(prometheus_port) + " 2>" + dir.file("prometheus.log")});
  ASSERT_EQ(prometheus.first_line(), "starting");
  auto api = net::resolve("127.0.0.1", prometheus_port);
  ASSERT_TRUE(api);

  // Until a scrape landed: the query has a result (at most 30 s).
  const std::string query =
      "/api/v1/query?query=knee_lab_requests_total%7Broute%3D%22%2Ffast%22%2Cstatus%3D%22200%22%7D";
  nlohmann::json answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    testing::Client c(*api);
    if (!c.connected()) continue;
    auto r = c.get(query);
    if (!r || r->status != 200) continue;
    answer = nlohmann::json::parse(r->body, nullptr, false);
    if (answer.is_object() && !answer["data"]["result"].empty()) break;
  }
  ASSERT_TRUE(answer.is_object()) << "prometheus never answered; see its log in " << dir.path();
  ASSERT_EQ(answer["status"], "success") << answer.dump();
  ASSERT_FALSE(answer["data"]["result"].empty()) << answer.dump();
  const nlohmann::json& sample = answer["data"]["result"][0];
  EXPECT_EQ(sample["metric"]["job"], "knee");
  EXPECT_EQ(sample["metric"]["route"], "/fast");
  EXPECT_EQ(sample["value"][1], "7") << "the value Prometheus parsed from knee's text";
  EXPECT_EQ(prometheus.terminate(), 0);
}

}  // namespace
}  // namespace knee
