#include "support/h2_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

#include "net/socket.h"

namespace knee::testing {

namespace {

using Clock = std::chrono::steady_clock;

extern "C" int select_h2(SSL*, const unsigned char** out, unsigned char* outlen,
                         const unsigned char* in, unsigned inlen, void*) {
  for (unsigned i = 0; i < inlen;) {
    const unsigned len = in[i];
    if (i + 1 + len <= inlen &&
        std::string_view(reinterpret_cast<const char*>(in + i + 1), len) == "h2") {
      *out = in + i + 1;
      *outlen = static_cast<unsigned char>(len);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

// One connection's server session: requests become answers due at a time.
struct Conn {
  const H2Script* script = nullptr;
  nghttp2_session* session = nullptr;
  int requests = 0;
  int open = 0;
  std::atomic<int>* max_open = nullptr;
  int32_t goaway_last = 0;  // the last stream answered after a GOAWAY; 0: none sent
  std::multimap<Clock::time_point, int32_t> due;  // answers, by when
  std::map<int32_t, size_t> body_sent;
  std::map<int32_t, int> number;    // stream -> request number on the connection (1-based)
  bool flood = false;               // ping_flood_after reached: flood instead of answering
  std::function<void()> on_goaway;  // called when the GOAWAY is submitted; may be empty
};

ssize_t read_body(nghttp2_session*, int32_t stream_id, uint8_t* buf, size_t length, uint32_t* flags,
                  nghttp2_data_source*, void* user_data) {
  Conn& c = *static_cast<Conn*>(user_data);
  size_t& sent = c.body_sent[stream_id];
  const size_t n = std::min(length, c.script->body_bytes - sent);
  std::memset(buf, 'x', n);
  if (c.script->body_bytes == 2 && sent == 0 && n == 2) std::memcpy(buf, "ok", 2);
  sent += n;
  if (sent == c.script->body_bytes) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
  Conn& c = *static_cast<Conn*>(user_data);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  ++c.open;
  int seen = c.max_open->load();
  while (c.open > seen && !c.max_open->compare_exchange_weak(seen, c.open)) {
  }
  return 0;
}

int on_frame_recv(nghttp2_session* session, const nghttp2_frame* frame, void* user_data) {
  Conn& c = *static_cast<Conn*>(user_data);
  const bool request_done = (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
                            (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
  if (!request_done) return 0;
  const int32_t id = frame->hd.stream_id;
  if (c.goaway_last != 0 && id > c.goaway_last) return 0;  // refused by the GOAWAY
  const int n = ++c.requests;
  c.number[id] = n;
  if (c.script->ping_flood_after > 0 && n >= c.script->ping_flood_after) {
    c.flood = true;
    return 0;
  }
  c.due.emplace(Clock::now() + c.script->delay, id);
  if (c.script->goaway_after > 0 && n == c.script->goaway_after) {
    c.goaway_last = id;
    nghttp2_submit_goaway(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_NO_ERROR, nullptr, 0);
    if (c.on_goaway) c.on_goaway();
  }
  return 0;
}

int on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t, void* user_data) {
  Conn& c = *static_cast<Conn*>(user_data);
  c.number.erase(stream_id);
  if (c.open > 0) --c.open;
  c.body_sent.erase(stream_id);
  return 0;
}

}  // namespace

H2Server::H2Server(H2Script script) : script_(std::move(script)) {
  std::signal(SIGPIPE, SIG_IGN);
  if (!script_.cert_file.empty()) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr || SSL_CTX_use_certificate_chain_file(ctx, script_.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, script_.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      SSL_CTX_free(ctx);
      throw std::runtime_error("H2Server: cannot load the TLS certificate or key");
    }
    SSL_CTX_set_alpn_select_cb(ctx, select_h2, nullptr);
    ssl_ctx_ = ctx;
  }
  auto listener = net::listen_tcp(net::loopback_v4(0), /*reuse_port=*/false, 512);
  if (!listener) throw std::runtime_error("H2Server: " + listener.status().message());
  auto bound = net::local_address(listener->get());
  if (!bound) throw std::runtime_error("H2Server: " + bound.status().message());
  port_ = bound->port();
  listen_fd_ = listener->release();
  acceptor_ = std::thread([this] { accept_loop(); });
}

H2Server::~H2Server() {
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

std::string H2Server::url() const {
  return (ssl_ctx_ != nullptr ? "https://127.0.0.1:" : "http://127.0.0.1:") +
         std::to_string(port_) + "/";
}

void H2Server::stop_listening() {
  bool listening = false;
  // A listening socket shut down stops accepting: connects are refused (Linux).
  if (gone_.compare_exchange_strong(listening, true)) ::shutdown(listen_fd_, SHUT_RDWR);
}

void H2Server::accept_loop() {
  while (!stopping_) {
    if (gone_) {  // nothing more to accept (poll would report the shut-down socket at once)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;  // frames go out as nghttp2 makes them, not held by Nagle for an ACK
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ++accepted_;
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(fd);
    workers_.emplace_back([this, fd] { serve(fd); });
  }
}

void H2Server::serve(int fd) {
  SSL* ssl = nullptr;
  if (ssl_ctx_ != nullptr) {
    ssl = SSL_new(static_cast<SSL_CTX*>(ssl_ctx_));
    SSL_set_fd(ssl, fd);
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (SSL_accept(ssl) != 1) {
      ERR_clear_error();
      SSL_free(ssl);
      ::shutdown(fd, SHUT_RDWR);
      return;
    }
    tv = timeval{0, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  Conn c;
  c.script = &script_;
  c.max_open = &max_open_;
  if (script_.stop_listening_at_goaway) c.on_goaway = [this] { stop_listening(); };
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
  nghttp2_session_server_new(&c.session, cb, &c);
  nghttp2_session_callbacks_del(cb);
  std::vector<nghttp2_settings_entry> settings;
  if (script_.max_streams > 0) {
    settings.push_back({NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, script_.max_streams});
  }
  nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, settings.data(), settings.size());

  auto write_out = [&]() -> bool {
    while (true) {
      const uint8_t* data = nullptr;
      const ssize_t n = nghttp2_session_mem_send(c.session, &data);
      if (n < 0) return false;
      if (n == 0) return true;
      size_t done = 0;
      while (done < static_cast<size_t>(n)) {
        ssize_t w = 0;
        if (ssl != nullptr) {
          size_t got = 0;
          w = SSL_write_ex(ssl, data + done, static_cast<size_t>(n) - done, &got) == 1
                  ? static_cast<ssize_t>(got)
                  : -1;
        } else {
          w = ::send(fd, data + done, static_cast<size_t>(n) - done, MSG_NOSIGNAL);
        }
        if (w <= 0) return false;
        done += static_cast<size_t>(w);
      }
    }
  };
  char buf[16384];
  bool ok = write_out();
  while (ok && !stopping_) {
    // Answers that are due.
    const Clock::time_point now = Clock::now();
    while (!c.due.empty() && c.due.begin()->first <= now) {
      const int32_t id = c.due.begin()->second;
      c.due.erase(c.due.begin());
      const auto it = c.number.find(id);
      if (it == c.number.end()) continue;
      if (script_.reset_every > 0 && it->second % script_.reset_every == 0) {
        nghttp2_submit_rst_stream(c.session, NGHTTP2_FLAG_NONE, id, script_.reset_code);
        continue;
      }
      const std::string length = std::to_string(script_.body_bytes);
      nghttp2_nv headers[] = {
          {reinterpret_cast<uint8_t*>(const_cast<char*>(":status")),
           reinterpret_cast<uint8_t*>(const_cast<char*>("200")), 7, 3, NGHTTP2_NV_FLAG_NONE},
          {reinterpret_cast<uint8_t*>(const_cast<char*>("content-length")),
           reinterpret_cast<uint8_t*>(const_cast<char*>(length.data())), 14, length.size(),
           NGHTTP2_NV_FLAG_NONE}};
      nghttp2_data_provider body{};
      body.read_callback = read_body;
      nghttp2_submit_response(c.session, id, headers, 2, &body);
      ++answered_;
    }
    if (!write_out()) break;
    if (c.flood && ssl == nullptr) {
      c.flood = false;
      // PING: length 8, type 6, no flags, stream 0, 8 bytes of opaque data (RFC 9113, 6.7).
      static constexpr char kPing[17] = {0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
      std::string pings;
      for (int i = 0; i < 5000; ++i) pings.append(kPing, sizeof kPing);
      if (::send(fd, pings.data(), pings.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(pings.size())) {
        break;
      }
    }
    // A GOAWAY's streams all answered: the connection ends.
    if (c.goaway_last != 0 && c.due.empty() && c.number.empty()) break;
    if (nghttp2_session_want_read(c.session) == 0 && nghttp2_session_want_write(c.session) == 0) {
      break;
    }
    int wait_ms = 50;
    if (!c.due.empty()) {
      wait_ms = static_cast<int>(std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(c.due.begin()->first - Clock::now())
              .count(),
          0, 50));
    }
    if (ssl == nullptr || SSL_pending(ssl) == 0) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, wait_ms) <= 0) continue;
    }
    ssize_t n = 0;
    if (ssl != nullptr) {
      size_t got = 0;
      n = SSL_read_ex(ssl, buf, sizeof buf, &got) == 1 ? static_cast<ssize_t>(got) : 0;
    } else {
      n = ::recv(fd, buf, sizeof buf, 0);
    }
    if (n <= 0) break;
    if (nghttp2_session_mem_recv(c.session, reinterpret_cast<uint8_t*>(buf),
                                 static_cast<size_t>(n)) < 0) {
      break;
    }
  }
  nghttp2_session_del(c.session);
  if (ssl != nullptr) SSL_free(ssl);
  ::shutdown(fd, SHUT_RDWR);
}

}  // namespace knee::testing
