// TLS client connections over OpenSSL 3: a context shared by every connection of a run
// (trust store, client certificate, protocol versions, ALPN), a per-thread cache of the last
// session for resumption, and TlsTransport, the Transport that moves bytes through TLS.
//
// Verification is on by default (RFC 6125 host check against the URL's host: a DNS name is
// matched against the certificate's DNS names and sent as SNI, RFC 6066 section 3; an IP literal
// is matched against its IP addresses and sent without SNI). A failed handshake names its reason
// in words (TlsTransport::error_text(): "certificate verify failed: hostname mismatch",
// "... certificate has expired", "... self-signed certificate", "... unable to get local issuer
// certificate" for an unknown CA, or the alert or library reason).
//
// Resumption: TLS 1.3 tickets arrive after the handshake, so sessions are collected through
// OpenSSL's new-session callback into the TlsSessionCache of the connection's thread, and the
// next connection of that thread offers the latest one (TLS 1.2 session tickets or IDs alike).
//
// Thread-safety: a TlsContext is read-only after create() and may be shared by threads (OpenSSL
// SSL_CTX rules); a TlsSessionCache and a TlsTransport belong to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "net/socket.h"
#include "net/transport.h"

using SSL = struct ssl_st;
using SSL_CTX = struct ssl_ctx_st;
using SSL_SESSION = struct ssl_session_st;

namespace knee::net {

// What the user chose (the --cacert, -k, --cert, --key, --tls, --no-tls-resume flags).
struct TlsOptions {
  std::string ca_file;    // PEM bundle to trust instead of the system store; empty: system store
  bool verify = true;     // false: accept any certificate (-k/--insecure)
  std::string cert_file;  // client certificate (PEM) for mutual TLS; with key_file
  std::string key_file;   // its private key (PEM)
  // Pins the protocol: 12 (TLS 1.2) or 13 (TLS 1.3); nullopt: 1.2 or 1.3, the highest both speak.
  std::optional<int> version;
  bool resume = true;             // offer the last session on reconnect
  std::vector<std::string> alpn;  // protocols offered in ALPN, in order; empty: no ALPN
  bool operator==(const TlsOptions&) const = default;
};

// The lab server's side (knee serve --tls): a certificate chain and key in PEM files, or, when
// both are empty, a self-signed certificate made in memory at start (EC P-256, SHA-256, valid 30
// days, subjectAltName DNS:localhost, IP:127.0.0.1, IP:::1).
struct TlsServerIdentity {
  std::string cert_file;
  std::string key_file;
};

// An SSL_CTX configured from TlsOptions (a client) or a TlsServerIdentity (a server).
class TlsContext {
 public:
  // Errors: kInvalidArgument naming the file and OpenSSL's reason for a CA bundle, certificate
  // or key that cannot be read or does not match, or a version other than 12 or 13.
  static core::Result<std::shared_ptr<const TlsContext>> create(const TlsOptions& options);
  // A server context that accepts TLS 1.2 and 1.3 and selects, in ALPN, the first of `alpn`
  // (server preference, "http/1.1") the client offers, or none. Errors: kInvalidArgument naming
  // --cert or --key as create() does (field "cert" or "key"), or one given without the other;
  // kIoError when OpenSSL cannot make the certificate.
  static core::Result<std::shared_ptr<const TlsContext>> create_server(
      const TlsServerIdentity& identity, std::vector<std::string> alpn);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* get() const { return ctx_; }
  const TlsOptions& options() const { return options_; }
  // A server context's certificate: its SHA-256 fingerprint as colon-separated hex
  // ("3A:F1:...", what `openssl x509 -fingerprint -sha256` prints), and whether knee made it.
  const std::string& fingerprint() const { return fingerprint_; }
  bool self_signed() const { return self_signed_; }

 private:
  TlsContext(SSL_CTX* ctx, TlsOptions options) : ctx_(ctx), options_(std::move(options)) {}
  SSL_CTX* ctx_;
  TlsOptions options_;
  std::string fingerprint_;
  bool self_signed_ = false;
  std::vector<std::string> server_alpn_;  // a server's ALPN preference, read by its callback
};

// The latest session a server gave this thread's connections, to resume the next one. Empty
// when resumption is off or no server issued one.
class TlsSessionCache {
 public:
  TlsSessionCache() = default;
  ~TlsSessionCache();
  TlsSessionCache(const TlsSessionCache&) = delete;
  TlsSessionCache& operator=(const TlsSessionCache&) = delete;

  // Takes ownership of one reference to `session` (replacing the previous one).
  void store(SSL_SESSION* session);
  SSL_SESSION* latest() const { return latest_; }

 private:
  SSL_SESSION* latest_ = nullptr;
};

// A TLS client connection over one TCP socket. finish_connect() first checks the TCP connect,
// then drives the handshake; kWouldBlock carries wants_write when the handshake waits to write.
// recv_some() fills the buffer from as many records as are ready; when it returns less than the
// buffer, buffered() says whether something (bytes, or a close read after them) waits inside
// the transport, where a readiness loop would not see it.
// A TLS failure (handshake, alert, bad record) is kError with error EPROTO and its words in
// error_text(); a socket failure is kError with its errno.
class TlsTransport final : public Transport {
 public:
  // `server_name` is the URL's host. `sessions` (may be null: no resumption) must outlive the
  // transport. Errors: kIoError when OpenSSL cannot make the connection object.
  static core::Result<std::unique_ptr<TlsTransport>> create(Fd fd, const TlsContext& context,
                                                            const std::string& server_name,
                                                            TlsSessionCache* sessions);
  // The server side of an accepted socket (a create_server() context): finish_connect() runs
  // the handshake as the server. Errors as create().
  static core::Result<std::unique_ptr<TlsTransport>> accept(Fd fd, const TlsContext& context);
  ~TlsTransport() override;

  int fd() const override { return fd_.get(); }
  IoResult finish_connect() override;
  IoResult send_some(std::string_view data) override;
  IoResult recv_some(std::span<char> buffer) override;
  // Sends close_notify (best effort), then a FIN.
  void shutdown_write() override;
  std::string error_text() const override { return error_; }
  bool buffered() const override;
  const TlsInfo* tls() const override { return handshake_done_ ? &info_ : nullptr; }

 private:
  TlsTransport(Fd fd, SSL* ssl) : fd_(std::move(fd)), ssl_(ssl) {}
  // The SSL object and knee's socket BIO for `fd`, in neither role yet.
  static core::Result<std::unique_ptr<TlsTransport>> over_socket(Fd fd, const TlsContext& context);
  IoResult fail_tls(int ssl_result, std::string_view during);

  Fd fd_;
  SSL* ssl_;
  bool tcp_done_ = false;
  bool handshake_done_ = false;
  bool failed_ = false;              // a fatal TLS error: the session is not resumed
  std::optional<IoResult> pending_;  // a close or error read after data, for the next call
  TlsInfo info_;
  std::string error_;
};

// Runs a whole client handshake on a blocking, connected socket within the socket's timeouts:
// the pre-flight check that the target speaks TLS and its certificate verifies. Returns what was
// agreed. Errors: kUnavailable "TLS handshake: <reason>" (TlsTransport::error_text()).
core::Result<TlsInfo> check_tls(Fd fd, const TlsContext& context, const std::string& server_name);

}  // namespace knee::net
