#include "net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

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

Result<SocketAddress> resolve(const std::string& host, int port) {
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
  SocketAddress out;
  std::memcpy(&out.storage, res->ai_addr, res->ai_addrlen);
  out.length = res->ai_addrlen;
  freeaddrinfo(res);
  return out;
}

namespace {

Result<Fd> new_socket(int family) {
  int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::from_errno("socket", errno);
  return Fd(fd);
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

Result<Fd> connect_nonblocking(const SocketAddress& addr) {
  auto sock = new_socket(addr.family());
  if (!sock) return sock.status();
  Fd fd = std::move(sock).value();
  set_nodelay(fd.get());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) != 0 &&
      errno != EINPROGRESS) {
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
  auto fd = connect_nonblocking(addr);
  if (!fd) return Status::unavailable(fd.status().message());
  pollfd p{fd->get(), POLLOUT, 0};
  int ms = static_cast<int>(std::max<int64_t>(1, timeout.count() / 1'000'000));
  int rc = ::poll(&p, 1, ms);
  if (rc == 0) return Status::unavailable("connect " + addr.to_string() + ": timed out");
  int err = rc < 0 ? errno : connect_error(fd->get());
  if (err != 0) {
    return Status::unavailable(Status::from_errno("connect " + addr.to_string(), err).message());
  }
  return Status::ok();
}

Result<Fd> listen_tcp(const SocketAddress& addr, bool reuse_port, int backlog) {
  auto sock = new_socket(addr.family());
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

Result<SocketAddress> local_address(int fd) {
  SocketAddress out;
  out.length = sizeof out.storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&out.storage), &out.length) != 0) {
    return Status::from_errno("getsockname", errno);
  }
  return out;
}

}  // namespace knee::net
