// The loopback TCP rungs of the latency ladder: a ping-pong round trip and a connection set-up, on
// 127.0.0.1 with plain blocking sockets (no event loop: one operation at a time is the point).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "probes/ladder.h"

namespace knee::probes {
namespace {

using core::Result;
using core::Status;

constexpr size_t kMessageBytes = 16;

Status os_error(std::string_view what) {
  return Status::io_error(
      fmt::format("{}: {} ({})", what, std::strerror(errno), core::errno_name(errno)));
}

// A file descriptor closed on destruction.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

void set_timeouts(int fd) {
  const timeval two_seconds{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof two_seconds);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &two_seconds, sizeof two_seconds);
}

void set_nodelay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A listening socket on 127.0.0.1, ephemeral port; `addr` receives its address.
Result<Fd> listen_loopback(sockaddr_in& addr) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return os_error("socket");
  set_timeouts(fd.get());
  addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return os_error("bind 127.0.0.1:0");
  }
  if (::listen(fd.get(), 128) != 0) return os_error("listen 127.0.0.1");
  socklen_t len = sizeof addr;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return os_error("getsockname");
  }
  return fd;
}

std::string address_text(const sockaddr_in& addr) {
  return fmt::format("127.0.0.1:{}", ntohs(addr.sin_port));
}

Result<Fd> connect_to(const sockaddr_in& addr) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return os_error("socket");
  set_timeouts(fd.get());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return os_error("connect " + address_text(addr));
  }
  return fd;
}

// Reads exactly `n` bytes; false on EOF, error or timeout.
bool read_exactly(int fd, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, buf + got, n - got);
    if (r > 0) {
      got += static_cast<size_t>(r);
    } else if (r < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

bool write_all(int fd, const char* buf, size_t n) {
  size_t sent = 0;
  while (sent < n) {
    const ssize_t w = ::write(fd, buf + sent, n - sent);
    if (w > 0) {
      sent += static_cast<size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

std::string batch_words(int64_t batch) {
  return batch == 1 ? "each timed alone"
                    : fmt::format("timed in batches of {}, per-operation time = batch time / {}",
                                  batch, batch);
}

Result<Rung> round_trip(const TimingLimits& limits) {
  sockaddr_in addr{};
  Result<Fd> listener = listen_loopback(addr);
  if (!listener) return listener.status();
  Result<Fd> client = connect_to(addr);
  if (!client) return client.status();
  Fd server(::accept4(listener->get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (server.get() < 0) return os_error("accept " + address_text(addr));
  set_timeouts(server.get());
  set_nodelay(server.get());
  set_nodelay(client->get());
  // The echo side: reads a message, writes it back, until the client closes.
  std::thread echo([fd = server.get()] {
    std::array<char, kMessageBytes> buf{};
    while (read_exactly(fd, buf.data(), buf.size()) && write_all(fd, buf.data(), buf.size())) {
    }
  });
  std::array<char, kMessageBytes> out{};
  std::array<char, kMessageBytes> in{};
  std::memset(out.data(), 'p', out.size());
  int first_errno = 0;
  const Samples s = measure(limits, [&](uint64_t) {
    if (first_errno != 0) return;
    errno = 0;  // an EOF (read returns 0) sets no errno: a stale one must not name it
    if (!write_all(client->get(), out.data(), out.size()) ||
        !read_exactly(client->get(), in.data(), in.size())) {
      first_errno = errno != 0 ? errno : EPIPE;
    }
    keep(in);
  });
  ::shutdown(client->get(), SHUT_RDWR);
  echo.join();
  if (first_errno != 0) {
    errno = first_errno;
    return os_error("ping-pong on " + address_text(addr));
  }
  Rung r = summarise(s, limits.repeats);
  r.group = "loopback";
  r.id = "tcp_round_trip";
  r.name = "TCP round trip on loopback (16 bytes each way)";
  r.method = fmt::format(
      "write 16 bytes on a connected 127.0.0.1 TCP socket (TCP_NODELAY) and read 16 bytes back "
      "from an echo thread; two thread wake-ups and four system calls per round trip; {}",
      batch_words(r.batch));
  return r;
}

Result<Rung> connect_accept(const TimingLimits& limits) {
  sockaddr_in addr{};
  Result<Fd> listener = listen_loopback(addr);
  if (!listener) return listener.status();
  Status failure;
  const Samples s = measure(limits, [&](uint64_t) {
    if (!failure.is_ok()) return;
    Result<Fd> client = connect_to(addr);
    if (!client) {
      failure = client.status();
      return;
    }
    Fd accepted(::accept4(listener->get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (accepted.get() < 0) {
      failure = os_error("accept " + address_text(addr));
      return;
    }
    // A reset instead of a FIN: no TIME_WAIT left behind, however many connections are timed.
    const linger reset{1, 0};
    ::setsockopt(client->get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    keep(accepted.get());
  });
  if (!failure.is_ok()) return failure;
  Rung r = summarise(s, limits.repeats);
  r.group = "loopback";
  r.id = "tcp_connect_accept";
  r.name = "TCP connect + accept on loopback";
  r.method = fmt::format(
      "socket(), blocking connect() to a 127.0.0.1 listener (the three-way handshake), accept() "
      "on the same thread, then close() of both ends (the client with SO_LINGER 0: a reset, no "
      "TIME_WAIT); all inside the timer; {}",
      batch_words(r.batch));
  return r;
}

}  // namespace

Result<std::vector<Rung>> run_loopback(const LadderOptions& options) {
  Result<Rung> rtt = round_trip(options.timing);
  if (!rtt) return rtt.status();
  Result<Rung> setup = connect_accept(options.timing);
  if (!setup) return setup.status();
  return std::vector<Rung>{std::move(*rtt), std::move(*setup)};
}

}  // namespace knee::probes
