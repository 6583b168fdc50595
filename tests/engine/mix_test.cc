// A request mix (engine/mix.h): the text parses into endpoints or is refused naming the entry;
// smooth weighted round robin keeps every prefix within a request of its share; a run against a
// scripted server sends each endpoint its share, keeps per-endpoint books that add up to the
// run's, and each endpoint's latency is its own.
#include "engine/mix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "engine/load.h"
#include "http/url.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using testing::Action;
using testing::ScriptedServer;

TEST(Mix, ParsesEntriesWithBodiesAndRates) {
  auto m = parse_mix("GET /tracking/{shipment}=416.67/s, POST /events @ev.json=97.22/s");
  ASSERT_TRUE(m) << m.status().message();
  ASSERT_EQ(m->entries.size(), 2u);
  EXPECT_TRUE(m->rates);
  EXPECT_EQ(m->entries[0].name, "GET /tracking/{shipment}");
  EXPECT_EQ(m->entries[0].target, "/tracking/{shipment}");
  EXPECT_EQ(m->entries[0].weight, 416.67);
  EXPECT_EQ(m->entries[1].method, "POST");
  EXPECT_EQ(m->entries[1].body_file, "ev.json");
  EXPECT_NEAR(m->total_weight(), 513.89, 1e-9);
  // '=' inside a query: the weight is after the last one.
  auto q = parse_mix("POST /billing/run?date=2026-01-30=1,GET /health=3");
  ASSERT_TRUE(q) << q.status().message();
  EXPECT_FALSE(q->rates);
  EXPECT_EQ(q->entries[0].target, "/billing/run?date=2026-01-30");
}

TEST(Mix, BadTextsNameTheEntryAndTheForm) {
  for (const auto& [text, words] : std::vector<std::pair<std::string, std::string>>{
           {"GET /a", "no =WEIGHT"},
           {"GET /a=0", "weight '0' is not a number > 0"},
           {"GET /a=x", "weight 'x'"},
           {"GET /a=inf", "weight 'inf'"},
           {"/a=1", "expected METHOD and a /target"},
           {"GET a=1", "target 'a' does not start with '/'"},
           {"POST /e body.json=1", "a body is @FILE"},
           {"GET /a=1,,GET /b=1", "empty entry"},
           {"GET /a=1,GET /a=2", "listed twice"},
           {"GET /a=1/s,GET /b=2", "every weight as a rate"}}) {
    auto m = parse_mix(text);
    ASSERT_FALSE(m) << text;
    EXPECT_NE(m.status().message().find(words), std::string::npos) << m.status().message();
    EXPECT_NE(m.status().message().find("METHOD /target"), std::string::npos);
  }
}

TEST(WeightedRoundRobin, EveryPrefixIsWithinARequestOfItsShare) {
  const std::vector<double> weights{416.67, 97.22, 3.5};
  WeightedRoundRobin wrr(weights);
  std::vector<double> counts(3, 0);
  const double total = 416.67 + 97.22 + 3.5;
  for (int n = 1; n <= 20'000; ++n) {
    ++counts[wrr.next()];
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_LT(std::abs(counts[i] - n * weights[i] / total), 1.0 + 1e-9)
          << "endpoint " << i << " after " << n;
    }
  }
}

LoadOptions mix_options(const ScriptedServer& server) {
  LoadOptions o;
  o.request.url = *http::parse_url(server.url("/"));
  for (const auto& [target, weight] : std::vector<std::pair<std::string, double>>{
           {"/fast/{shipment}", 3}, {"/missing", 1}, {"/slow", 1}}) {
    MixEndpoint e{"GET " + target, o.request, weight, "", false};
    e.request.url.target = target;
    o.mix.push_back(e);
  }
  o.shipments = ShipmentDraw{500, 1.0};
  o.connections = 4;
  o.duration = 600ms;
  o.warmup = 100ms;
  o.timeout = 2s;
  return o;
}

ScriptedServer::Script mix_script() {
  return [](int, int, const std::string& head) {
    if (head.starts_with("GET /missing")) {
      return Action::respond("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    }
    if (head.starts_with("GET /slow")) return Action::respond(testing::ok_response(), 5ms);
    return Action::respond(testing::ok_response(), 1ms);
  };
}

void expect_books_add_up(const core::RunResult& r) {
  const core::RunStats& s = r.stats;
  ASSERT_EQ(s.endpoints.size(), 3u);
  uint64_t sent = 0, completed = 0, aborted = 0, failures = 0;
  int64_t samples = 0;
  for (const core::EndpointStats& e : s.endpoints) {
    sent += e.sent;
    completed += e.completed;
    aborted += e.aborted;
    failures += core::request_failures(e.errors);
    samples += e.latency_ns.count();
    EXPECT_EQ(e.sent, e.completed + core::request_failures(e.errors) + e.aborted) << e.name;
  }
  EXPECT_EQ(sent, s.sent);
  EXPECT_EQ(completed, s.completed);
  EXPECT_EQ(aborted, s.aborted);
  EXPECT_EQ(failures, s.request_failures());
  EXPECT_EQ(samples, s.latency_ns.count());
}

TEST(MixRun, ClosedLoopSendsEachEndpointItsShareAndKeepsItsBooks) {
  ScriptedServer server(mix_script());
  auto r = run_load(mix_options(server));
  ASSERT_TRUE(r) << r.status().message();
  expect_books_add_up(*r);
  const auto& e = r->stats.endpoints;
  EXPECT_EQ(e[0].name, "GET /fast/{shipment}");
  EXPECT_DOUBLE_EQ(e[0].share, 0.6);
  // One worker: its measured sends are a window of one round robin, so each endpoint is within
  // two requests of its share (one at each end of the window).
  const double sent = static_cast<double>(r->stats.sent);
  EXPECT_GT(sent, 100);
  EXPECT_NEAR(static_cast<double>(e[0].sent), 0.6 * sent, 2.0);
  EXPECT_NEAR(static_cast<double>(e[1].sent), 0.2 * sent, 2.0);
  EXPECT_NEAR(static_cast<double>(e[2].sent), 0.2 * sent, 2.0);
  EXPECT_EQ(e[1].ok(), 0u);
  EXPECT_EQ(e[1].status.at(404), e[1].completed);
  EXPECT_EQ(e[1].errors[static_cast<size_t>(core::ErrorKind::kStatus)], e[1].completed);
  EXPECT_EQ(e[0].errors[static_cast<size_t>(core::ErrorKind::kStatus)], 0u);
  EXPECT_GE(e[2].latency_ns.min(), 5'000'000) << "the slow endpoint's own latency";
  EXPECT_LT(e[0].latency_ns.value_at_percentile(50), 5'000'000) << "not mixed with the slow one's";
  // {shipment} rendered as a tracking number of ids 1..500.
  const std::regex tracking("/fast/KN(\\d{10})");
  int seen = 0;
  for (const std::string& t : server.targets()) {
    std::smatch m;
    if (!std::regex_match(t, m, tracking)) continue;
    const long id = std::stol(m[1]);
    EXPECT_GE(id, 1);
    EXPECT_LE(id, 500);
    ++seen;
  }
  EXPECT_GT(seen, 50);
}

TEST(MixRun, OpenLoopThroughputPerEndpointFollowsTheRates) {
  ScriptedServer server(mix_script());
  LoadOptions o = mix_options(server);
  o.rate_rps = 500;
  o.threads = 2;
  o.max_connections = 16;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  expect_books_add_up(*r);
  const auto& e = r->stats.endpoints;
  // 500 req/s for 0.6 s: 300 arrivals; two workers each within two of their share.
  EXPECT_EQ(r->stats.scheduled, 300u);
  EXPECT_NEAR(static_cast<double>(e[0].sent), 180, 4.0);
  EXPECT_NEAR(static_cast<double>(e[2].sent), 60, 4.0);
  uint64_t in_phase = 0;
  for (const core::EndpointStats& x : e) in_phase += x.ok_completed_in_phase;
  EXPECT_EQ(in_phase, r->stats.ok_completed_in_phase);
}

// Regression: past the last stage the schedule's "no arrival" was INT64_MAX ns, which overflowed
// when added to the start time (UBSan: signed integer overflow).
TEST(StagesRun, SendsTheRampsArrivalsAndTimesEachIntervalsTarget) {
  ScriptedServer server(ScriptedServer::always_ok());
  LoadOptions o;
  o.request.url = *http::parse_url(server.url("/"));
  o.stages = {{500ms, 400}, {500ms, 0}};
  o.rate_rps = 400;
  o.warmup = 0ms;
  o.duration = 1s;
  o.timeout = 2s;
  o.interval = 250ms;
  o.threads = 2;
  o.connections = 8;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  // Two ramps of area 0.5 * 0.5 s * 400 req/s = 100 arrivals each, the first at time 0.
  EXPECT_EQ(r->stats.scheduled, 200u);
  EXPECT_EQ(r->stats.sent, 200u);
  EXPECT_DOUBLE_EQ(r->target_rate_rps, 200);
  ASSERT_EQ(r->intervals.size(), 4u);
  const double expected[] = {100, 300, 300, 100};  // the mean rate of each quarter second
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(r->intervals[i].target_rps, expected[i], 1e-6) << i;
}

TEST(MixRun, OptionsRefuseABadEndpoint) {
  ScriptedServer server(ScriptedServer::always_ok());
  LoadOptions o = mix_options(server);
  o.mix[1].request.url.target = "/x/{nope}";
  core::Status s = o.validate();
  EXPECT_EQ(s.field(), "mix");
  EXPECT_NE(s.message().find("unknown placeholder"), std::string::npos) << s.message();
  o = mix_options(server);
  o.mix[2].weight = 0;
  EXPECT_EQ(o.validate().field(), "mix");
  o = mix_options(server);
  o.mix[0].request.method = "G T";
  EXPECT_NE(o.validate().message().find("invalid HTTP method"), std::string::npos);
}

}  // namespace
}  // namespace knee::engine
