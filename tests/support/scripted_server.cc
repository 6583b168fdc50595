#include "support/scripted_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace knee::testing {

std::string ok_response(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

ScriptedServer::ScriptedServer(Script script) : script_(std::move(script)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 512) != 0) {
    throw std::runtime_error("ScriptedServer: bind/listen failed");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

ScriptedServer::~ScriptedServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (std::thread& t : workers_) t.join();
  for (int fd : open_fds_) ::close(fd);
  ::close(listen_fd_);
}

void ScriptedServer::go_away() {
  gone_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);  // a listening socket shut down refuses new connects
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
}

std::string ScriptedServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<std::string> ScriptedServer::targets() const {
  std::lock_guard<std::mutex> lock(mu_);
  return targets_;
}

void ScriptedServer::accept_loop() {
  int conn = 0;
  while (!stopping_ && !gone_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++accepted_;
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(fd);
    workers_.emplace_back([this, fd, c = conn++] { serve(fd, c); });
  }
}

void ScriptedServer::serve(int fd, int conn) {
  std::string buf;
  int request = 0;
  char chunk[4096];
  while (!stopping_ && !gone_) {
    size_t end = buf.find("\r\n\r\n");
    if (end == std::string::npos) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) == 0) continue;
      ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) break;
      buf.append(chunk, static_cast<size_t>(n));
      continue;
    }
    std::string head = buf.substr(0, end + 4);
    buf.erase(0, end + 4);  // requests in these tests carry no body
    {
      std::lock_guard<std::mutex> lock(mu_);
      size_t sp1 = head.find(' ');
      size_t sp2 = head.find(' ', sp1 + 1);
      targets_.push_back(head.substr(sp1 + 1, sp2 - sp1 - 1));
    }
    int now = ++in_flight_;
    int seen = max_in_flight_.load();
    while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
    }
    Action a = script_(conn, request++, head);
    if (a.kind == Action::Kind::kHang) {
      while (!stopping_ && !gone_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      --in_flight_;
      break;
    }
    if (a.delay.count() > 0) std::this_thread::sleep_for(a.delay);
    --in_flight_;
    if (a.kind == Action::Kind::kClose) break;
    if (a.split_at > 0 && a.split_at < a.bytes.size()) {
      ::send(fd, a.bytes.data(), a.split_at, MSG_NOSIGNAL);
      ::send(fd, a.bytes.data() + a.split_at, a.bytes.size() - a.split_at, MSG_NOSIGNAL);
    } else {
      ::send(fd, a.bytes.data(), a.bytes.size(), MSG_NOSIGNAL);
    }
    if (a.close_after) break;
  }
  ::shutdown(fd, SHUT_RDWR);  // closed by the destructor, after every thread has ended
}

}  // namespace knee::testing
