// The capacity search's runs: each call one open-loop run at the step's rate, its figures what
// the SLOs are checked on.
#include "harness/capacity.h"

#include <gtest/gtest.h>

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
  // The step's 200/s, not the base's 1000/s: 80 arrivals in the 0.4 s measured phase.
  EXPECT_NEAR(m->scheduled_rps, 200, 20);
  EXPECT_NEAR(m->achieved_rps, m->scheduled_rps, 5);
  EXPECT_EQ(m->figures.errors, 0u);
  EXPECT_GT(m->figures.throughput_rps, 100);
  EXPECT_GT(m->figures.p99_ns, 0);
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

TEST(CapacityMeasure, ATargetThatWentAwayIsAnError) {
  std::string url;
  {
    ScriptedServer server(ScriptedServer::always_ok());
    url = server.url();
  }  // closed: connects to its port are refused
  engine::RunControl control;
  auto m = capacity_measure(open_loop_at(url, 100), control)(100, 0);
  EXPECT_FALSE(m);
}

}  // namespace
}  // namespace knee::harness
