// Fuzz target: knee's TLS input paths (net/tls.cc around OpenSSL): the bytes a peer sends
// during and after a handshake, on the load engine's client side (TlsTransport::create) and the
// lab server's side (TlsTransport::accept).
//
// Input: byte 0 picks the side (bit 0: 0 client, 1 server); the rest is what the peer sends,
// written whole into one end of a socketpair and followed by a FIN. The transport on the other
// end runs its handshake (finish_connect) and then reads (recv_some) until it fails or the peer's
// close is read. Checks (abort on failure): it gets there in a bounded number of steps (no
// endless "would block" on a socket that holds the peer's FIN), a kError carries an errno and, for
// TLS failures (EPROTO), words in error_text(); nothing crashes, leaks or reads out of bounds
// (ASan, UBSan).
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>

#include "net/socket.h"
#include "net/tls.h"
#include "net/transport.h"

namespace {

using knee::net::IoStatus;

void check(bool ok) {
  if (!ok) std::abort();
}

const knee::net::TlsContext& client_context() {
  static const auto context = [] {
    knee::net::TlsOptions options;
    options.verify = false;
    options.alpn = {"h2", "http/1.1"};
    return *knee::net::TlsContext::create(options);
  }();
  return *context;
}

const knee::net::TlsContext& server_context() {
  static const auto context = *knee::net::TlsContext::create_server({}, {"h2", "http/1.1"});
  return *context;
}

void check_failure(const knee::net::IoResult& r, const knee::net::Transport& t) {
  check(r.error != 0);
  if (r.error == EPROTO) check(!t.error_text().empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool server = (data[0] & 1) != 0;
  int fds[2];
  check(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
  knee::net::Fd peer(fds[1]);
  // The input fits the socket buffer (libFuzzer's default -max_len is 4096; bigger inputs are
  // cut to what the socket takes).
  const ssize_t wrote = ::send(peer.get(), data + 1, size - 1, MSG_NOSIGNAL);
  (void)wrote;
  ::shutdown(peer.get(), SHUT_WR);

  auto made = server ? knee::net::TlsTransport::accept(knee::net::Fd(fds[0]), server_context())
                     : knee::net::TlsTransport::create(knee::net::Fd(fds[0]), client_context(),
                                                       "localhost", nullptr);
  check(made.has_value());
  knee::net::Transport& t = **made;
  std::array<char, 512> sink{};
  bool connected = false;
  // Every byte the peer will send is already in the socket, followed by its FIN, and the
  // transport's own output is drained before each step: a transport that keeps answering "would
  // block" would spin in an event loop, whose readiness never stops (a queued FIN is readable).
  for (int step = 0; step < 1024; ++step) {
    while (::recv(peer.get(), sink.data(), sink.size(), 0) > 0) {
    }
    const knee::net::IoResult r =
        connected ? t.recv_some(std::span<char>(sink)) : t.finish_connect();
    if (r.status == IoStatus::kError) {
      check_failure(r, t);
      return 0;
    }
    if (r.status == IoStatus::kClosed) return 0;
    if (r.status == IoStatus::kDone) connected = true;
  }
  std::abort();  // no end after 1024 steps
}
