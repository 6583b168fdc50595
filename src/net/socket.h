// TCP sockets for the load engine, the lab server and the ladder: address resolution, connect,
// listen and accept (non-blocking by default, blocking where one operation at a time is the
// point), the socket options knee sets, and an RAII file descriptor.
//
// Every function returns failures as Status values naming the operation, the address and the OS
// error (Status::os_error() holds the errno); none throws. Thread-safety: functions are
// reentrant; an Fd belongs to one owner.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace knee::net {

// An owned file descriptor, closed on destruction. Move-only.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1);
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// An IPv4 or IPv6 socket address.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  int port() const;
  // "127.0.0.1:8080" or "[::1]:8080".
  std::string to_string() const;
};

// 127.0.0.1:port (0: an ephemeral port when bound).
SocketAddress loopback_v4(int port);

// Resolves host (a name, IPv4 literal, or IPv6 literal without brackets) and port with
// getaddrinfo; returns the first address. Blocking: call before a run, never in a loop.
// Errors: kUnavailable with the resolver's message.
core::Result<SocketAddress> resolve(const std::string& host, int port);

// Every address of host and port, in getaddrinfo's order (RFC 6724's preference), duplicates
// dropped; "localhost" (any case) is 127.0.0.1 then ::1 whatever the resolver says, as RFC 6761
// §6.3 reserves it for loopback and curl (7.78) resolves it. Errors: as resolve().
core::Result<std::vector<SocketAddress>> resolve_all(const std::string& host, int port);

// The first of host's addresses (resolve_all) that accepts a connection within `timeout`, each
// tried in turn as curl and wrk do: a server listening on ::1 only is reached as localhost.
// Errors: resolve_all's, or kUnavailable naming every address tried and why it failed
// ("connect 127.0.0.1:80: Connection refused (ECONNREFUSED); connect [::1]:80: ...").
core::Result<SocketAddress> first_reachable(const std::string& host, int port, core::Nanos timeout);

// Whether a socket's calls block.
enum class Blocking : uint8_t { kNo, kYes };

// Creates a TCP socket with TCP_NODELAY and connects it to addr. Non-blocking (the default):
// the connect is usually still in progress on return; wait for writability, then call
// connect_error() (or Transport::finish_connect()). Blocking: returns connected.
// Errors: kIoError (socket creation) or the connect errno ("connect ADDR: ...").
core::Result<Fd> connect_tcp(const SocketAddress& addr, Blocking blocking = Blocking::kNo);

// The pending error of a non-blocking connect (SO_ERROR): 0 once connected, else an errno.
int connect_error(int fd);

// Connects with a blocking wait of at most `timeout`, then closes: the pre-flight check that a
// target is reachable. Errors: kUnavailable "connect ADDR: <strerror> (<ERRNO>)".
core::Status check_reachable(const SocketAddress& addr, core::Nanos timeout);

// A listening TCP socket on addr (SO_REUSEADDR; SO_REUSEPORT when reuse_port, so several event
// loops can each own a listener on one port). Port 0 picks an ephemeral port.
core::Result<Fd> listen_tcp(const SocketAddress& addr, bool reuse_port, int backlog,
                            Blocking blocking = Blocking::kNo);

// Accepts one connection (accept4). Errors: kIoError with the errno (EAGAIN on a non-blocking
// listener with nothing pending).
core::Result<Fd> accept_tcp(int listener, Blocking blocking = Blocking::kNo);

// The address a socket is bound to (getsockname): learn the port chosen for port 0.
core::Result<SocketAddress> local_address(int fd);

// Raises this process's soft open-file limit (RLIMIT_NOFILE) to its hard limit, as Go's runtime
// and nginx's worker_rlimit_nofile do (the soft default, often 1024, is far below what thousands
// of connections need), and returns the soft limit now in force (capped at 2^30); failures leave
// the limit as it was.
int64_t raise_open_file_limit();

// Socket options. Failures are ignored: each is an optimisation or a bound, not a requirement.
// TCP_NODELAY: small writes go out at once (no Nagle wait for the ACK of the previous one).
void set_nodelay(int fd);
// SO_SNDTIMEO and SO_RCVTIMEO: a blocking call gives up (EAGAIN) after `timeout`.
void set_io_timeouts(int fd, core::Nanos timeout);
// SO_LINGER 0: close() sends a reset, leaving no TIME_WAIT behind.
void set_linger_reset(int fd);

// What a TCP connection has sent over its life (TCP_INFO, linux/tcp.h: tcpi_total_retrans and
// tcpi_segs_out, RFC 4898 tcpEStatsPerfSegsOut, Linux 4.6+); zeros when the kernel does not
// say. Deltas of two readings give a phase's share.
struct TcpCounters {
  uint64_t retransmits = 0;   // segments retransmitted
  uint64_t segments_out = 0;  // segments sent, retransmits included
};
TcpCounters tcp_counters(int fd);

}  // namespace knee::net
