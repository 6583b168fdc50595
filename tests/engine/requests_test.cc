// -n/--requests (issue 12, point 5): a count instead of a duration, in both loops. Closed loop:
// exactly COUNT measured requests across every thread, the measured phase ends when the last is
// sent, and -d only bounds it. Open loop: COUNT uniform arrivals over COUNT / RATE.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "engine/load.h"
#include "http/url.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using testing::ScriptedServer;

LoadOptions counted(const std::string& url, uint64_t requests) {
  LoadOptions o;
  o.request.url = *http::parse_url(url);
  o.connections = 4;
  o.warmup = 50ms;
  o.duration = 30s;  // the bound; the count ends the run long before
  o.timeout = 2s;
  o.requests = requests;
  o.interval = 1s;
  return o;
}

TEST(Requests, AClosedLoopSendsExactlyTheCountAcrossThreadsAndEndsThen) {
  ScriptedServer server(ScriptedServer::always_ok());
  for (int threads : {1, 2, 4}) {
    LoadOptions o = counted(server.url(), 500);
    o.threads = threads;
    // No warm-up: requests carried over from one would be in the system during the phase but
    // not in its X or R, and on a slow host (ThreadSanitizer) its first answers take 50 ms.
    o.warmup = 0ms;
    auto r = run_load(o);
    ASSERT_TRUE(r) << r.status().message();
    const core::RunStats& s = r->stats;
    EXPECT_EQ(s.sent, 500u) << threads << " threads";
    EXPECT_EQ(s.completed + s.request_failures() + s.aborted, 500u);
    EXPECT_EQ(s.sent_in_phase, 500u);
    EXPECT_EQ(s.ok(), 500u);
    EXPECT_EQ(r->requests_asked, 500u);
    // The phase is as long as it took, not the 30 s bound.
    EXPECT_GT(r->duration_s, 0.0);
    EXPECT_LT(r->duration_s, 10.0);
    EXPECT_NEAR(r->throughput_rps(), 500 / r->duration_s, 1e-6);
    // Little's law holds over the phase as it was, never more than the 4 connections. Not
    // "about 4": how long a slow host takes to answer the first requests is part of this short
    // phase (regression: under ThreadSanitizer X * R was 2.1 against 4 +- 0.6, while the phase
    // held 3.8 on average). Over a finite phase it holds with its boundary: each request's time
    // in the system lies inside its latency, so the mean number in the system L <= X * R (1% for
    // the histogram's rounding of R), and X * R exceeds L only by the time the requests still in
    // flight when the phase ended (at most the 4 connections) spent after it. Regression: a 10%
    // band around L failed under ThreadSanitizer, 0.446 against 0.503, when the last responses
    // of a phase of a few tens of ms came a few ms late.
    const double max_latency_s = static_cast<double>(s.latency_ns.max()) / 1e9;
    EXPECT_LE(r->mean_in_system(), r->littles_n() * 1.01) << threads << " threads";
    EXPECT_GE(r->mean_in_system(), r->littles_n() * 0.99 - 4.0 * max_latency_s / r->duration_s)
        << threads << " threads";
    // Never more than the 4 connections. Regression: under ThreadSanitizer L was 4.02, the other
    // workers integrating past the end the last send had published; now only the moment between
    // that send's clock read and its publishing (microseconds of a 0.3 s phase) can slip in.
    EXPECT_LE(r->mean_in_system(), 4.0 * 1.001);
    // The intervals end with the phase's last response: the last is as long as what was left of
    // the phase (it ended at the last send), and the few responses that came after it.
    ASSERT_FALSE(r->intervals.empty());
    int64_t counted = 0;
    for (const core::LatencyInterval& i : r->intervals) counted += i.count;
    EXPECT_EQ(counted, 500);
    const core::LatencyInterval& last = r->intervals.back();
    EXPECT_GE(last.start_s + last.length_s, r->duration_s - 1e-6);
    EXPECT_LT(last.start_s + last.length_s, r->duration_s + 1.0);
  }
}

TEST(Requests, TheDurationBoundsACountTooLargeForIt) {
  ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response(), 20ms);
  });
  LoadOptions o = counted(server.url(), 1'000'000);
  o.duration = 300ms;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_LT(r->stats.sent, 1'000'000u);
  EXPECT_GT(r->stats.sent, 0u);
  EXPECT_NEAR(r->duration_s, 0.3, 1e-9);
}

TEST(Requests, AnOpenLoopSchedulesExactlyTheCountOfUniformArrivals) {
  ScriptedServer server(ScriptedServer::always_ok());
  LoadOptions o = counted(server.url(), 300);
  o.rate_rps = 1000;
  o.threads = 2;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->stats.scheduled, 300u);
  EXPECT_EQ(r->stats.scheduled, r->stats.sent + r->stats.never_sent);
  EXPECT_NEAR(r->duration_s, 0.3, 1e-9);
}

TEST(Requests, ACountOfZeroIsRefusedNamingTheField) {
  LoadOptions o = counted("http://127.0.0.1:1/", 0);
  EXPECT_EQ(o.validate().field(), "requests");
}

}  // namespace
}  // namespace knee::engine
