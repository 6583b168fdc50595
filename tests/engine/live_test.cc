// Live progress (engine/live.h): while a run goes, the calling thread reads what the worker
// threads publish and hands it to RunControl::on_progress. Run under ThreadSanitizer (the tsan
// preset builds engine_test) this checks the polling is free of data races.
#include <gtest/gtest.h>

#include <vector>

#include "engine/load.h"
#include "http/url.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using testing::Action;
using testing::ScriptedServer;

TEST(LiveProgress, SnapshotsFromSeveralWorkersGrowAndMatchTheResult) {
  ScriptedServer server([](int, int request, const std::string&) {
    // Every fifth request on a connection gets a 503: errors show up live.
    if (request % 5 == 4) {
      return Action::respond("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
    }
    return Action::respond(testing::ok_response(), 1ms);
  });
  LoadOptions o;
  o.request.url = *http::parse_url(server.url("/"));
  o.connections = 4;
  o.threads = 2;
  o.warmup = 200ms;
  o.duration = 600ms;
  o.timeout = 2s;
  std::vector<LiveSnapshot> seen;
  RunControl control;
  control.progress_every = 50ms;
  control.on_progress = [&](const LiveSnapshot& s) { seen.push_back(s); };
  auto r = run_load(o, control);
  ASSERT_TRUE(r) << r.status().message();

  // 800 ms at one snapshot per 50 ms: well over 8 of them, in every phase before the grace.
  ASSERT_GE(seen.size(), 8u);
  EXPECT_EQ(seen.front().phase, LivePhase::kWarmup);
  bool measured = false;
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].elapsed, seen[i - 1].elapsed);
    EXPECT_GE(seen[i].responses, seen[i - 1].responses);
    EXPECT_GE(seen[i].errors, seen[i - 1].errors);
    EXPECT_GE(seen[i].latency_count, seen[i - 1].latency_count);
    EXPECT_GE(static_cast<int>(seen[i].phase), static_cast<int>(seen[i - 1].phase));
    measured = measured || seen[i].phase == LivePhase::kMeasure;
  }
  EXPECT_TRUE(measured);
  const LiveSnapshot& last = seen.back();
  // Published figures lag the workers by at most one publish, never run ahead of the result.
  EXPECT_GT(last.responses, 0u);
  EXPECT_LE(last.responses, r->stats.completed + r->stats.warmup.completed);
  EXPECT_GT(last.errors, 0u);
  EXPECT_LE(last.errors, r->stats.total_errors());
  EXPECT_GT(last.latency_count, 0);
  EXPECT_LE(last.latency_count, r->stats.latency_ns.count());
  EXPECT_GE(last.p99_ns, 1'000'000);  // the server's 1 ms delay is a floor
  EXPECT_GE(last.p99_ns, last.p50_ns);
}

}  // namespace
}  // namespace knee::engine
