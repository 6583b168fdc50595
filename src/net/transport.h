// Transport: how bytes move over one established connection. Every part of knee that moves
// bytes (the load workers, the lab server, the request-phases probe, the ladder's loopback rung)
// goes through it, so TLS plugs in beside plain TCP without touching their loops.
//
// send_some()/recv_some() do at most one system call (repeated on EINTR) and say what happened
// as a small value, never by throwing or by errno:
//   kDone        bytes > 0 were moved
//   kWouldBlock  the socket is full (send) or empty (recv): wait for readiness and call again;
//                on a blocking socket with SO_SNDTIMEO/SO_RCVTIMEO this means the timeout ran out.
//                wants_write says which readiness: writable (true) or readable (false); a TLS
//                handshake waits for either
//   kClosed      recv only: the peer closed its side (EOF), no bytes
//   kError       the connection failed; `error` holds the errno (EPIPE, ECONNRESET, ...)
// send_some never raises SIGPIPE (MSG_NOSIGNAL). A transport that queues writes (UringTransport,
// net/send_ring.h) says kDone for bytes queued, not yet written, and kWouldBlock when its queue is
// full; unsent() says how many bytes it still holds.
//
// Ownership: a TcpTransport owns its file descriptor and closes it when destroyed. The owner
// registers fd() with its event loop. Thread-safety: one owner thread per transport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"
#include "net/socket.h"

namespace knee::net {

enum class IoStatus : uint8_t { kDone, kWouldBlock, kClosed, kError };

struct IoResult {
  IoStatus status = IoStatus::kDone;
  size_t bytes = 0;          // kDone: bytes moved, > 0
  int error = 0;             // kError: the errno (EPROTO for a TLS failure: see error_text())
  bool wants_write = false;  // kWouldBlock: wait until writable rather than readable

  static IoResult done(size_t n) { return {IoStatus::kDone, n, 0, false}; }
  static IoResult would_block(bool wants_write = false) {
    return {IoStatus::kWouldBlock, 0, 0, wants_write};
  }
  static IoResult closed() { return {IoStatus::kClosed, 0, 0, false}; }
  static IoResult failed(int err) { return {IoStatus::kError, 0, err, false}; }
};

// What a finished TLS handshake agreed on (net/tls.h).
struct TlsInfo {
  std::string version;   // "TLSv1.3"
  std::string cipher;    // "TLS_AES_256_GCM_SHA384"
  std::string alpn;      // the protocol the server chose, "" when none
  bool resumed = false;  // an abbreviated handshake that resumed an earlier session
};

class Transport {
 public:
  virtual ~Transport() = default;
  // The socket, for the owner's event loop (never closed by the owner).
  virtual int fd() const = 0;
  // Completes connection set-up after a non-blocking connect became writable (TCP: reads
  // SO_ERROR; TLS will run its handshake here). kDone: ready for requests; kWouldBlock: call
  // again on the next readiness; kError with the errno.
  virtual IoResult finish_connect() = 0;
  virtual IoResult send_some(std::string_view data) = 0;
  virtual IoResult recv_some(std::span<char> buffer) = 0;
  // Closes the sending side (a FIN after what was written), for a lingering close.
  virtual void shutdown_write() = 0;
  // The last kError in words when an errno does not say it (a TLS alert, a certificate that
  // did not verify); "" otherwise.
  virtual std::string error_text() const { return {}; }
  // Whether a recv_some() that returned less than asked left something inside the transport
  // (TLS: decrypted bytes, or a close read after them) that no readiness event will announce:
  // call recv_some() again before waiting. Plain TCP: never.
  virtual bool buffered() const { return false; }
  // The TLS handshake's outcome once it is done; nullptr for plain TCP or before.
  virtual const TlsInfo* tls() const { return nullptr; }
  // Bytes send_some() accepted that are not yet written to the socket, in bytes: 0 but for a
  // transport that queues (UringTransport), whose owner counts them as still writing.
  virtual size_t unsent() const { return 0; }
};

// Plain TCP over one socket.
class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(Fd fd) : fd_(std::move(fd)) {}
  int fd() const override { return fd_.get(); }
  IoResult finish_connect() override;
  IoResult send_some(std::string_view data) override;
  IoResult recv_some(std::span<char> buffer) override;
  void shutdown_write() override;

 private:
  Fd fd_;
};

// One recv(2) on socket `fd` (repeated on EINTR), as TcpTransport::recv_some says it: the read
// of plain TCP, also UringTransport's (net/send_ring.h).
IoResult recv_plain(int fd, std::span<char> buffer);

// What a kError of `t` was, for an error cause: its error_text() when it has one (TLS), else
// the errno's name ("ECONNRESET").
std::string failure_cause(const Transport& t, int err);

// Blocking helpers for a transport on a blocking socket (the ladder's ping-pong, tests): write
// all of `data` / read exactly buffer.size() bytes. Errors: kIoError "<what>: ..." with the
// errno (EPIPE for an EOF, ETIMEDOUT when the socket's timeout ran out).
core::Status send_all(Transport& t, std::string_view data, std::string_view what);
core::Status recv_exactly(Transport& t, std::span<char> buffer, std::string_view what);

}  // namespace knee::net
