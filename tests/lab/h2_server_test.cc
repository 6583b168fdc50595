// The lab server over HTTP/2 with prior knowledge (h2c; issue 12, point 6), driven by knee's own
// H2Client over a blocking socket: streams that wait on timers are answered each on its own, a
// connection carries many at once, a malformed preface is closed without stopping the server,
// and a stop answers the streams in flight before the connection closes (GOAWAY).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/h2_client.h"
#include "lab/h2_session.h"
#include "lab/lab_server.h"
#include "net/transport.h"

namespace knee::lab {
namespace {

using namespace std::chrono_literals;

class Client : public http::H2Client::Listener {
 public:
  explicit Client(const net::SocketAddress& address) {
    auto fd = net::connect_tcp(address, net::Blocking::kYes);
    EXPECT_TRUE(fd);
    net::set_io_timeouts(fd->get(), 5s);
    transport_ = std::make_unique<net::TcpTransport>(std::move(fd).value());
    session_ = std::move(http::H2Client::create(*this)).value();
  }
  // Starts `path` on lane `lane`, with `headers`; a POST when `body` is given.
  void get(uint32_t lane, const std::string& path,
           std::vector<std::pair<std::string, std::string>> headers = {},
           std::optional<std::string> body = std::nullopt) {
    http::RequestSpec spec;
    spec.url = *http::parse_url("http://127.0.0.1" + path);
    spec.headers = std::move(headers);
    if (body) {
      spec.method = "POST";
      spec.body = std::move(*body);
    }
    requests_.push_back(std::move(http::H2Request::compile(spec)).value());
    auto s = session_->submit(lane, requests_.back());
    ASSERT_TRUE(s);
    streams_.push_back(*s);
  }
  // Resets every stream started so far (RST_STREAM CANCEL).
  void cancel_all() {
    for (auto* s : streams_) session_->cancel(s);
    streams_.clear();
  }
  // Sends what is queued, then shuts the sending side (a half-close).
  void half_close() {
    std::string out;
    ASSERT_TRUE(session_->pull(out).is_ok());
    ASSERT_TRUE(net::send_all(*transport_, out, "h2"));
    ::shutdown(transport_->fd(), SHUT_WR);
  }
  // Moves bytes (a few rounds at least) until `answers` streams have ended or 5 s pass.
  void run_until(size_t answers) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    for (int round = 0; round < 3 || (status.size() + resets.size() < answers &&
                                      std::chrono::steady_clock::now() < deadline);
         ++round) {
      std::string out;
      ASSERT_TRUE(session_->pull(out).is_ok());
      if (!out.empty()) {
        ASSERT_TRUE(net::send_all(*transport_, out, "h2"));
        sent_bytes += out.size();
      }
      pollfd p{transport_->fd(), POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[16384];
      const net::IoResult r = transport_->recv_some(buf);
      if (r.status != net::IoStatus::kDone) {
        closed = true;
        return;
      }
      ASSERT_TRUE(session_->receive(std::string_view(buf, r.bytes)).is_ok());
    }
  }
  // Moves bytes until the server closes the connection or 5 s pass.
  void run_until_closed() {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!closed && std::chrono::steady_clock::now() < deadline) run_until(0);
  }
  void on_response(uint32_t lane, int s, uint64_t body, uint64_t) override {
    status[lane] = s;
    bodies[lane] = body;
  }
  void on_reset(uint32_t lane, uint32_t code, bool, uint64_t) override { resets[lane] = code; }
  bool goaway() const { return session_->goaway_received(); }

  std::map<uint32_t, int> status;
  std::map<uint32_t, uint64_t> bodies;
  std::map<uint32_t, uint32_t> resets;
  bool closed = false;
  size_t sent_bytes = 0;  // every frame's bytes written to the server

 private:
  std::unique_ptr<net::TcpTransport> transport_;
  std::unique_ptr<http::H2Client> session_;
  std::deque<http::H2Request> requests_;
  std::vector<http::H2Client::Stream*> streams_;
};

std::unique_ptr<LabServer> start() {
  ServerOptions o;
  o.wait = 1ms;
  o.drain_timeout = 3s;
  auto s = LabServer::start(o);
  EXPECT_TRUE(s) << s.status().message();
  return s ? std::move(s).value() : nullptr;
}

TEST(H2Server, ManyStreamsOnOneConnectionEachWaitOnTheirOwnTimer) {
  auto server = start();
  ASSERT_TRUE(server);
  Client c(server->address());
  c.run_until(0);  // SETTINGS
  for (uint32_t lane = 0; lane < 20; ++lane) {
    c.get(lane, lane % 2 == 0 ? "/slow-async?ms=30" : "/tracking?no=G" + std::to_string(lane));
  }
  c.get(20, "/nope");
  c.run_until(21);
  ASSERT_EQ(c.status.size(), 21u);
  for (uint32_t lane = 0; lane < 20; ++lane) EXPECT_EQ(c.status[lane], 200) << lane;
  EXPECT_EQ(c.status[20], 404);
  EXPECT_TRUE(c.resets.empty());
  EXPECT_FALSE(c.closed);
}

TEST(H2Server, ABrokenPrefaceIsClosedAndTheServerServesOn) {
  auto server = start();
  ASSERT_TRUE(server);
  auto fd = net::connect_tcp(server->address(), net::Blocking::kYes);
  ASSERT_TRUE(fd);
  net::set_io_timeouts(fd->get(), 5s);
  net::TcpTransport t(std::move(fd).value());
  // The preface, then a frame that is not SETTINGS: a connection error (RFC 9113 §3.4).
  const std::string bad =
      std::string(H2ServerSession::kClientPreface) + std::string("\0\0\0\x01\0\0\0\0\x01", 9);
  ASSERT_TRUE(net::send_all(t, bad, "bad"));
  char buf[512];
  while (t.recv_some(buf).status == net::IoStatus::kDone) {
  }
  Client c(server->address());
  c.run_until(0);
  c.get(0, "/fast");
  c.run_until(1);
  EXPECT_EQ(c.status[0], 200);
}

TEST(H2Server, AStopAnswersTheStreamsInFlightThenSaysGoaway) {
  auto server = start();
  ASSERT_TRUE(server);
  Client c(server->address());
  c.run_until(0);
  for (uint32_t lane = 0; lane < 4; ++lane) c.get(lane, "/slow-async?ms=200");
  c.run_until(0);  // the requests go out
  std::this_thread::sleep_for(50ms);
  server->request_stop();
  c.run_until(4);
  EXPECT_EQ(c.status.size(), 4u);
  for (const auto& [lane, s] : c.status) EXPECT_EQ(s, 200) << lane;
  // The GOAWAY may follow the last answer in a later read (regression: the test stopped reading
  // after three rounds and, on a loaded host, missed it): read until the server closes.
  c.run_until_closed();
  EXPECT_TRUE(c.closed);
  EXPECT_TRUE(c.goaway());
}

TEST(H2Server, StreamsTheClientResetsDropTheirWorkSoAStopIsClean) {
  // Regression: a reset stream kept its timer and slot (1,200 orphans per connection from a
  // reset loop, RSS 8 -> 104 MB) and a stop waited for them, then cut them off (exit 1).
  auto server = start();
  ASSERT_TRUE(server);
  Client c(server->address());
  c.run_until(0);
  for (uint32_t lane = 0; lane < 50; ++lane) c.get(lane, "/slow-async?ms=60000");
  c.run_until(0);
  c.cancel_all();
  c.run_until(0);
  c.get(50, "/fast");
  c.run_until(1);
  EXPECT_EQ(c.status[50], 200);
  server->request_stop();
  EXPECT_EQ(server->wait(), 0);  // a clean drain: nothing in flight was cut off
}

TEST(H2Server, AHalfClosedClientStillGetsTheAnswersWaitingOnTimers) {
  // Regression: the client's EOF dropped every stream still waiting (HTTP/1.1 answered them).
  auto server = start();
  ASSERT_TRUE(server);
  Client c(server->address());
  c.run_until(0);
  c.get(0, "/slow-async?ms=100");
  c.get(1, "/tracking?no=Z9");
  c.half_close();
  c.run_until(2);
  EXPECT_EQ(c.status[0], 200);
  EXPECT_EQ(c.status[1], 200);
}

TEST(H2Server, TheHttp11LimitsHoldOverHttp2) {
  // Regression: a 20,000-byte header or path was answered 200 over HTTP/2, 431 and 414 over
  // HTTP/1.1.
  auto server = start();
  ASSERT_TRUE(server);
  Client c(server->address());
  c.run_until(0);
  c.get(0, "/fast?" + std::string(9000, 'a'));
  c.get(1, "/fast", {{"x-big", std::string(9000, 'b')}});
  c.get(2, "/fast", {{"x-small", std::string(100, 'c')}});
  c.run_until(3);
  EXPECT_EQ(c.status[0], 414);
  EXPECT_EQ(c.status[1], 431);
  EXPECT_EQ(c.status[2], 200);
}

TEST(H2Server, ABodyOverTheLimitIsAnswered413AsOverHttp11) {
  // Regression (a trial): a 4 MB POST to /fast was answered 405 over h2c, 413 over HTTP/1.1;
  // the body's size is checked before the method, as there, and as soon as it is over the
  // limit (review): the stream is answered and reset (NO_ERROR), the connection serves on.
  ServerOptions o;
  o.wait = 1ms;
  o.drain_timeout = 3s;
  o.max_body_bytes = 64 * 1024;
  auto started = LabServer::start(o);
  ASSERT_TRUE(started) << started.status().message();
  auto server = std::move(started).value();
  Client c(server->address());
  c.run_until(0);
  c.get(0, "/fast", {}, std::string(o.max_body_bytes * 16, 'x'));  // 1 MiB, over 64 KiB
  c.run_until(1);
  EXPECT_EQ(c.status[0], 413);
  c.run_until(0);  // a few rounds more: the body's rest is not asked for
  EXPECT_LT(c.sent_bytes, o.max_body_bytes * 8) << "the server read the body past its limit";
  c.get(1, "/fast", {}, std::string(o.max_body_bytes, 'x'));
  c.get(2, "/fast");
  c.run_until(3);
  EXPECT_EQ(c.status[1], 405) << "a body at the limit is read; /fast takes no POST";
  EXPECT_EQ(c.status[2], 200) << "the connection serves on";
  EXPECT_FALSE(c.closed);
}

}  // namespace
}  // namespace knee::lab
