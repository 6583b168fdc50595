// The lab server's limits (ServerOptions: header_timeout, idle_timeout, max_connections,
// max_header_bytes, max_body_bytes) over real sockets on 127.0.0.1. Timeouts are set short;
// assertions on time are lower bounds, or generous upper bounds that only a limit that does
// not fire at all would miss.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "lab/lab_server.h"
#include "support/blocking_client.h"
#include "support/io_param.h"

namespace knee::lab {
namespace {

using namespace std::chrono_literals;
using knee::testing::Client;

std::unique_ptr<LabServer> start_server(ServerOptions options) {
  options.host = "127.0.0.1";
  options.port = 0;
  options.io = knee::testing::io_under_test();
  auto server = LabServer::start(options);
  EXPECT_TRUE(server.has_value()) << server.status().message();
  return server ? std::move(server).value() : nullptr;
}

// Each of its tests runs with epoll's writes and with the send ring's (--io uring).
class LabLimits : public knee::testing::IoPathTest {};
KNEE_INSTANTIATE_IO(LabLimits);

// /health's body, from a connection of its own.
std::string health(const LabServer& server) {
  Client c(server.address());
  auto r = c.get("/health");
  return r ? r->body : std::string();
}

// Polls /health until it holds `needle` or 10 s passed; the last body.
std::string health_with(const LabServer& server, const std::string& needle) {
  std::string body;
  for (int i = 0; i < 200; ++i) {
    body = health(server);
    if (body.find(needle) != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  return body;
}

TEST_P(LabLimits, SlowHeadGets408AndIsClosedEvenWhileBytesTrickleIn) {
  ServerOptions options;
  options.header_timeout = 400ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client slow(server->address());
  const core::TimePoint start = core::Clock::now();
  // One byte every 100 ms: each one is activity, none completes the head.
  const std::string head = "GET /fast HTTP/1.1\r\nHost: lab\r\nX-Pad: aaaaaaaaaaaaaaaaaaaa";
  size_t sent = 0;
  while (sent < head.size() && !slow.readable_within(100)) {
    if (!slow.try_send(head.substr(sent++, 1))) break;
  }
  auto r = slow.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 408);
  EXPECT_EQ(r->field("Connection"), "close");
  EXPECT_TRUE(slow.closed_by_peer());
  EXPECT_GE(core::Clock::now() - start, 400ms);
  EXPECT_LT(sent, head.size());  // the timeout came before the bytes ran out
  EXPECT_NE(health(*server).find(R"("headerTimeouts":1)"), std::string::npos);
}

TEST_P(LabLimits, IdleKeepAliveConnectionClosesQuietly) {
  ServerOptions options;
  options.idle_timeout = 300ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  // The server's idle clock starts when it has answered, after this and before the answer
  // arrives. Regression: the bound was taken after the answer arrived, so a client thread slow
  // to read it (the CPUs busy with other tests) saw the close after 299.9 ms.
  const core::TimePoint asked = core::Clock::now();
  auto r = c.get("/fast");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  Client silent(server->address());  // connects, never sends
  EXPECT_TRUE(c.closed_by_peer());   // no bytes: a quiet close, no 408
  EXPECT_GE(core::Clock::now() - asked, 300ms);
  EXPECT_TRUE(silent.closed_by_peer());
  EXPECT_NE(health(*server).find(R"("idleClosed":2)"), std::string::npos);
}

TEST_P(LabLimits, ActiveConnectionIsNotIdle) {
  ServerOptions options;
  options.idle_timeout = 1s;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  for (int i = 0; i < 10; ++i) {  // 2 s of requests 200 ms apart
    auto r = c.get("/fast");
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->status, 200);
    std::this_thread::sleep_for(200ms);
  }
}

// Each request's clock starts when the one before it was consumed: a chain of requests, each
// split over two sends 120 ms apart so that the read buffer never empties, outlives the header
// timeout without a 408 (regression: the clock started only when a read landed in an empty
// buffer, so the chain's first byte timed out the fourth request).
TEST_P(LabLimits, RequestChainThatNeverEmptiesTheBufferIsNot408) {
  ServerOptions options;
  options.header_timeout = 200ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  const std::string get = "GET /fast HTTP/1.1\r\nHost: lab\r\n\r\n";
  const size_t half = get.size() / 2;
  c.send(get.substr(0, half));
  for (int i = 0; i < 8; ++i) {  // 960 ms in all
    std::this_thread::sleep_for(120ms);
    c.send(get.substr(half) + get.substr(0, half));  // the end of one, the start of the next
    auto r = c.read_response();
    ASSERT_TRUE(r) << i;
    ASSERT_EQ(r->status, 200) << i;
  }
}

// An HTTP/2 stream whose request never completes (HEADERS without END_STREAM) is the client's
// slow head: 408 on the stream, GOAWAY and close after header_timeout, counted as a header
// timeout. Regression (a trial): the stream got no answer, only GOAWAY and the close.
TEST_P(LabLimits, IncompleteHttp2StreamIsTimedOut) {
  ServerOptions options;
  options.header_timeout = 300ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  std::string h2 = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  h2 += std::string("\x00\x00\x00\x04\x00\x00\x00\x00\x00", 9);  // SETTINGS, empty
  // HEADERS, END_HEADERS only (0x04), stream 1: GET, http, /, :authority "lab".
  h2 += std::string("\x00\x00\x08\x01\x04\x00\x00\x00\x01\x82\x86\x84\x41\x03lab", 17);
  c.send(h2);
  const core::TimePoint start = core::Clock::now();
  // The body keeps coming after the timeout: the server reads it (and drops it) until the
  // client is done, as after HTTP/1.1's 408, where a closed socket would answer it with a reset
  // that can take the 408 with it (review).
  // DATA on stream 1, "body" (a separate literal: a hex escape would swallow its "b").
  const std::string data(std::string("\x00\x00\x04\x00\x00\x00\x00\x00\x01", 9) + "body");
  std::this_thread::sleep_for(600ms);
  c.send(data);
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(c.try_send(data)) << "the server closed: its socket reset the connection";
  c.shutdown_write();
  const std::string answer = c.read_until_closed();
  EXPECT_GE(core::Clock::now() - start, 300ms);
  // The 408's body goes in a DATA frame as it is (HPACK compresses only the fields).
  EXPECT_NE(answer.find("the request did not arrive within the header timeout (300 ms)"),
            std::string::npos);
  EXPECT_FALSE(c.reset_by_peer()) << "closed with the client's bytes unread";
  // In /metrics as HTTP/1.1's 408 is (review: it was counted nowhere).
  Client m(server->address());
  auto metrics = m.get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("knee_lab_requests_total{route=\"other\",status=\"408\"} 1"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(health(*server).find(R"("headerTimeouts":1)"), std::string::npos);
}

TEST_P(LabLimits, ConnectionsOverTheLimitGet503AndTheCountFreesOnClose) {
  ServerOptions options;
  options.max_connections = 2;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  auto first = std::make_unique<Client>(server->address());
  Client second(server->address());
  ASSERT_TRUE(first->get("/fast"));
  ASSERT_TRUE(second.get("/fast"));
  {
    Client third(server->address());
    auto r = third.get("/fast");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(r->field("Connection"), "close");
    EXPECT_TRUE(third.closed_by_peer());
  }
  first.reset();  // one place frees, once the server has read the close
  std::string body;
  for (int i = 0; i < 100 && body.empty(); ++i) {
    std::this_thread::sleep_for(50ms);
    Client again(server->address());
    auto r = again.get("/health");
    if (r && r->status == 200) body = r->body;  // a 503 meanwhile counts as one more refusal
  }
  EXPECT_NE(body.find(R"("open":2)"), std::string::npos) << body;     // second and this one
  EXPECT_EQ(body.find(R"("refused":0)"), std::string::npos) << body;  // the third, at least
}

TEST_P(LabLimits, HeaderSectionOverTheLimitIs431) {
  ServerOptions options;
  options.max_header_bytes = 512;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  auto request = [](size_t pad) {
    return "GET /fast HTTP/1.1\r\nHost: lab\r\nX-Pad: " + std::string(pad, 'p') + "\r\n\r\n";
  };
  Client fits(server->address());
  fits.send(request(400));
  auto ok = fits.read_response();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  Client over(server->address());
  over.send(request(600));
  auto r = over.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  EXPECT_TRUE(over.closed_by_peer());
}

TEST_P(LabLimits, BodyOverTheLimitIs413WithoutReadingIt) {
  ServerOptions options;
  options.max_body_bytes = 100;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client small(server->address());
  auto fine = small.post("/fast", std::string(100, 'b'), "text/plain");
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->status, 405);  // read past, then answered: /fast takes GET
  Client big(server->address());
  big.send("POST /fast HTTP/1.1\r\nHost: lab\r\nContent-Length: 1000000000\r\n\r\n");
  auto r = big.read_response();  // at once: no gigabyte awaited
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(big.closed_by_peer());
}

TEST(LabLimitOptions, BadLimitsAreRefusedNamingTheField) {
  ServerOptions options;
  options.header_timeout = 0ms;
  auto a = LabServer::start(options);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.status().field(), "header_timeout");
  options = {};
  options.max_header_bytes = 100;
  auto b = LabServer::start(options);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().field(), "max_header_bytes");
  options = {};
  options.max_connections = 1 << 30;  // more than any open-file limit leaves
  auto c = LabServer::start(options);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.status().field(), "max_connections");
  EXPECT_NE(c.status().message().find("ulimit -n"), std::string::npos);
}

// /fast's latency on one connection, `n` requests: the 99th percentile, ns.
int64_t fast_p99_ns(Client& c, int n) {
  std::vector<int64_t> ns;
  for (int i = 0; i < n; ++i) {
    const core::TimePoint t0 = core::Clock::now();
    auto r = c.get("/fast");
    if (!r || r->status != 200) {
      ADD_FAILURE() << "request " << i;
      return 0;
    }
    ns.push_back((core::Clock::now() - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  return ns[static_cast<size_t>(n) * 99 / 100];
}

// 1,000 slow-header clients (slowloris) hold a connection each with a head that never ends.
// /fast on another connection still answers every request, with a p99 near its usual one
// (the slow heads cost the loop nothing until they time out), and the slow ones all get 408.
TEST_P(LabLimits, ThousandSlowHeadsDoNotStopFast) {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_max < 2200) GTEST_SKIP() << "needs 2,200 open files (ulimit -Hn)";
  ServerOptions options;
  options.header_timeout = 3s;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client fast(server->address());
  const int64_t usual = fast_p99_ns(fast, 2000);
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 1000; ++i) {
    slow.push_back(std::make_unique<Client>(server->address()));
    ASSERT_TRUE(slow.back()->connected()) << i;
    slow.back()->send("GET /fast HTTP/1.1\r\nHost: lab\r\nX-Slow: ");
  }
  for (auto& s : slow) s->send("x");  // each one's head goes on, never ending
  const int64_t attacked = fast_p99_ns(fast, 2000);
  std::printf("/fast p99 on its own connection: %.0f us alone, %.0f us beside 1,000 slow heads\n",
              static_cast<double>(usual) / 1e3, static_cast<double>(attacked) / 1e3);
  // Generous, for a loaded VM: a loop the slow heads held would add their whole 3 s timeout.
  EXPECT_LT(attacked, std::max<int64_t>(10 * usual, usual + 20'000'000))
      << "usual p99 " << usual << " ns, with 1,000 slow heads " << attacked << " ns";
  const std::string body = health_with(*server, R"("headerTimeouts":1000)");
  EXPECT_NE(body.find(R"("headerTimeouts":1000)"), std::string::npos) << body;
  for (auto& s : slow) {
    auto r = s->read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 408);
  }
}

TEST_P(LabLimits, StopStillDrainsWithSlowAndIdleConnectionsOpen) {
  ServerOptions options;
  options.drain_idle = 100ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 50; ++i) {
    idle.push_back(std::make_unique<Client>(server->address()));
    idle.back()->send(i % 2 == 0 ? "GET /fast HTTP/1.1\r\nHost: lab\r\n" : "");
  }
  Client busy(server->address());
  busy.send("GET /slow-async?ms=300 HTTP/1.1\r\nHost: lab\r\n\r\n");
  std::this_thread::sleep_for(50ms);
  const core::TimePoint stop = core::Clock::now();
  server->request_stop();
  auto r = busy.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->field("Connection"), "close");
  EXPECT_EQ(server->wait(), 0);  // a clean drain: nothing cut off
  EXPECT_LT(core::Clock::now() - stop, 3s);
  for (auto& c : idle) EXPECT_TRUE(c->closed_by_peer());
}

}  // namespace
}  // namespace knee::lab
