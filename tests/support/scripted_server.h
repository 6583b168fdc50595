// ScriptedServer: a small blocking HTTP/1.1 test server on 127.0.0.1 whose behaviour per request
// is scripted by the test: answer with given bytes, close without answering, hang, or answer
// late. One thread per connection; tests only. It records how many requests were in flight at
// once, the request targets it saw and the body bytes it read.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace knee::testing {

struct Action {
  enum class Kind { kRespond, kClose, kHang } kind = Kind::kRespond;
  std::string bytes;                   // kRespond: the raw response
  std::chrono::milliseconds delay{0};  // before responding
  bool close_after = false;            // kRespond: close the connection after writing
  // kRespond: write bytes[0, split_at) and the rest in two send() calls (0: one call). The
  // server's sockets keep Nagle's algorithm on, so a small second write waits for the ACK of
  // the first.
  size_t split_at = 0;
  // kRespond: answer as soon as the request's head is in, then read (and drop) its body, as a
  // server that refuses a request early does (knee serve's 405 or 413).
  bool before_body = false;

  // Answers with `raw` after `delay`, then closes the connection when close_after.
  static Action respond(std::string raw, std::chrono::milliseconds delay = {},
                        bool close_after = false) {
    Action a;
    a.bytes = std::move(raw);
    a.delay = delay;
    a.close_after = close_after;
    return a;
  }
  // Answers with `raw` in two writes, the first of `split_at` bytes (headers, then body).
  static Action respond_split(std::string raw, size_t split_at) {
    Action a = respond(std::move(raw));
    a.split_at = split_at;
    return a;
  }
  // Closes the connection without answering.
  static Action close() {
    Action a;
    a.kind = Kind::kClose;
    return a;
  }
  // Never answers (until the server is destroyed).
  static Action hang() {
    Action a;
    a.kind = Kind::kHang;
    return a;
  }
};

// A 200 response with Content-Length and the given body.
std::string ok_response(const std::string& body = "ok");

// How a ScriptedServer speaks on each accepted connection: plain HTTP, or TLS first (with the
// given certificate chain and key; when client_ca is set, a client certificate signed by it is
// required), or one of the broken TLS servers a client must survive.
struct ServerTls {
  enum class Mode {
    kPlain,            // no TLS
    kTls,              // a TLS server (OpenSSL), then the script over it
    kGarbage,          // answers the ClientHello with bytes that are not TLS
    kCloseAfterHello,  // reads the ClientHello and closes
  } mode = Mode::kPlain;
  std::string cert_file, key_file;
  std::string client_ca;  // kTls: require a client certificate signed by this CA
  std::string alpn;       // kTls: the protocol to select when the client offers it ("" none)
  // kTls: connections from this index on (0 is the first accepted) get kGarbage instead; -1
  // none.
  int garbage_from_connection = -1;

  // A TLS server with this certificate chain and key.
  static ServerTls serving(std::string cert, std::string key) {
    ServerTls t;
    t.mode = Mode::kTls;
    t.cert_file = std::move(cert);
    t.key_file = std::move(key);
    return t;
  }
};

class ScriptedServer {
 public:
  // script(connection_number, request_number_on_connection, request_head) -> Action.
  using Script = std::function<Action(int, int, const std::string&)>;
  // Answers every request with ok_response().
  static Script always_ok() {
    return [](int, int, const std::string&) { return Action::respond(ok_response()); };
  }

  explicit ScriptedServer(Script script, ServerTls tls = {});
  ~ScriptedServer();

  int port() const { return port_; }
  // http://127.0.0.1:PORT/path, or https://HOST:PORT/path with TLS (host: 127.0.0.1 unless
  // given, e.g. "localhost" to check a DNS name).
  std::string url(const std::string& path = "/") const;
  std::string https_url(const std::string& host, const std::string& path = "/") const;
  // TLS handshakes completed, and of those, resumed sessions.
  int handshakes() const { return handshakes_.load(); }
  int resumed() const { return resumed_.load(); }
  int max_in_flight() const { return max_in_flight_.load(); }
  int connections_accepted() const { return accepted_.load(); }
  std::vector<std::string> targets() const;
  // Request body bytes read (a request's body is its Content-Length's bytes), in bytes.
  uint64_t body_bytes() const { return body_bytes_.load(); }
  // The server goes away: it stops listening (connects are refused from now on) and closes
  // every open connection.
  void go_away();

 private:
  void accept_loop();
  void serve(int fd, int conn);

  Script script_;
  ServerTls tls_;
  void* ssl_ctx_ = nullptr;  // SSL_CTX* when tls_.mode == kTls
  std::atomic<int> handshakes_{0};
  std::atomic<int> resumed_{0};
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> gone_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::atomic<int> accepted_{0};
  std::atomic<uint64_t> body_bytes_{0};
  mutable std::mutex mu_;
  std::vector<std::string> targets_;
  std::vector<int> open_fds_;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace knee::testing
