// LabServer over real sockets on 127.0.0.1, with a small blocking client. Timing assertions are
// lower bounds only; every read has a generous timeout so a bug fails instead of hanging.
#include "lab/lab_server.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "lab/server_process.h"
#include "support/blocking_client.h"
#include "support/io_param.h"

namespace knee::lab {
namespace {

using namespace std::chrono_literals;

using knee::testing::Client;
using knee::testing::Response;

std::unique_ptr<LabServer> start_server(ServerOptions options = {}) {
  options.host = "127.0.0.1";
  options.port = 0;
  options.io = knee::testing::io_under_test();
  auto server = LabServer::start(options);
  EXPECT_TRUE(server.has_value()) << server.status().message();
  return server ? std::move(server).value() : nullptr;
}

// Each of its tests runs with epoll's writes and with the send ring's (--io uring).
class LabServerIo : public knee::testing::IoPathTest {};
KNEE_INSTANTIATE_IO(LabServerIo);

TEST_P(LabServerIo, BindsAnEphemeralPort) {
  auto server = start_server();
  ASSERT_TRUE(server);
  EXPECT_GT(server->address().port(), 0);
  EXPECT_EQ(server->address().to_string().rfind("127.0.0.1:", 0), 0u);
  server->request_stop();
  EXPECT_EQ(server->wait(), 0);
  EXPECT_EQ(server->wait(), 0);
  EXPECT_TRUE(server->failure()) << "no loop failed: " << server->failure().message();
}

TEST(BuiltinUrl, IsTheTrackingEndpointWithOneNumberPerConnectionAndRequest) {
  EXPECT_EQ(builtin_url(false, 8080), "http://127.0.0.1:8080/tracking?no=G{conn}-{seq}");
  EXPECT_EQ(builtin_url(true, 1), "https://127.0.0.1:1/tracking?no=G{conn}-{seq}");
}

TEST_P(LabServerIo, FastAnswersSmallJson) {
  ServerOptions options;
  options.instance = "lab-7";
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  auto r = c.get("/fast");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"ok":true,"instance":"lab-7"})");
  EXPECT_EQ(r->field("Content-Type"), "application/json");
  EXPECT_EQ(r->field("Content-Length"), std::to_string(r->body.size()));
  EXPECT_EQ(r->field("Connection"), "");
  EXPECT_EQ(r->field("Date").size(), 29u);
  // Keep-alive: the same connection serves again.
  auto again = c.get("/fast");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

TEST_P(LabServerIo, TrackingTakesAtLeastWaitPlusCpuAndEchoesTheNumber) {
  ServerOptions options;
  options.wait = 20ms;
  options.cpu = 5ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  const core::Nanos cpu_before = core::process_cpu_time();
  const core::TimePoint start = core::Clock::now();
  auto r = c.get("/tracking?no=G1-0");
  const core::Nanos elapsed = core::Clock::now() - start;
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"no":"G1-0","state":"at transit hub","zone":"35","step":4})");
  EXPECT_GE(elapsed, 25ms);
  // The server runs in this process: its CPU share shows in our process CPU time.
  EXPECT_GE(core::process_cpu_time() - cpu_before, 5ms);
}

TEST_P(LabServerIo, TrackingWithoutNumberSaysDashAndEscapesJson) {
  ServerOptions options;
  options.wait = 0ms;
  options.cpu = 0ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  auto r = c.get("/tracking");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, R"({"no":"-","state":"at transit hub","zone":"35","step":4})");
  r = c.get("/tracking?no=a%22b%5C+%0A");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, R"({"no":"a\"b\\ \n","state":"at transit hub","zone":"35","step":4})");
}

TEST_P(LabServerIo, SlowAsyncWaitsWithoutBlockingOtherConnections) {
  auto server = start_server();  // one thread
  ASSERT_TRUE(server);
  Client slow(server->address());
  Client fast(server->address());
  const core::TimePoint start = core::Clock::now();
  slow.send("GET /slow-async?ms=1000 HTTP/1.1\r\nHost: lab\r\n\r\n");
  auto f = fast.get("/fast");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 200);
  EXPECT_FALSE(slow.readable_within(0)) << "the timer wait should still be running";
  auto s = slow.read_response();
  ASSERT_TRUE(s);
  EXPECT_GE(core::Clock::now() - start, 1000ms);
  EXPECT_EQ(s->body, R"({"ok":true,"mode":"async","ms":1000,"instance":"app1"})");
}

TEST_P(LabServerIo, SlowSyncBlocksTheLoop) {
  auto server = start_server();  // one thread
  ASSERT_TRUE(server);
  Client blocker(server->address());
  Client victim(server->address());
  const core::Nanos cpu_before = core::process_cpu_time();
  blocker.send("GET /slow-sync?ms=200 HTTP/1.1\r\nHost: lab\r\n\r\n");
  std::this_thread::sleep_for(20ms);
  auto v = victim.get("/fast");
  ASSERT_TRUE(v);
  // The loop answered the victim only after the blocking handler finished and wrote its answer.
  EXPECT_TRUE(blocker.readable_within(0));
  auto b = blocker.read_response();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body, R"({"ok":true,"mode":"sync-blocking","ms":200,"instance":"app1"})");
  EXPECT_GE(core::process_cpu_time() - cpu_before, 200ms);
}

TEST_P(LabServerIo, BadMsIs400AndKeepsTheConnection) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  for (const char* target : {"/slow-sync?ms=abc", "/slow-async?ms=-1", "/slow-sync?ms=60001"}) {
    auto r = c.get(target);
    ASSERT_TRUE(r) << target;
    EXPECT_EQ(r->status, 400) << target;
    EXPECT_EQ(r->field("Connection"), "") << target;
  }
  auto ok = c.get("/slow-sync?ms=0");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, R"({"ok":true,"mode":"sync-blocking","ms":0,"instance":"app1"})");
}

TEST_P(LabServerIo, HealthSumsCountersOverThreads) {
  ServerOptions options;
  options.threads = 3;
  options.instance = "app2";
  auto server = start_server(options);
  ASSERT_TRUE(server);
  for (int i = 0; i < 9; ++i) {
    Client c(server->address());
    ASSERT_TRUE(c.get("/fast"));
  }
  Client c(server->address());
  auto r = c.get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.rfind(R"({"status":"ok","instance":"app2","uptimeSec":)", 0), 0u) << r->body;
  // The connection counts follow (LabLimits tests them; the 9 closes may not be seen yet).
  EXPECT_NE(r->body.find(R"(,"inFlight":1,"totalRequests":10,"connections":{"open":)"),
            std::string::npos)
      << r->body;
}

TEST_P(LabServerIo, HealthCountsRequestsWaitingOnTimers) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client slow(server->address());
  slow.send("GET /slow-async?ms=500 HTTP/1.1\r\nHost: lab\r\n\r\n");
  Client c(server->address());
  std::string body;
  for (int i = 0; i < 200 && body.find(R"("inFlight":2)") == std::string::npos; ++i) {
    auto r = c.get("/health");
    ASSERT_TRUE(r);
    body = r->body;
  }
  EXPECT_NE(body.find(R"("inFlight":2)"), std::string::npos) << body;
  ASSERT_TRUE(slow.read_response());
}

TEST_P(LabServerIo, HeadHasTheLengthButNoBody) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  c.send("HEAD /fast HTTP/1.1\r\nHost: lab\r\n\r\n");
  auto r = c.read_response(/*head_request=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->field("Content-Length"), "29");
  // Nothing follows the head: the next response starts right after it.
  auto next = c.get("/fast");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body.size(), 29u);
}

TEST_P(LabServerIo, UnknownPathIs404AndOtherMethodsAre405) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  auto r = c.get("/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  c.send("POST /fast HTTP/1.1\r\nHost: lab\r\nContent-Length: 5\r\n\r\nhello");
  r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->field("Allow"), "GET, HEAD");
  // The body was skipped: the connection is still in step.
  r = c.get("/fast");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_P(LabServerIo, Http10ClosesAfterTheResponse) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  c.send("GET /fast HTTP/1.0\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(r->field("Connection"), "close");
  EXPECT_TRUE(c.closed_by_peer());
}

TEST_P(LabServerIo, Http10KeepAliveOnRequest) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  for (int i = 0; i < 2; ++i) {
    c.send("GET /fast HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->field("Connection"), "keep-alive");
  }
}

TEST_P(LabServerIo, ConnectionCloseIsHonoured) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  c.send("GET /fast HTTP/1.1\r\nHost: lab\r\nConnection: close\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->field("Connection"), "close");
  EXPECT_TRUE(c.closed_by_peer());
}

TEST_P(LabServerIo, PipelinedRequestsAreAnsweredInOrder) {
  ServerOptions options;
  options.wait = 5ms;
  options.cpu = 0ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  c.send(
      "GET /slow-async?ms=50 HTTP/1.1\r\nHost: lab\r\n\r\n"
      "GET /fast HTTP/1.1\r\nHost: lab\r\n\r\n"
      "GET /tracking?no=P3 HTTP/1.1\r\nHost: lab\r\n\r\n"
      "HEAD /fast HTTP/1.1\r\nHost: lab\r\n\r\n"
      "GET /nope HTTP/1.1\r\nHost: lab\r\n\r\n"
      "GET /slow-sync?ms=1 HTTP/1.1\r\nHost: lab\r\n\r\n");
  auto r1 = c.read_response();
  auto r2 = c.read_response();
  auto r3 = c.read_response();
  auto r4 = c.read_response(/*head_request=*/true);
  auto r5 = c.read_response();
  auto r6 = c.read_response();
  ASSERT_TRUE(r1 && r2 && r3 && r4 && r5 && r6);
  EXPECT_NE(r1->body.find(R"("mode":"async")"), std::string::npos);
  EXPECT_EQ(r2->body, R"({"ok":true,"instance":"app1"})");
  EXPECT_NE(r3->body.find(R"("no":"P3")"), std::string::npos);
  EXPECT_EQ(r4->status, 200);
  EXPECT_EQ(r5->status, 404);
  EXPECT_NE(r6->body.find(R"("mode":"sync-blocking")"), std::string::npos);
}

// Regression (a new user's trial): a pipelined request whose request line came in one read and
// the rest of its head in the next was answered for whatever bytes the parser's views then
// pointed at (here a 404): the server moves unread bytes to the front of its buffer between
// the reads.
TEST_P(LabServerIo, APipelinedHeadSplitAcrossReadsIsAnsweredForItsOwnTarget) {
  ServerOptions options;
  options.wait = 0ms;
  options.cpu = 0ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client c(server->address());
  c.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\nGET /tracking?no=AAAA HTTP/1.1\r\n");
  auto first = c.read_response();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  std::this_thread::sleep_for(50ms);  // the server has read the request line alone
  c.send("Host: x\r\n\r\n");
  auto second = c.read_response();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 200) << second->body;
  EXPECT_NE(second->body.find(R"("no":"AAAA")"), std::string::npos) << second->body;
}

// Regression (--io uring): a response waited in the send ring while the loop burnt CPU for the
// next connection's request, so /fast took as long as the /slow-sync behind it (the built-in
// sweep's knee moved). Two requests arrive while the loop is busy, /fast first: its answer must
// be out while the second is still being served.
TEST_P(LabServerIo, AnAnswerDoesNotWaitForTheNextRequestsCpu) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client busy(server->address()), fast(server->address()), slow(server->address());
  busy.send("GET /slow-sync?ms=200 HTTP/1.1\r\nHost: lab\r\n\r\n");
  std::this_thread::sleep_for(50ms);  // the loop is now burning for `busy`
  fast.send("GET /fast HTTP/1.1\r\nHost: lab\r\n\r\n");
  slow.send("GET /slow-sync?ms=200 HTTP/1.1\r\nHost: lab\r\n\r\n");
  auto answer = fast.read_response();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_FALSE(slow.readable_within(0)) << "/fast came out only with the slow answer after it";
  auto last = slow.read_response();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->status, 200);
}

TEST_P(LabServerIo, HalfClosedClientsGetTheirAnswersThenTheServerCloses) {
  auto server = start_server();  // one thread
  ASSERT_TRUE(server);
  Client blocker(server->address());
  Client quick(server->address());
  Client waiting(server->address());
  // While the loop is blocked, each request and its FIN land together, in one epoll edge.
  blocker.send("GET /slow-sync?ms=100 HTTP/1.1\r\nHost: lab\r\n\r\n");
  std::this_thread::sleep_for(20ms);
  quick.send("GET /fast HTTP/1.1\r\nHost: lab\r\n\r\n");
  quick.shutdown_write();
  waiting.send("GET /tracking?no=H HTTP/1.1\r\nHost: lab\r\n\r\n");
  waiting.shutdown_write();
  ASSERT_TRUE(blocker.read_response());
  auto q = quick.read_response();
  ASSERT_TRUE(q);
  EXPECT_EQ(q->status, 200);
  EXPECT_TRUE(quick.closed_by_peer());
  auto w = waiting.read_response();
  ASSERT_TRUE(w);
  EXPECT_NE(w->body.find(R"("no":"H")"), std::string::npos);
  EXPECT_TRUE(waiting.closed_by_peer());
}

TEST_P(LabServerIo, RequestArrivingByteByByteIsAnswered) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  const std::string request = "GET /fast HTTP/1.1\r\nHost: lab\r\n\r\n";
  for (char ch : request) {
    c.send(std::string_view(&ch, 1));
    std::this_thread::sleep_for(1ms);
  }
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_P(LabServerIo, AbsoluteFormTargetIsServed) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  auto r = c.get("http://lab/fast");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// Sends `request`, expects `status` with Connection: close, then the end of the connection.
void expect_error_and_close(const LabServer& server, const std::string& request, int status) {
  Client c(server.address());
  c.send(request);
  auto r = c.read_response();
  ASSERT_TRUE(r) << request.substr(0, 60);
  EXPECT_EQ(r->status, status) << request.substr(0, 60);
  EXPECT_EQ(r->field("Connection"), "close");
  EXPECT_EQ(r->field("Content-Type"), "application/json");
  EXPECT_TRUE(c.closed_by_peer());
}

TEST_P(LabServerIo, MalformedRequestIs400AndTheServerKeepsServing) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client bystander(server->address());
  ASSERT_TRUE(bystander.get("/fast"));
  expect_error_and_close(*server, "GET /fast HTTP/1.1\r\nHost: lab\r\nBad Field: x\r\n\r\n", 400);
  expect_error_and_close(*server, "GARBAGE\r\n\r\n", 400);
  expect_error_and_close(*server, std::string("\x16\x03\x01\x00\xa5\x01\x00", 7), 400);
  expect_error_and_close(*server, "GET /fast HTTP/1.1\r\nHost: lab\r\nX: a\r\n folded\r\n\r\n",
                         400);
  expect_error_and_close(*server, "GET /fast HTTP/1.1\r\nHost: lab\r\nContent-Length: x\r\n\r\n",
                         400);
  // Regression: lines ended by bare CRs only were never answered (the parser waited for an LF).
  expect_error_and_close(*server, "GET /fast HTTP/1.1\rHost: lab\r\r", 400);
  Client other(server->address());
  auto r = other.get("/fast");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = bystander.get("/fast");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_P(LabServerIo, LongRequestLineIs414) {
  auto server = start_server();
  ASSERT_TRUE(server);
  expect_error_and_close(
      *server, "GET /fast?pad=" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: lab\r\n\r\n", 414);
  // Even when the client keeps sending after the answer.
  expect_error_and_close(*server, "GET /" + std::string(100'000, 'a'), 414);
}

TEST_P(LabServerIo, LargeHeaderSectionIs431) {
  auto server = start_server();
  ASSERT_TRUE(server);
  expect_error_and_close(
      *server, "GET /fast HTTP/1.1\r\nHost: lab\r\nX-Big: " + std::string(9000, 'b') + "\r\n\r\n",
      431);
}

TEST_P(LabServerIo, TransferEncodingIs501) {
  auto server = start_server();
  ASSERT_TRUE(server);
  expect_error_and_close(*server,
                         "POST /fast HTTP/1.1\r\nHost: lab\r\nTransfer-Encoding: "
                         "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                         501);
}

TEST_P(LabServerIo, OtherHttpMajorVersionIs505) {
  auto server = start_server();
  ASSERT_TRUE(server);
  expect_error_and_close(*server, "GET /fast HTTP/2.0\r\nHost: lab\r\n\r\n", 505);
}

TEST_P(LabServerIo, ManyConnectionsOnSeveralThreads) {
  ServerOptions options;
  options.threads = 4;
  options.wait = 1ms;
  options.cpu = 0ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 64; ++i) clients.push_back(std::make_unique<Client>(server->address()));
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < clients.size(); ++i) {
      clients[i]->send("GET /tracking?no=C" + std::to_string(i) + " HTTP/1.1\r\nHost: lab\r\n\r\n");
    }
    for (size_t i = 0; i < clients.size(); ++i) {
      auto r = clients[i]->read_response();
      ASSERT_TRUE(r);
      EXPECT_NE(r->body.find("\"no\":\"C" + std::to_string(i) + "\""), std::string::npos);
    }
  }
}

TEST_P(LabServerIo, AbruptClientsDoNotDisturbOthers) {
  auto server = start_server();
  ASSERT_TRUE(server);
  for (int i = 0; i < 20; ++i) {
    Client quitter(server->address());
    quitter.send("GET /slow-async?ms=20 HTTP/1.1\r\nHost: lab\r\n\r\nGET /fa");
    // destroyed at once: closed with a request in flight and a partial one buffered
  }
  {
    Client resetter(server->address());
    resetter.send("GET /tracking?no=x HTTP/1.1\r\nHost: lab\r\n\r\n");
  }
  // Their requests finish or are abandoned; eventually only the /health asking is in flight.
  Client c(server->address());
  std::string body;
  for (int i = 0; i < 500 && body.find(R"("inFlight":1,)") == std::string::npos; ++i) {
    std::this_thread::sleep_for(10ms);
    auto r = c.get("/health");
    ASSERT_TRUE(r);
    body = r->body;
  }
  EXPECT_NE(body.find(R"("inFlight":1,)"), std::string::npos) << body;
}

TEST_P(LabServerIo, FixedPortInUseFailsWithTheOsError) {
  auto first = start_server();
  ASSERT_TRUE(first);
  ServerOptions options;
  options.port = first->address().port();
  auto second = LabServer::start(options);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.status().code(), core::Status::Code::kIoError);
  EXPECT_NE(second.status().message().find("EADDRINUSE"), std::string::npos)
      << second.status().message();
}

TEST(LabServer, BadOptionsAreInvalidArguments) {
  ServerOptions options;
  options.threads = 0;
  auto r = LabServer::start(options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), core::Status::Code::kInvalidArgument);
  options.threads = 1;
  options.wait = -1ms;
  EXPECT_FALSE(LabServer::start(options).has_value());
}

TEST_P(LabServerIo, StopLetsARequestInFlightFinishAndClosesIdleConnections) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client idle(server->address());
  ASSERT_TRUE(idle.get("/fast"));
  Client last(server->address());  // idle too, until the drain has begun
  ASSERT_TRUE(last.get("/fast"));
  auto busy = std::make_unique<Client>(server->address());
  busy->send("GET /slow-async?ms=200 HTTP/1.1\r\nHost: lab\r\n\r\n");
  // Make sure the slow request is being served before stopping.
  {
    Client probe(server->address());
    std::string body;
    for (int i = 0; i < 200 && body.find(R"("inFlight":2)") == std::string::npos; ++i) {
      auto h = probe.get("/health");
      ASSERT_TRUE(h);
      body = h->body;
    }
    ASSERT_NE(body.find(R"("inFlight":2)"), std::string::npos) << body;
  }
  const core::TimePoint stop_at = core::Clock::now();
  server->request_stop();
  // Regression (issue 14's graceful deploy without retries lost 1-3 requests a replica): a
  // request on an idle keep-alive connection just after the drain began met the close. It is
  // answered now, and told the connection closes.
  std::this_thread::sleep_for(50ms);
  auto answered = last.get("/fast");
  ASSERT_TRUE(answered) << "the drain closed an idle connection a request was on its way to";
  EXPECT_EQ(answered->status, 200);
  EXPECT_EQ(answered->field("Connection"), "close");
  EXPECT_TRUE(last.closed_by_peer());
  // One that stays idle is closed once the grace (drain_idle, 500 ms) is over.
  EXPECT_FALSE(idle.readable_within(300)) << "closed before its grace";
  EXPECT_TRUE(idle.closed_by_peer());
  EXPECT_GE(core::Clock::now() - stop_at, 400ms);
  auto r = busy->read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->field("Connection"), "close");
  EXPECT_TRUE(busy->closed_by_peer());
  busy.reset();  // like any client told "Connection: close"; the server stops lingering
  EXPECT_EQ(server->wait(), 0);
  EXPECT_GE(core::Clock::now() - stop_at, 100ms);  // it did wait for the request
  Client late(server->address());
  EXPECT_FALSE(late.connected());
  EXPECT_EQ(late.connect_errno(), ECONNREFUSED);
}

TEST_P(LabServerIo, StopCutsOffRequestsPastTheDrainTimeout) {
  ServerOptions options;
  options.drain_timeout = 100ms;
  auto server = start_server(options);
  ASSERT_TRUE(server);
  Client busy(server->address());
  busy.send("GET /slow-async?ms=30000 HTTP/1.1\r\nHost: lab\r\n\r\n");
  {
    Client probe(server->address());
    std::string body;
    for (int i = 0; i < 200 && body.find(R"("inFlight":2)") == std::string::npos; ++i) {
      auto h = probe.get("/health");
      ASSERT_TRUE(h);
      body = h->body;
    }
  }
  server->request_stop();
  EXPECT_EQ(server->wait(), 1);
  EXPECT_FALSE(busy.read_response().has_value());
}

TEST_P(LabServerIo, DestructorStopsARunningServer) {
  auto server = start_server();
  ASSERT_TRUE(server);
  Client c(server->address());
  ASSERT_TRUE(c.get("/fast"));
  server.reset();  // joins without an explicit request_stop()
  EXPECT_TRUE(c.closed_by_peer());
}

}  // namespace
}  // namespace knee::lab
