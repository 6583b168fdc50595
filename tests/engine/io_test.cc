// How a load writes its requests (LoadOptions::io, `--io`): through the send ring (/uring) the
// server gets the same bytes, in the same order, as from a send(2) per write (/epoll), including
// bodies larger than the ring lets one connection queue and HTTP/2's frames; the accounting of
// both is checked in accounting_test.cc and pipeline_test.cc, which run under both paths too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>

#include "engine/load.h"
#include "http/request.h"
#include "http/url.h"
#include "net/send_ring.h"
#include "support/h2_server.h"
#include "support/io_param.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using testing::Action;
using testing::H2Script;
using testing::H2Server;
using testing::ScriptedServer;

LoadOptions options_for(const std::string& url, int connections) {
  LoadOptions o;
  o.request.url = *http::parse_url(url);
  o.connections = connections;
  o.duration = 400ms;
  o.warmup = 0ms;
  o.timeout = 5s;
  o.io = knee::testing::io_under_test();
  return o;
}

class LoadIo : public knee::testing::IoPathTest {};
KNEE_INSTANTIATE_IO(LoadIo);

TEST_P(LoadIo, BodiesLargerThanARingsQueueAreWrittenWholeAndCountedExactly) {
  // Three queues' worth and a bit: the ring refuses the rest (kWouldBlock) until its sends
  // complete, and writes on when it names the connection again.
  const std::string body(net::SendRing::kMaxQueuedBytes * 3 + 17, 'x');
  ScriptedServer server(ScriptedServer::always_ok());
  LoadOptions o = options_for(server.url("/upload"), 2);
  o.request.method = "POST";
  o.request.body = body;
  o.requests = 12;
  o.duration = 10s;  // -n ends the phase
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  EXPECT_EQ(s.sent, 12u);
  EXPECT_EQ(s.ok(), 12u);
  EXPECT_EQ(s.total_errors(), 0u);
  EXPECT_EQ(server.body_bytes(), 12 * body.size());
  // Every request's bytes, head included, and nothing else.
  auto request = http::RequestTemplate::compile(o.request);
  ASSERT_TRUE(request) << request.status().message();
  EXPECT_EQ(s.bytes_sent, 12 * request->fixed().size());
}

// This process's resident memory now, in bytes (/proc/self/statm's second field, in pages).
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Regression (a trial): a server that answers at a request's head (knee serve's 405) made the
// next request follow the unwritten rest of a 1 MiB body; under --io uring, whose queue takes
// 256 KiB at a time, a connection's buffer then never emptied and kept every request it had
// sent (725 MB in 4 s). Now its written front is dropped: memory stays near two requests per
// connection, and the bytes are still counted exactly.
TEST_P(LoadIo, RequestsAnsweredBeforeTheirBodyIsWrittenKeepTheClientsMemoryFlat) {
  const std::string body(net::SendRing::kMaxQueuedBytes * 4 + 100, 'x');  // just over 1 MiB
  ScriptedServer server([](int, int, const std::string&) {
    Action a = Action::respond(testing::ok_response());
    a.before_body = true;
    return a;
  });
  LoadOptions o = options_for(server.url("/upload"), 2);
  o.request.method = "POST";
  o.request.body = body;
  o.requests = 240;
  o.duration = 30s;  // -n ends the phase
  const size_t before = resident_bytes();
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  const size_t after = resident_bytes();
  const size_t grown = after > before ? after - before : 0;
  const core::RunStats& s = r->stats;
  EXPECT_EQ(s.ok(), 240u);
  EXPECT_EQ(s.total_errors(), 0u);
  auto request = http::RequestTemplate::compile(o.request);
  ASSERT_TRUE(request) << request.status().message();
  // Each request was written whole before the next one's head reached the server; the run may
  // end before the last body is (its answer came at its head).
  EXPECT_GT(s.bytes_sent, 239 * request->fixed().size());
  EXPECT_LE(s.bytes_sent, 240 * request->fixed().size());
  // 240 MiB were written; kept whole, each connection's buffer would hold 120 of them. (Under
  // ASan the run grows this process by about 24 MiB whatever its length: quarantined frees.)
  EXPECT_LT(grown, size_t{64} << 20) << "the client kept what it had written";
}

TEST_P(LoadIo, Http2StreamsAndTheRequestsAGoawayRefusedGoOutWhole) {
  H2Script script;
  script.goaway_after = 5;
  script.delay = 2ms;
  H2Server server(script);
  LoadOptions o = options_for(server.url(), 1);
  o.h2 = true;
  o.per_connection = 4;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  EXPECT_EQ(s.total_errors(), 0u);
  EXPECT_GT(s.ok(), 10u);
  EXPECT_GT(s.connects.h2_resent, 2u);
  EXPECT_EQ(s.completed, static_cast<uint64_t>(server.answered()));
  EXPECT_EQ(s.sent, s.completed + core::request_failures(s.errors) + s.aborted);
}

TEST_P(LoadIo, ANewConnectionPerRequestConnectsThroughTheRing) {
  ScriptedServer server(ScriptedServer::always_ok());
  LoadOptions o = options_for(server.url(), 2);
  o.keepalive = false;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  EXPECT_EQ(s.total_errors(), 0u);
  EXPECT_GT(s.ok(), 10u);
  // One connection per request; a connect the phase's end overtook sends none.
  EXPECT_GE(s.connects.opened, s.sent);
  EXPECT_LE(s.connects.opened, s.sent + 2);
  EXPECT_GE(static_cast<uint64_t>(server.connections_accepted()), s.sent);
}

TEST(LoadIoOptions, TheRingIsForPlainHttpOnly) {
  LoadOptions o;
  o.request.url = *http::parse_url("https://127.0.0.1:1/");
  o.io = net::IoPath::kUring;
  const core::Status s = o.validate();
  EXPECT_EQ(s.code(), core::Status::Code::kInvalidArgument);
  EXPECT_EQ(s.field(), "io");
  EXPECT_NE(s.message().find("http://"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace knee::engine
