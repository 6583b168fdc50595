// Nothing vanishes from the accounting (issue 11): against scripted servers on 127.0.0.1 that
// hang, close, cut responses short or go away, every request of the warm-up and of the measured
// phase ends in exactly one count, bytes are counted exactly, and the target's going away is
// recorded. The invariants, for both phases:
//   open loop:  scheduled == sent + never_sent
//   both loops: sent == completed + request_failures + aborted
// Every test runs with both ways of writing requests (net::IoPath): /epoll and /uring.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "engine/load.h"
#include "http/url.h"
#include "support/io_param.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using core::ErrorKind;
using testing::Action;
using testing::ScriptedServer;

LoadOptions options_for(const std::string& url, int connections, core::Nanos warmup,
                        core::Nanos duration) {
  LoadOptions o;
  o.request.url = *http::parse_url(url);
  o.connections = connections;
  o.duration = duration;
  o.warmup = warmup;
  o.timeout = 200ms;
  o.grace = 300ms;
  o.io = knee::testing::io_under_test();
  return o;
}

// Each test runs with requests written by send(2) (/epoll) and through the send ring (/uring).
class Accounting : public knee::testing::IoPathTest {};
KNEE_INSTANTIATE_IO(Accounting);

// Both invariants for both phases; `where` names the case in a failure.
void expect_accounted(const core::RunResult& r, const std::string& where) {
  const core::RunStats& s = r.stats;
  EXPECT_EQ(s.sent, s.completed + s.request_failures() + s.aborted)
      << where << ": measured sent " << s.sent << ", completed " << s.completed << ", failed "
      << s.request_failures() << ", aborted " << s.aborted;
  const core::WarmupStats& w = s.warmup;
  EXPECT_EQ(w.sent, w.completed + w.failed() + w.aborted)
      << where << ": warm-up sent " << w.sent << ", completed " << w.completed << ", failed "
      << w.failed() << ", aborted " << w.aborted;
  if (r.open_loop()) {
    EXPECT_EQ(s.scheduled, s.sent + s.never_sent) << where << ": measured";
    EXPECT_EQ(w.scheduled, w.sent + w.never_sent) << where << ": warm-up";
  }
}

// ---- warm-up

// Regression: the two requests sent during warm-up to a server that never answers were dropped
// from every figure ("0 completed, 0 failed, errors none") and the run took the 10 s timeout.
TEST_P(Accounting, WarmUpRequestsStillInFlightAreCarriedOverAndCounted) {
  ScriptedServer server([](int, int, const std::string&) { return Action::hang(); });
  LoadOptions o = options_for(server.url("/"), 2, 300ms, 300ms);
  o.timeout = 10s;
  o.grace = 10s;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  const core::WarmupStats& w = r->stats.warmup;
  EXPECT_EQ(w.sent, 2u);
  EXPECT_EQ(w.carried_over, 2u);
  EXPECT_EQ(w.aborted, 2u);  // still unanswered when the run stopped
  EXPECT_EQ(r->stats.sent, 0u);
  expect_accounted(*r, "hang");
  // Only warm-up requests were left in flight, so the run did not wait out its 10 s grace
  // period for them (a wait of 10 s or none: a behaviour, not a speed).
  EXPECT_LT(r->stats.client_wall_ns, 5'000'000'000);
}

// Regression: a server that closes every connection without answering had its warm-up
// requests mentioned nowhere.
TEST_P(Accounting, WarmUpFailuresAreCountedByKind) {
  ScriptedServer server([](int, int, const std::string&) { return Action::close(); });
  auto r = run_load(options_for(server.url("/"), 2, 200ms, 200ms));
  ASSERT_TRUE(r) << r.status().message();
  const core::WarmupStats& w = r->stats.warmup;
  EXPECT_GT(w.sent, 0u);
  EXPECT_GT(w.errors[static_cast<size_t>(ErrorKind::kClosedBeforeResponse)], 0u);
  EXPECT_EQ(w.completed, 0u);
  expect_accounted(*r, "close");
}

// Regression: with -w 0, 1-4 requests were still classified as warm-up.
TEST_P(Accounting, NoWarmUpMeansNoWarmUpRequest) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  for (bool open : {false, true}) {
    LoadOptions o = options_for(server.url("/"), 4, 0ms, 200ms);
    if (open) o.rate_rps = 2000;
    auto r = run_load(o);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->stats.warmup.sent, 0u) << (open ? "open" : "closed");
    EXPECT_EQ(r->stats.warmup.scheduled, 0u);
    EXPECT_EQ(r->stats.warmup.completed, 0u);
    EXPECT_GT(r->stats.sent, 0u);
    expect_accounted(*r, open ? "open -w 0" : "closed -w 0");
  }
}

// Regression: at a rate the client cannot reach, the throughput counted warm-up responses
// ("rate 0.0 req/s achieved" next to "throughput 244578 req/s").
TEST_P(Accounting, OpenLoopThroughputCountsMeasuredRequestsOnly) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  LoadOptions o = options_for(server.url("/"), 2, 200ms, 200ms);
  o.rate_rps = 1'000'000;
  o.max_connections = 2;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_LE(r->stats.ok_completed_in_phase, r->stats.sent);
  EXPECT_LE(r->throughput_rps(), r->achieved_rate_rps() * 1.0001 + 1.0 / r->duration_s);
  // A request that waited for a busy connection and never left the client is not sent.
  EXPECT_GT(r->stats.never_sent, 0u);
  // Both connections were busy nearly all the time: the pool was exhausted.
  EXPECT_GT(r->stats.pool_full_ns, r->duration_s * 1e9 / 2);
  expect_accounted(*r, "open 1M/s");
}

// ---- every way a response can go wrong, at random

// A deterministic per-request choice: answers, answers late, closes, hangs past the timeout,
// cuts the headers or the body short, or breaks the framing.
Action random_action(uint64_t seed, int conn, int request) {
  const uint64_t c = static_cast<uint32_t>(conn), q = static_cast<uint32_t>(request);
  uint64_t x = seed * UINT64_C(0x9E3779B97F4A7C15) + c * UINT64_C(0xBF58476D1CE4E5B9) +
               q * UINT64_C(0x94D049BB133111EB);
  x ^= x >> 31;
  x *= UINT64_C(0xD6E8FEB86659FD93);
  x ^= x >> 32;
  switch (x % 20) {
    case 0:
      return Action::close();
    case 1:
      return Action::hang();
    case 2:
      return Action::respond("HTTP/1.1 200 OK\r\nContent-Le", 0ms, /*close_after=*/true);
    case 3:
      return Action::respond("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc", 0ms, true);
    case 4:
      return Action::respond("garbage\r\n\r\n", 0ms, true);
    case 5:
      return Action::respond("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n");
    case 6:
    case 7:
      return Action::respond(testing::ok_response(), std::chrono::milliseconds(x % 30));
    default:
      return Action::respond(testing::ok_response());
  }
}

TEST_P(Accounting, EveryRequestEndsInExactlyOneCountUnderRandomServerBehaviour) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ScriptedServer server([seed](int conn, int request, const std::string&) {
      return random_action(seed, conn, request);
    });
    for (bool open : {false, true}) {
      LoadOptions o = options_for(server.url("/"), 4, 150ms, 250ms);
      o.timeout = 100ms;
      o.grace = 50ms;  // short: some requests are still in flight at the end (aborted)
      if (open) {
        o.rate_rps = 400;
        o.max_connections = 4;
        o.arrival = Arrival::kPoisson;
        o.seed = seed;
      }
      auto r = run_load(o);
      ASSERT_TRUE(r) << r.status().message();
      const std::string where = fmt::format("seed {} {}", seed, open ? "open" : "closed");
      expect_accounted(*r, where);
      EXPECT_GT(r->stats.request_failures(), 0u) << where;  // the script did misbehave
    }
  }
}

// ---- error kinds

TEST_P(Accounting, ACloseMidHeadersAndOneMidBodyAreDifferentKinds) {
  ScriptedServer headers([](int, int, const std::string&) {
    return Action::respond("HTTP/1.1 200 OK\r\nContent-Le", 0ms, true);
  });
  auto r = run_load(options_for(headers.url("/"), 1, 0ms, 100ms));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_GT(r->stats.error_count(ErrorKind::kEofMidHeaders), 0u);
  EXPECT_EQ(r->stats.error_count(ErrorKind::kEofMidBody), 0u);

  ScriptedServer body([](int, int, const std::string&) {
    return Action::respond("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc", 0ms, true);
  });
  r = run_load(options_for(body.url("/"), 1, 0ms, 100ms));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_GT(r->stats.error_count(ErrorKind::kEofMidBody), 0u);
  EXPECT_EQ(r->stats.error_count(ErrorKind::kEofMidHeaders), 0u);
  EXPECT_EQ(r->stats.causes.count("eof_mid_body: received 3 of 100 bytes"), 1u);
}

// ---- bytes

struct BytesCase {
  const char* name;
  const char* method;
  std::string response;
  uint64_t body_bytes;  // the decoded payload
  bool close_after;
};

// Bytes received and their body part are exact for every framing: received = the response's
// bytes, body = the payload, once per completed request.
TEST_P(Accounting, BytesAreExactForEveryFraming) {
  const std::string mib(1 << 20, 'x');
  const std::string sixteen_mib(16 << 20, 'y');
  const BytesCase cases[] = {
      {"content-length", "GET", testing::ok_response("hello world"), 11, false},
      {"close-delimited", "GET", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n0123456789", 10,
       true},
      {"chunked with extensions and trailers", "GET",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n"
       "6\r\n world\r\n0\r\nX-Checksum: 1\r\n\r\n",
       11, false},
      {"HEAD", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 0, false},
      {"204", "GET", "HTTP/1.1 204 No Content\r\n\r\n", 0, false},
      {"304", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", 0, false},
      {"1 MiB", "GET", testing::ok_response(mib), mib.size(), false},
      {"16 MiB", "GET", testing::ok_response(sixteen_mib), sixteen_mib.size(), false},
  };
  for (const BytesCase& c : cases) {
    ScriptedServer server([&c](int, int, const std::string&) {
      return Action::respond(c.response, 0ms, c.close_after);
    });
    LoadOptions o = options_for(server.url("/"), 1, 0ms, 150ms);
    o.request.method = c.method;
    o.timeout = 2s;
    o.grace = 2s;
    auto r = run_load(o);
    ASSERT_TRUE(r) << c.name << ": " << r.status().message();
    const core::RunStats& s = r->stats;
    ASSERT_GT(s.completed, 0u) << c.name;
    EXPECT_EQ(s.total_errors(), 0u) << c.name;
    EXPECT_EQ(s.aborted, 0u) << c.name;
    EXPECT_EQ(s.bytes_received, s.completed * c.response.size()) << c.name;
    EXPECT_EQ(s.bytes_received_body, s.completed * c.body_bytes) << c.name;
    // Every request is the same bytes: sent is a whole multiple of one request.
    ASSERT_GT(s.sent, 0u);
    EXPECT_EQ(s.bytes_sent % s.sent, 0u) << c.name;
    EXPECT_GE(s.bytes_sent / s.sent, std::string("GET / HTTP/1.1\r\n\r\n").size()) << c.name;
  }
}

// Regression (a new user's trial): bytes after a complete response (a body longer than its
// Content-Length) closed the connection without a word; they are counted, with the connections
// closed for them, and are part of the bytes received.
TEST_P(Accounting, BytesNoRequestAskedForAreCountedWithTheConnectionsClosedForThem) {
  const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok!!";
  ScriptedServer server(
      [&response](int, int, const std::string&) { return Action::respond(response); });
  auto r = run_load(options_for(server.url("/"), 2, 0ms, 200ms));
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  ASSERT_GT(s.completed, 0u);
  EXPECT_EQ(s.total_errors(), 0u);  // each response was whole; the "!!" came after it
  EXPECT_GT(s.unsolicited_closes, 0u);
  EXPECT_EQ(s.unsolicited_bytes, 2 * s.unsolicited_closes);
  EXPECT_EQ(s.bytes_received, s.completed * (response.size() - 2) + s.unsolicited_bytes);
  // Every close but those of the end is followed by a new connection on its slot.
  EXPECT_GE(s.reconnects + 2, s.unsolicited_closes);
  expect_accounted(*r, "unsolicited");
}

// Regression: the bytes after the one that broke HTTP/1.1 framing were left out of the bytes
// received.
TEST_P(Accounting, ABrokenResponseCountsEveryByteReceived) {
  const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello";
  ScriptedServer server(
      [&response](int, int, const std::string&) { return Action::respond(response); });
  auto r = run_load(options_for(server.url("/"), 1, 0ms, 150ms));
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  ASSERT_GT(s.error_count(ErrorKind::kParse), 0u);
  EXPECT_EQ(s.bytes_received, s.error_count(ErrorKind::kParse) * response.size());
  expect_accounted(*r, "parse");
}

// ---- Nagle meets delayed ACK

// A server that writes its headers and its body in two calls with Nagle on: the body waits for
// the client's delayed ACK of the headers (44 ms a request on loopback, which wrk reports
// without a word). knee measures it as clients see it and counts the split responses.
TEST_P(Accounting, ResponsesSplitByNagleAndDelayedAckAreCounted) {
  const std::string response = testing::ok_response("hello");
  const size_t headers = response.size() - 5;
  ScriptedServer split(
      [&](int, int, const std::string&) { return Action::respond_split(response, headers); });
  auto r = run_load(options_for(split.url("/"), 1, 0ms, 1500ms));
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  ASSERT_GT(s.completed, 10u);
  // Most of them: the kernel acknowledges at once now and then (quick-ack after a connection
  // starts, or when it thinks the peer is interactive), so not every response waits.
  EXPECT_GE(s.split_responses * 2, s.completed) << s.split_responses << " of " << s.completed;
  EXPECT_GE(s.split_responses, 5u);
  ASSERT_GT(s.split_responses, 0u);
  const double mean_gap_ms =
      static_cast<double>(s.split_gap_ns) / static_cast<double>(s.split_responses) / 1e6;
  EXPECT_GE(mean_gap_ms, 30);
  EXPECT_GE(s.latency_ns.value_at_percentile(50), 30'000'000);
  EXPECT_EQ(s.bytes_received, s.completed * response.size());

  ScriptedServer whole([&](int, int, const std::string&) { return Action::respond(response); });
  r = run_load(options_for(whole.url("/"), 1, 0ms, 300ms));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->stats.split_responses, 0u);
}

// ---- the target going away

// Regression: a target that stopped answering mid-run was reported as a client that could not
// keep its schedule. The run records the target's last sign of life and the connects refused
// after it.
TEST_P(Accounting, ATargetThatGoesAwayLeavesItsLastAnswerAndTheRefusedConnects) {
  for (bool open : {false, true}) {
    ScriptedServer server([](int, int, const std::string&) {
      return Action::respond(testing::ok_response(), 0ms, /*close_after=*/true);
    });
    LoadOptions o = options_for(server.url("/"), 2, 0ms, 3000ms);
    if (open) o.rate_rps = 500;
    std::thread away([&server] {
      std::this_thread::sleep_for(400ms);
      server.go_away();
    });
    auto r = run_load(o);
    away.join();
    ASSERT_TRUE(r) << r.status().message();
    const core::RunStats& s = r->stats;
    const std::string where = open ? "open" : "closed";
    EXPECT_GT(s.connect_failures_after_ok, 0u) << where;
    ASSERT_GE(s.last_ok_ns, 0) << where;
    EXPECT_LT(s.last_ok_ns, 2'000'000'000) << where;  // about 400 ms, far from the 3 s end
    EXPECT_GT(s.error_count(ErrorKind::kConnect), 0u) << where;
    expect_accounted(*r, where);
  }
}

// Regression (a trial): an open loop whose server was killed mid-run waited out its whole grace
// period (10 s) for connections to carry the requests waiting for one; its connects kept
// failing. With nothing in flight, a failed connect after the phase ends the wait: they are
// counted never sent. (A wait of 10 s or none: a behaviour, not a speed.)
TEST_P(Accounting, AnOpenLoopWhoseTargetWentAwayDoesNotWaitOutTheGrace) {
  ScriptedServer server(ScriptedServer::always_ok());
  LoadOptions o = options_for(server.url("/"), 2, 0ms, 800ms);
  o.rate_rps = 500;
  o.timeout = 10s;
  o.grace = 10s;
  std::thread away([&server] {
    std::this_thread::sleep_for(300ms);
    server.go_away();
  });
  auto r = run_load(o);
  away.join();
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  EXPECT_GT(s.never_sent, 0u) << "the requests due after the server went away";
  EXPECT_GT(s.error_count(ErrorKind::kConnect), 0u);
  EXPECT_LT(s.client_wall_ns, 5'000'000'000) << "the run waited out its grace period";
  expect_accounted(*r, "open, target gone");
}

}  // namespace
}  // namespace knee::engine
