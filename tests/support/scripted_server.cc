#include "support/scripted_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <stdexcept>

namespace knee::testing {

std::string ok_response(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

namespace {

extern "C" int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen,
                           const unsigned char* in, unsigned inlen, void* arg) {
  const auto* want = static_cast<const std::string*>(arg);
  for (unsigned i = 0; i < inlen;) {
    const unsigned len = in[i];
    if (i + 1 + len <= inlen &&
        std::string_view(reinterpret_cast<const char*>(in + i + 1), len) == *want) {
      *out = in + i + 1;
      *outlen = static_cast<unsigned char>(len);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

}  // namespace

ScriptedServer::ScriptedServer(Script script, ServerTls tls)
    : script_(std::move(script)), tls_(std::move(tls)) {
  if (tls_.mode == ServerTls::Mode::kTls) {
    // OpenSSL writes with write(2): a client that resets must not kill the test with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr || SSL_CTX_use_certificate_chain_file(ctx, tls_.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, tls_.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      SSL_CTX_free(ctx);
      throw std::runtime_error("ScriptedServer: cannot load the TLS certificate or key");
    }
    if (!tls_.client_ca.empty()) {
      SSL_CTX_load_verify_locations(ctx, tls_.client_ca.c_str(), nullptr);
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    if (!tls_.alpn.empty()) SSL_CTX_set_alpn_select_cb(ctx, select_alpn, &tls_.alpn);
    ssl_ctx_ = ctx;
  }
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
  SSL_CTX_free(static_cast<SSL_CTX*>(ssl_ctx_));
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

std::string ScriptedServer::https_url(const std::string& host, const std::string& path) const {
  return "https://" + host + ":" + std::to_string(port_) + path;
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
  SSL* ssl = nullptr;
  auto wait_readable = [&] {
    pollfd p{fd, POLLIN, 0};
    while (!stopping_ && !gone_) {
      if (::poll(&p, 1, 50) != 0) return true;
    }
    return false;
  };
  const bool garbage = tls_.mode == ServerTls::Mode::kGarbage ||
                       (tls_.garbage_from_connection >= 0 && conn >= tls_.garbage_from_connection);
  if (garbage || tls_.mode == ServerTls::Mode::kCloseAfterHello) {
    if (wait_readable()) {
      (void)::recv(fd, chunk, sizeof chunk, 0);  // the ClientHello
      if (garbage) {
        const std::string junk = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
        ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
      }
    }
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  if (tls_.mode == ServerTls::Mode::kTls) {
    ssl = SSL_new(static_cast<SSL_CTX*>(ssl_ctx_));
    SSL_set_fd(ssl, fd);
    timeval tv{2, 0};  // a client that stalls the handshake does not hold the thread forever
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (SSL_accept(ssl) != 1) {
      ERR_clear_error();
      SSL_free(ssl);
      ::shutdown(fd, SHUT_RDWR);
      return;
    }
    tv = timeval{0, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ++handshakes_;
    if (SSL_session_reused(ssl) == 1) ++resumed_;
  }
  auto send_bytes = [&](const char* data, size_t size) {
    if (ssl != nullptr) {
      size_t written = 0;
      SSL_write_ex(ssl, data, size, &written);
    } else {
      ::send(fd, data, size, MSG_NOSIGNAL);
    }
  };
  auto read_more = [&] {
    if ((ssl == nullptr || SSL_pending(ssl) == 0) && !wait_readable()) return false;
    ssize_t n = 0;
    if (ssl != nullptr) {
      size_t got = 0;
      n = SSL_read_ex(ssl, chunk, sizeof chunk, &got) == 1 ? static_cast<ssize_t>(got) : 0;
    } else {
      n = ::recv(fd, chunk, sizeof chunk, 0);
    }
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
    return true;
  };
  while (!stopping_ && !gone_) {
    size_t end = buf.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (!read_more()) break;
      continue;
    }
    std::string head = buf.substr(0, end + 4);
    buf.erase(0, end + 4);
    // A body as its Content-Length says (the tests write the field in this spelling).
    const size_t length_at = head.find("\r\nContent-Length: ");
    const size_t body =
        length_at == std::string::npos ? 0 : std::stoul(head.substr(length_at + 18));
    auto take_body = [&] {
      while (buf.size() < body && read_more()) {
      }
      if (buf.size() < body) return false;
      buf.erase(0, body);
      body_bytes_ += body;
      return true;
    };
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
    if (!a.before_body && !take_body()) {
      --in_flight_;
      break;
    }
    if (a.kind == Action::Kind::kHang) {
      while (!stopping_ && !gone_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      --in_flight_;
      break;
    }
    if (a.delay.count() > 0) std::this_thread::sleep_for(a.delay);
    --in_flight_;
    if (a.kind == Action::Kind::kClose) break;
    if (a.split_at > 0 && a.split_at < a.bytes.size()) {
      send_bytes(a.bytes.data(), a.split_at);
      send_bytes(a.bytes.data() + a.split_at, a.bytes.size() - a.split_at);
    } else {
      send_bytes(a.bytes.data(), a.bytes.size());
    }
    if (a.close_after) break;
    if (a.before_body && !take_body()) break;
  }
  if (ssl != nullptr) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  ::shutdown(fd, SHUT_RDWR);  // closed by the destructor, after every thread has ended
}

}  // namespace knee::testing
