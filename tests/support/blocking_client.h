// A blocking HTTP/1.1 client over one TCP connection, for tests of servers on 127.0.0.1: every
// read has a generous timeout, so a bug fails the test instead of hanging it.
#pragma once

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

#include "net/socket.h"

namespace knee::testing {

inline constexpr int kReadTimeoutMs = 15'000;

struct Response {
  int status = 0;
  std::string head;  // status line and fields, with the final CRLF CRLF
  std::string body;

  // The value of a field (case-insensitive name), or "" when absent.
  std::string field(std::string_view name) const {
    size_t pos = head.find("\r\n");
    while (pos != std::string::npos && pos + 2 < head.size()) {
      size_t start = pos + 2;
      size_t end = head.find("\r\n", start);
      std::string_view line(head.data() + start, end - start);
      size_t colon = line.find(':');
      if (colon != std::string_view::npos && colon == name.size() &&
          strncasecmp(line.data(), name.data(), name.size()) == 0) {
        std::string_view v = line.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        return std::string(v);
      }
      pos = end;
    }
    return "";
  }
};

// A blocking HTTP/1.1 client over one TCP connection.
class Client {
 public:
  explicit Client(const net::SocketAddress& addr) {
    fd_ = ::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) == 0;
    connect_errno_ = connected_ ? 0 : errno;
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  int connect_errno() const { return connect_errno_; }

  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      ASSERT_GT(n, 0) << "send: " << std::strerror(errno);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }

  // send() that reports a failure (the peer gone) instead of failing the test.
  bool try_send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Ends our sending side (FIN), keeping the receiving side open.
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

  // Reads one response; nullopt when the connection ends (or times out) first. head_request:
  // the response has no body whatever its Content-Length says.
  std::optional<Response> read_response(bool head_request = false) {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    Response r;
    r.head = buffer_.substr(0, end + 4);
    buffer_.erase(0, end + 4);
    r.status = std::stoi(r.head.substr(9, 3));
    size_t length = head_request ? 0 : std::stoul("0" + r.field("Content-Length"));
    while (buffer_.size() < length) {
      if (!fill()) return std::nullopt;
    }
    r.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return r;
  }

  std::optional<Response> get(std::string_view target) {
    send("GET " + std::string(target) + " HTTP/1.1\r\nHost: lab\r\n\r\n");
    return read_response();
  }

  // POST with a body and its Content-Type (none when empty); nullopt when the connection fails.
  std::optional<Response> post(std::string_view target, std::string_view body,
                               std::string_view content_type = "application/json") {
    std::string request = "POST " + std::string(target) + " HTTP/1.1\r\nHost: lab\r\n";
    if (!content_type.empty()) request += "Content-Type: " + std::string(content_type) + "\r\n";
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    request += body;
    if (!try_send(request)) return std::nullopt;
    return read_response();
  }

  // True when the server closed the connection with nothing more to read (EOF or reset).
  bool closed_by_peer() {
    if (!buffer_.empty()) return false;
    return !fill();
  }

  // Reads and drops whatever comes until the peer closes; false when it has not closed within
  // kReadTimeoutMs.
  bool drain_until_closed() {
    buffer_.clear();
    while (fill()) buffer_.clear();
    return true;  // fill() reports a timeout as a test failure itself
  }

  // Every byte the server sends until it closes (a timeout is a test failure, as above).
  std::string read_until_closed() {
    while (fill()) {
    }
    std::string all;
    all.swap(buffer_);
    return all;
  }

  // Whether the peer reset the connection (a read got ECONNRESET), rather than closing it.
  bool reset_by_peer() const { return reset_; }

  // True when bytes can be read within timeout_ms.
  bool readable_within(int timeout_ms) {
    if (!buffer_.empty()) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) > 0;
  }

 private:
  bool fill() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, kReadTimeoutMs) <= 0) {
      ADD_FAILURE() << "read timed out";
      return false;
    }
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == ECONNRESET) reset_ = true;
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool reset_ = false;  // a read failed with ECONNRESET
  bool connected_ = false;
  int connect_errno_ = 0;
  std::string buffer_;
};

}  // namespace knee::testing
