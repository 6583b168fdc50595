#include "net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace knee::net {

using core::Result;
using core::Status;

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

std::string SocketAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, buf, sizeof buf);
    return fmt::format("{}:{}", buf, port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, buf,
              sizeof buf);
    return fmt::format("[{}]:{}", buf, port());
  }
  return "(unknown address family)";
}

Result<std::vector<SocketAddress>> resolve_all(const std::string& host, int port) {
  if (strcasecmp(host.c_str(), "localhost") == 0) {
    SocketAddress v6;
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&v6.storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    in6->sin6_addr = in6addr_loopback;
    v6.length = sizeof(sockaddr_in6);
    return std::vector<SocketAddress>{loopback_v4(port), v6};
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc == EAI_ADDRFAMILY || rc == EAI_NONAME) {
    // AI_ADDRCONFIG hides ::1 on hosts without a global IPv6 address; loopback still works.
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  }
  if (rc != 0 || res == nullptr) {
    return Status::unavailable(fmt::format("resolve {}: {}", host, gai_strerror(rc)));
  }
  std::vector<SocketAddress> out;
  for (const addrinfo* a = res; a != nullptr; a = a->ai_next) {
    SocketAddress address;
    std::memcpy(&address.storage, a->ai_addr, a->ai_addrlen);
    address.length = a->ai_addrlen;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const SocketAddress& o) {
      return o.to_string() == address.to_string();
    });
    if (!seen) out.push_back(address);
  }
  freeaddrinfo(res);
  return out;
}

Result<SocketAddress> resolve(const std::string& host, int port) {
  auto all = resolve_all(host, port);
  if (!all) return all.status();
  return all->front();
}

Result<SocketAddress> first_reachable(const std::string& host, int port, core::Nanos timeout) {
  auto all = resolve_all(host, port);
  if (!all) return all.status();
  std::string failures;
  for (const SocketAddress& address : *all) {
    const Status s = check_reachable(address, timeout);
    if (s) return address;
    if (all->size() == 1) return s;  // one address: its own error, errno kept
    failures += (failures.empty() ? "" : "; ") + s.message();
  }
  return Status::unavailable(failures);
}

namespace {

Result<Fd> new_socket(int family, Blocking blocking) {
  const int flags = SOCK_STREAM | SOCK_CLOEXEC | (blocking == Blocking::kNo ? SOCK_NONBLOCK : 0);
  int fd = ::socket(family, flags, 0);
  if (fd < 0) return Status::from_errno("socket", errno);
  return Fd(fd);
}

}  // namespace

SocketAddress loopback_v4(int port) {
  SocketAddress out;
  auto* in = reinterpret_cast<sockaddr_in*>(&out.storage);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  in->sin_port = htons(static_cast<uint16_t>(port));
  out.length = sizeof(sockaddr_in);
  return out;
}

int64_t raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return static_cast<int64_t>(std::min<rlim_t>(limit.rlim_cur, rlim_t{1} << 30));
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void set_io_timeouts(int fd, core::Nanos timeout) {
  const int64_t us = std::max<int64_t>(1, timeout.count() / 1000);
  const timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void set_linger_reset(int fd) {
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
}

Result<Fd> connect_tcp(const SocketAddress& addr, Blocking blocking) {
  auto sock = new_socket(addr.family(), blocking);
  if (!sock) return sock.status();
  Fd fd = std::move(sock).value();
  set_nodelay(fd.get());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) != 0 &&
      !(blocking == Blocking::kNo && errno == EINPROGRESS)) {
    return Status::from_errno("connect " + addr.to_string(), errno);
  }
  return fd;
}

int connect_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

Status check_reachable(const SocketAddress& addr, core::Nanos timeout) {
  auto fd = connect_tcp(addr);
  if (!fd) return fd.status().with_code(Status::Code::kUnavailable);
  pollfd p{fd->get(), POLLOUT, 0};
  int ms = static_cast<int>(std::max<int64_t>(1, timeout.count() / 1'000'000));
  int rc = ::poll(&p, 1, ms);
  if (rc == 0) return Status::unavailable("connect " + addr.to_string() + ": timed out");
  int err = rc < 0 ? errno : connect_error(fd->get());
  if (err != 0) {
    return Status::from_errno("connect " + addr.to_string(), err)
        .with_code(Status::Code::kUnavailable);
  }
  return Status::success();
}

Result<Fd> listen_tcp(const SocketAddress& addr, bool reuse_port, int backlog, Blocking blocking) {
  auto sock = new_socket(addr.family(), blocking);
  if (!sock) return sock.status();
  Fd fd = std::move(sock).value();
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuse_port) ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) != 0) {
    return Status::from_errno("bind " + addr.to_string(), errno);
  }
  if (::listen(fd.get(), backlog) != 0) {
    return Status::from_errno("listen " + addr.to_string(), errno);
  }
  return fd;
}

Result<Fd> accept_tcp(int listener, Blocking blocking) {
  const int flags = SOCK_CLOEXEC | (blocking == Blocking::kNo ? SOCK_NONBLOCK : 0);
  while (true) {
    const int fd = ::accept4(listener, nullptr, nullptr, flags);
    if (fd >= 0) return Fd(fd);
    if (errno != EINTR) return Status::from_errno("accept", errno);
  }
}

Result<SocketAddress> local_address(int fd) {
  SocketAddress out;
  out.length = sizeof out.storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&out.storage), &out.length) != 0) {
    return Status::from_errno("getsockname", errno);
  }
  return out;
}

}  // namespace knee::net
