// `knee serve` as a user runs it: prints where it listens, answers malformed requests with 400
// and keeps serving, stops cleanly on SIGTERM.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/subprocess.h"

namespace knee {
namespace {

// Sends raw bytes on a new connection and returns everything read until the server closes or
// 2 s pass.
std::string exchange(int port, const std::string& bytes, bool wait_for_close) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (!wait_for_close && out.find("\r\n\r\n") != std::string::npos) break;
  }
  close(fd);
  return out;
}

TEST(Serve, MalformedRequestGets400AndTheServerKeepsServing) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0"});
  int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0) << server.first_line();
  std::string bad = exchange(port, "THIS IS NOT HTTP\r\n\r\n", /*wait_for_close=*/true);
  EXPECT_EQ(bad.rfind("HTTP/1.1 400", 0), 0u) << bad;
  std::string good = exchange(port, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n", false);
  EXPECT_EQ(good.rfind("HTTP/1.1 200", 0), 0u) << good;
  EXPECT_EQ(server.terminate(), 0);
}

TEST(Serve, FirstLineNamesHostAndPort) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0", "--instance", "e2e"});
  EXPECT_EQ(server.first_line().rfind("listening on 127.0.0.1:", 0), 0u) << server.first_line();
  int port = testing::port_of_listening_line(server.first_line());
  std::string health = exchange(port, "GET /health HTTP/1.0\r\n\r\n", true);
  EXPECT_NE(health.find("\"instance\":\"e2e\""), std::string::npos) << health;
}

}  // namespace
}  // namespace knee
