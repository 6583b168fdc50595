// H2Server: a small HTTP/2 test server on 127.0.0.1 (libnghttp2's server session), cleartext
// with prior knowledge or over TLS with ALPN h2, whose misbehaviour is scripted: a low
// SETTINGS_MAX_CONCURRENT_STREAMS, a GOAWAY after K streams, streams reset with an error code,
// large bodies, slow answers. One thread per connection; tests only. It records the most streams
// it saw open at once on one connection and the streams it answered.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace knee::testing {

struct H2Script {
  uint32_t max_streams = 0;  // SETTINGS_MAX_CONCURRENT_STREAMS to advertise; 0: none
  // After this many requests on a connection, GOAWAY (NO_ERROR) naming the last of them; the
  // streams up to it are answered, then the connection is closed. 0: never.
  int goaway_after = 0;
  // With goaway_after: the server also stops listening when it sends its first GOAWAY (connects
  // are refused from then on), as a server shutting down does.
  bool stop_listening_at_goaway = false;
  // Every reset_every-th request on a connection is answered with RST_STREAM reset_code
  // instead. 0: none.
  int reset_every = 0;
  uint32_t reset_code = 2;             // INTERNAL_ERROR
  size_t body_bytes = 2;               // the response body's size ("ok" when 2)
  std::chrono::milliseconds delay{0};  // before each answer
  // After this many requests on a connection, 5,000 PING frames in one write instead of the
  // answers (more PING ACKs than nghttp2 lets a peer queue: its client reports a flood). 0: never.
  // Cleartext (h2c) only: over TLS the server just stops answering.
  int ping_flood_after = 0;
  // TLS with this certificate and key, ALPN h2; cleartext (h2c) when empty.
  std::string cert_file, key_file;
};

class H2Server {
 public:
  explicit H2Server(H2Script script);
  ~H2Server();
  H2Server(const H2Server&) = delete;
  H2Server& operator=(const H2Server&) = delete;

  int port() const { return port_; }
  // http://127.0.0.1:PORT/ or, with TLS, https://127.0.0.1:PORT/.
  std::string url() const;
  int max_open_streams() const { return max_open_.load(); }
  int answered() const { return answered_.load(); }
  int connections_accepted() const { return accepted_.load(); }

 private:
  void accept_loop();
  void serve(int fd);
  void stop_listening();  // once: connects are refused from now on

  H2Script script_;
  void* ssl_ctx_ = nullptr;  // SSL_CTX* with TLS
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> gone_{false};  // stop_listening() was called
  std::atomic<int> max_open_{0};
  std::atomic<int> answered_{0};
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::vector<int> open_fds_;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace knee::testing
