// The load engine on a fake clock (support/fake_clock.h) against real loopback servers: timeouts,
// the grace period, the warm-up boundary and an open-loop schedule are measured in fake seconds
// while the test takes milliseconds. The test moves the time only at points it synchronises on
// (the server has seen N requests), so every count below is exact.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include "engine/load.h"
#include "engine/load_worker.h"
#include "http/request.h"
#include "http/url.h"
#include "net/socket.h"
#include "support/fake_clock.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using testing::Action;
using testing::FakeClock;
using testing::ScriptedServer;

// Waits (in real time, for an event, not for a duration) until the server has seen n requests.
void wait_for_requests(const ScriptedServer& server, size_t n) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (server.targets().size() < n && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(100us);
  }
  ASSERT_GE(server.targets().size(), n) << "the server never saw request " << n;
}

LoadOptions options(const ScriptedServer& server, int connections, core::Nanos warmup,
                    core::Nanos duration, core::Nanos timeout, core::Nanos grace) {
  LoadOptions o;
  o.request.url = *http::parse_url(server.url("/"));
  o.connections = connections;
  o.warmup = warmup;
  o.duration = duration;
  o.timeout = timeout;
  o.grace = grace;
  return o;
}

// run_load on its own thread with the fake clock; result() joins it.
class FakeRun {
 public:
  FakeRun(const LoadOptions& o, FakeClock& clock) : start_(clock.now()) {
    thread_ = std::thread([this, o, &clock] {
      RunControl control;
      control.clock = &clock;
      result_.emplace(run_load(o, control));
    });
  }
  core::TimePoint start() const { return start_; }
  core::RunResult result() {
    thread_.join();
    EXPECT_TRUE(*result_) << result_->status().message();
    return std::move(*result_).value();
  }

 private:
  core::TimePoint start_;
  std::optional<core::Result<core::RunResult>> result_;
  std::thread thread_;
};

TEST(FakeTime, UnansweredRequestsTimeOutAtTheirTimeoutAndAreSentAgain) {
  ScriptedServer server([](int, int, const std::string&) { return Action::hang(); });
  FakeClock clock;
  FakeRun run(options(server, 2, 0s, 30s, 10s, 5s), clock);
  wait_for_requests(server, 2);
  clock.advance(10s + 500ms);  // past the timeout: both fail and their connections start again
  wait_for_requests(server, 4);
  clock.advance(21s);  // 31.5 s: the phase is over and the second pair is past its timeout too
  const core::RunResult r = run.result();
  EXPECT_EQ(r.stats.sent, 4u);
  EXPECT_EQ(r.stats.error_count(core::ErrorKind::kTimeout), 4u);
  EXPECT_EQ(r.stats.completed, 0u);
  EXPECT_EQ(r.stats.aborted, 0u);
  EXPECT_EQ(r.stats.reconnects, 2u);
}

TEST(FakeTime, WhatIsStillInFlightWhenTheGraceEndsIsAborted) {
  ScriptedServer server([](int, int, const std::string&) { return Action::hang(); });
  FakeClock clock;
  FakeRun run(options(server, 2, 0s, 1s, 10s, 2s), clock);
  wait_for_requests(server, 2);
  clock.advance(3500ms);  // after measure_until (1 s) + grace (2 s), before the 10 s timeout
  const core::RunResult r = run.result();
  EXPECT_EQ(r.stats.sent, 2u);
  EXPECT_EQ(r.stats.aborted, 2u);
  EXPECT_EQ(r.stats.total_errors(), 0u);
  EXPECT_EQ(r.stats.sent, r.stats.completed + r.stats.request_failures() + r.stats.aborted);
}

TEST(FakeTime, RequestsSentBeforeTheWarmUpEndsAreWarmUpWhenEverTheyComplete) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  FakeClock clock;
  FakeRun run(options(server, 1, 1s, 1s, 10s, 1s), clock);
  wait_for_requests(server, 20);  // all at fake 0 s: warm-up
  clock.set(run.start() + 1s);    // exactly measure_from: from here requests are measured
  // The request in flight across the boundary was sent in warm-up: it counts there.
  const size_t at_boundary = server.targets().size();
  wait_for_requests(server, at_boundary + 21);
  clock.set(run.start() + 2s);  // measure_until: the one in flight finishes in the grace period
  const core::RunResult r = run.result();
  EXPECT_GE(r.stats.warmup.completed, 20u);
  EXPECT_GE(r.stats.completed, 20u);
  EXPECT_EQ(r.stats.warmup.completed + r.stats.completed, server.targets().size())
      << "every answered request is counted once, in warm-up or in the phase";
  EXPECT_EQ(r.stats.latency_ns.value_at_percentile(50), 0) << "latency is fake time";
}

TEST(FakeTime, AnOpenLoopSendsEachArrivalAtItsIntendedTime) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  FakeClock clock;
  LoadOptions o = options(server, 1, 0s, 100ms, 10s, 1s);
  o.rate_rps = 100;  // arrivals at 0, 10, ..., 90 ms of fake time
  o.max_connections = 4;
  FakeRun run(o, clock);
  for (size_t k = 0; k < 10; ++k) {
    clock.set(run.start() + std::chrono::milliseconds(10 * k));
    wait_for_requests(server, k + 1);
  }
  clock.set(run.start() + 100ms);
  const core::RunResult r = run.result();
  EXPECT_EQ(r.stats.scheduled, 10u);
  EXPECT_EQ(r.stats.sent, 10u);
  EXPECT_EQ(r.stats.sent_in_phase, 10u);
  EXPECT_EQ(r.stats.completed, 10u);
  EXPECT_EQ(r.stats.late, 0u);
  EXPECT_EQ(r.stats.send_lag_ns.max(), 0) << "each left at its intended fake instant";
  EXPECT_DOUBLE_EQ(r.achieved_rate_rps(), 100.0);
}

// Regression (a new user's trial of --stages): the phases were stamped before the workers were
// built and started (6-8 ms on this host), so the open loop's first send, due at the start, was
// that late and a gentle ramp was named client-bound. Here the worker is built at fake 1000 s
// and the gate opens at 1005 s: the phases it sends by are the gate's.
TEST(FakeTime, AWorkerTakesItsPhasesAtTheStartGateNotWhenItWasBuilt) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  FakeClock clock;
  http::RequestSpec spec;
  spec.url = *http::parse_url(server.url("/"));
  WorkerRequests requests;
  requests.h1.push_back(*http::RequestTemplate::compile(spec));
  WorkerConfig cfg;
  cfg.address = *net::resolve(spec.url.host, spec.url.port);
  cfg.requests = &requests;
  cfg.connections = 2;
  cfg.timeout = 10s;
  cfg.clock = &clock;
  cfg.schedule.emplace(Arrival::kUniform, 100.0, 1, 0, 1);  // at 0, 10, ..., 90 ms
  LoadWorker worker(std::move(cfg));
  StartGate gate(1);
  core::Status outcome;
  std::thread thread([&] { outcome = worker.run(gate); });
  gate.wait_ready();
  std::this_thread::sleep_for(20ms);  // real time in which a worker past the gate would connect
  EXPECT_EQ(server.targets().size(), 0u) << "nothing is sent before the gate opens";
  clock.advance(5s);
  Phases phases;
  phases.start = clock.now();
  phases.measure_from = phases.start;
  phases.measure_until = phases.start + 100ms;
  phases.grace = 1s;
  worker.set_phases(phases);
  gate.open();
  for (size_t k = 0; k < 10; ++k) {
    clock.set(phases.start + std::chrono::milliseconds(10 * k));
    wait_for_requests(server, k + 1);
  }
  clock.set(phases.measure_until);
  thread.join();
  ASSERT_TRUE(outcome) << outcome.message();
  const core::RunStats& s = worker.result();
  EXPECT_EQ(s.sent, 10u);
  EXPECT_EQ(s.late, 0u);
  EXPECT_EQ(s.send_lag_ns.max(), 0) << "the first send is due at the gate's start, not at 1000 s";
}

// Without a warm-up the measured phase's hooks (the host sampler's first /proc reads) run
// before the phases are stamped, not beside the first sends: a hook that takes 5 s of fake
// time leaves every arrival on time.
TEST(FakeTime, HooksOfAPhaseWithoutWarmUpRunBeforeItsFirstSend) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  FakeClock clock;
  LoadOptions o = options(server, 1, 0s, 100ms, 10s, 1s);
  o.rate_rps = 100;
  o.max_connections = 4;
  std::atomic<int64_t> start_ns{0};
  std::optional<core::Result<core::RunResult>> result;
  std::thread thread([&] {
    RunControl control;
    control.clock = &clock;
    control.on_measure_start = [&] {
      clock.advance(5s);
      start_ns.store(clock.now().time_since_epoch().count());
    };
    control.on_measure_end = [] {};
    result.emplace(run_load(o, control));
  });
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (start_ns.load() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(100us);
  }
  const core::TimePoint start{core::Nanos(start_ns.load())};
  for (size_t k = 0; k < 10; ++k) {
    clock.set(start + std::chrono::milliseconds(10 * k));
    wait_for_requests(server, k + 1);
  }
  clock.set(start + 100ms);
  thread.join();
  ASSERT_TRUE(*result) << result->status().message();
  const core::RunResult& r = result->value();
  EXPECT_EQ(r.stats.sent, 10u);
  EXPECT_EQ(r.stats.late, 0u);
  EXPECT_EQ(r.stats.send_lag_ns.max(), 0);
}

// A way out of run_load that did not open the gate (here a hook that throws before it, as the
// host sampler's thread could) calls the run off: the workers waiting at the gate return
// without sending, and the run's threads join, where they waited for the gate for ever.
TEST(FakeTime, ARunThatFailsBeforeItsGateOpensCallsItsWorkersOff) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  FakeClock clock;
  LoadOptions o = options(server, 2, 0s, 100ms, 10s, 1s);
  o.threads = 2;
  RunControl control;
  control.clock = &clock;
  control.on_measure_start = [] { throw std::runtime_error("the sampler could not start"); };
  control.on_measure_end = [] {};
  EXPECT_THROW((void)run_load(o, control), std::runtime_error);
  EXPECT_EQ(server.targets().size(), 0u) << "nothing is sent by a run called off";
}

// A worker at a gate the run calls off returns an error and sends nothing; opening the gate
// after that changes nothing.
TEST(StartGate, ACalledOffGateStaysShut) {
  StartGate gate(1);
  gate.arrive();
  gate.wait_ready();
  gate.call_off();
  gate.open();
  EXPECT_FALSE(gate.wait_to_start());
  StartGate opened(1);
  opened.arrive();
  opened.open();
  opened.call_off();
  EXPECT_TRUE(opened.wait_to_start()) << "no effect once open";
}

}  // namespace
}  // namespace knee::engine
