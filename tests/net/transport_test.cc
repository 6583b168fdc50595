// TcpTransport and its blocking helpers (net/transport.h) on real loopback sockets: bytes move as
// kDone, an empty or full socket is kWouldBlock, the peer's close is kClosed, a write to a closed
// peer is kError with its errno, and the helpers turn a timeout into ETIMEDOUT.
#include "net/transport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <array>
#include <string>

namespace knee::net {
namespace {

using namespace std::chrono_literals;

// A connected pair on 127.0.0.1: the client side and the accepted side.
struct Pair {
  TcpTransport client{Fd()};
  TcpTransport server{Fd()};
};

Pair connected(Blocking blocking) {
  auto listener = listen_tcp(loopback_v4(0), false, 4, Blocking::kYes);
  EXPECT_TRUE(listener) << listener.status().message();
  auto addr = local_address(listener->get());
  auto c = connect_tcp(*addr, Blocking::kYes);
  EXPECT_TRUE(c) << c.status().message();
  auto s = accept_tcp(listener->get(), blocking);
  EXPECT_TRUE(s) << s.status().message();
  if (blocking == Blocking::kNo) {
    ::fcntl(c->get(), F_SETFL, ::fcntl(c->get(), F_GETFL) | O_NONBLOCK);
  }
  return Pair{TcpTransport(std::move(c).value()), TcpTransport(std::move(s).value())};
}

TEST(TcpTransport, MovesBytesAndSaysWhenThereAreNone) {
  Pair p = connected(Blocking::kNo);
  std::array<char, 16> buf{};
  EXPECT_EQ(p.server.recv_some(buf).status, IoStatus::kWouldBlock);
  const IoResult sent = p.client.send_some("hello");
  ASSERT_EQ(sent.status, IoStatus::kDone);
  EXPECT_EQ(sent.bytes, 5u);
  ASSERT_TRUE(recv_exactly(p.server, std::span<char>(buf.data(), 5), "read"));
  EXPECT_EQ(std::string(buf.data(), 5), "hello");
}

TEST(TcpTransport, ThePeersCloseIsClosedAndWritingToItFails) {
  Pair p = connected(Blocking::kNo);
  p.client.shutdown_write();
  std::array<char, 16> buf{};
  IoResult r = p.server.recv_some(buf);
  for (int i = 0; i < 1000 && r.status == IoStatus::kWouldBlock; ++i) r = p.server.recv_some(buf);
  EXPECT_EQ(r.status, IoStatus::kClosed);
  // Close the client entirely: writes from the server end in EPIPE or ECONNRESET, never SIGPIPE.
  p.client = TcpTransport(Fd());
  IoResult w = p.server.send_some("x");
  for (int i = 0; i < 100 && w.status == IoStatus::kDone; ++i) w = p.server.send_some("x");
  ASSERT_EQ(w.status, IoStatus::kError);
  EXPECT_TRUE(w.error == EPIPE || w.error == ECONNRESET) << core::errno_name(w.error);
}

TEST(TcpTransport, BlockingHelpersNameTheOperationAndATimeout) {
  Pair p = connected(Blocking::kYes);
  set_io_timeouts(p.server.fd(), 20ms);
  std::array<char, 4> buf{};
  core::Status s = recv_exactly(p.server, buf, "ping-pong");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.os_error(), ETIMEDOUT);
  EXPECT_EQ(s.message().rfind("ping-pong: ", 0), 0u) << s.message();
  ASSERT_TRUE(send_all(p.client, "ab", "write"));
  p.client.shutdown_write();
  s = recv_exactly(p.server, buf, "read");  // 2 bytes, then EOF
  ASSERT_FALSE(s);
  EXPECT_EQ(s.os_error(), EPIPE) << "an EOF is reported as EPIPE, not a stale errno";
}

TEST(TcpTransport, FinishConnectReportsARefusedConnect) {
  // A port nobody listens on: bind one, learn its number, close it.
  auto listener = listen_tcp(loopback_v4(0), false, 1, Blocking::kYes);
  ASSERT_TRUE(listener);
  const SocketAddress addr = *local_address(listener->get());
  listener->reset();
  auto fd = connect_tcp(addr);
  if (!fd) {
    EXPECT_EQ(fd.status().os_error(), ECONNREFUSED);
    return;
  }
  TcpTransport t(std::move(fd).value());
  pollfd pfd{t.fd(), POLLOUT, 0};
  ASSERT_EQ(::poll(&pfd, 1, 2000), 1);  // a failed connect is writable, with its error pending
  const IoResult r = t.finish_connect();
  ASSERT_EQ(r.status, IoStatus::kError);
  EXPECT_EQ(r.error, ECONNREFUSED);
}

}  // namespace
}  // namespace knee::net
