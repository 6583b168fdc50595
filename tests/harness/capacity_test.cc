// The capacity search's runs: each call one open-loop run at the step's rate, its figures what
// the SLOs are checked on.
#include "harness/capacity.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include "../support/scripted_server.h"
#include "http/url.h"

namespace knee::harness {
namespace {

using namespace std::chrono_literals;
using testing::ScriptedServer;

engine::LoadOptions open_loop_at(const std::string& url, double rate_rps) {
  engine::LoadOptions o;
  o.request.url = *http::parse_url(url);
  o.rate_rps = rate_rps;
  o.max_connections = 4;
  o.warmup = 100ms;
  o.duration = 400ms;
  o.timeout = 500ms;
  o.grace = 300ms;
  return o;
}

TEST(CapacityMeasure, RunsAtTheStepsRateAndReturnsItsFigures) {
  ScriptedServer server(ScriptedServer::always_ok());
  engine::RunControl control;
  std::vector<std::pair<double, int>> starts;
  analysis::CapacityMeasure measure =
      capacity_measure(open_loop_at(server.url(), 1000), control,
                       [&](double rate, int repeat) { starts.emplace_back(rate, repeat); });
  auto m = measure(200, 1);
  ASSERT_TRUE(m) << m.status().message();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0], (std::pair<double, int>{200, 1}));
  EXPECT_FALSE(m->interrupted);
  // The step's 200/s, not the base's 1000/s: 80 arrivals in the 0.4 s measured phase (the
  // schedule's count, whatever the speed of this host).
  EXPECT_NEAR(m->scheduled_rps, 200, 20);
  EXPECT_GT(m->achieved_rps, 0);
  EXPECT_EQ(m->figures.errors, 0u);
  EXPECT_GT(m->figures.sent, 0u);
  // Whose limit it was, by knee's own figures: the run was judged, with the client's CPU.
  EXPECT_FALSE(m->limit.empty());
  EXPECT_FALSE(m->limit_detail.empty());
  EXPECT_NE(m->limit, "unreachable");
  EXPECT_GE(m->client_thread_cpu_demand, 0.0);
  EXPECT_LE(m->client_thread_cpu_demand, 1.0);
}

TEST(CapacityMeasure, AnInterruptBeforeAStepRunsNothing) {
  std::atomic<bool> interrupt{true};
  engine::RunControl control;
  control.interrupt = &interrupt;
  int starts = 0;
  // No server: a run would fail to connect, so the measurement shows that none was tried.
  analysis::CapacityMeasure measure = capacity_measure(open_loop_at("http://127.0.0.1:1/", 100),
                                                       control, [&](double, int) { ++starts; });
  auto m = measure(100, 0);
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_TRUE(m->interrupted);
  EXPECT_EQ(starts, 0);
}

TEST(CapacityMeasure, AnInterruptDuringAStepEndsItMarkedInterrupted) {
  ScriptedServer server(ScriptedServer::always_ok());
  std::atomic<bool> interrupt{false};
  engine::RunControl control;
  control.interrupt = &interrupt;
  control.on_measure_start = [&] { interrupt = true; };  // Ctrl-C as the measured phase begins
  auto m = capacity_measure(open_loop_at(server.url(), 100), control)(100, 0);
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_TRUE(m->interrupted);
}

TEST(CapacityMeasure, ATargetThatRefusesIsUnavailable) {
  // A socket bound but not listening holds the port: connects to it are refused (ECONNREFUSED),
  // and no other test can take the port meanwhile.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/";
  engine::RunControl control;
  auto m = capacity_measure(open_loop_at(url, 100), control)(100, 0);
  ::close(fd);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.status().code(), core::Status::Code::kUnavailable) << m.status().message();
}

}  // namespace
}  // namespace knee::harness
