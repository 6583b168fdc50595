// `knee serve` as a user runs it: prints where it listens, answers malformed requests with 400
// and keeps serving, stops cleanly on SIGTERM.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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

TEST(Serve, BadLimitFlagsExit2NamingTheFlag) {
  auto many =
      testing::run_process({KNEE_BINARY, "serve", "--port", "0", "--max-connections", "999999999"});
  EXPECT_EQ(many.exit_code, 2);
  EXPECT_NE(many.err.find("--max-connections:"), std::string::npos) << many.err;
  EXPECT_NE(many.err.find("ulimit -n"), std::string::npos) << many.err;
  auto zero = testing::run_process({KNEE_BINARY, "serve", "--port", "0", "--idle-timeout", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("--idle-timeout: must be longer than 0"), std::string::npos) << zero.err;
}

TEST(Serve, IoUringServesAndTerminatesCleanly) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0", "--io", "uring"});
  int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0) << server.first_line();
  std::string good = exchange(port, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n", false);
  EXPECT_EQ(good.rfind("HTTP/1.1 200", 0), 0u) << good;
  std::string closing = exchange(port, "GET /fast HTTP/1.0\r\n\r\n", /*wait_for_close=*/true);
  EXPECT_EQ(closing.rfind("HTTP/1.1 200", 0), 0u) << closing;
  EXPECT_NE(closing.find(R"({"ok":true,"instance":"app1"})"), std::string::npos) << closing;
  EXPECT_EQ(server.terminate(), 0);
}

TEST(Serve, BadIoFlagsExit2SayingWhy) {
  auto tls = testing::run_process({KNEE_BINARY, "serve", "--port", "0", "--io", "uring", "--tls"});
  EXPECT_EQ(tls.exit_code, 2);
  EXPECT_NE(tls.err.find("--io uring: plain TCP only"), std::string::npos) << tls.err;
  auto other = testing::run_process({KNEE_BINARY, "serve", "--port", "0", "--io", "poll"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--io"), std::string::npos) << other.err;
}

// VmRSS of a process, in bytes (0 when unreadable).
int64_t rss_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return 0;
}

// /health's body, polled until it holds `needle` or 20 s passed.
std::string health_with(int port, const std::string& needle) {
  std::string body;
  for (int i = 0; i < 200; ++i) {
    body = exchange(port, "GET /health HTTP/1.0\r\n\r\n", true);
    if (body.find(needle) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return body;
}

// 10,000 keep-alive connections, idle after one request each, are held (none refused, none
// closed) at a bounded cost per connection: an idle connection keeps no read buffer. The server
// still answers, and SIGTERM still drains. The figure printed is what the README quotes (of this
// ASan build; the release build's is smaller).
TEST(Serve, TenThousandIdleConnectionsAreHeldWithBoundedMemory) {
  constexpr int kIdle = 10'000;
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_max < kIdle + 200) GTEST_SKIP() << "needs " << kIdle + 200 << " open files";
  files.rlim_cur = files.rlim_max;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0"});
  const int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0) << server.first_line();
  ASSERT_EQ(exchange(port, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n", false).rfind("HTTP/1.1 200", 0),
            0u);
  const int64_t before = rss_bytes(server.pid());

  std::vector<int> idle;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < kIdle; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0) << i;
    idle.push_back(fd);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << i;
    // One request first, so each connection once had its read buffer in use.
    const std::string get = "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  }
  char answer[512];
  for (int fd : idle) ASSERT_GT(recv(fd, answer, sizeof answer, 0), 0);
  // Every one accepted and open (the /health connection is one more).
  const std::string want = "\"open\":" + std::to_string(kIdle + 1) + ",\"refused\":0";
  const std::string body = health_with(port, want);
  EXPECT_NE(body.find(want), std::string::npos) << body;
  const int64_t after = rss_bytes(server.pid());
  const double per_connection = static_cast<double>(after - before) / kIdle;
  std::printf("knee serve: %d idle connections: RSS %.1f MB -> %.1f MB, %.0f bytes each\n", kIdle,
              static_cast<double>(before) / 1e6, static_cast<double>(after) / 1e6, per_connection);
  // A touched 32 KiB read buffer each would be 320 MB; an idle connection gives it back.
  EXPECT_LT(per_connection, 4096);
  EXPECT_EQ(exchange(port, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n", false).rfind("HTTP/1.1 200", 0),
            0u);
  const auto stop = std::chrono::steady_clock::now();
  EXPECT_EQ(server.terminate(), 0);  // the drain closes the idle ones after --drain-idle
  EXPECT_LT(std::chrono::steady_clock::now() - stop, std::chrono::seconds(5));
  for (int fd : idle) close(fd);
}

}  // namespace
}  // namespace knee
