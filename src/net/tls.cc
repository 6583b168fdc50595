#include "net/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace knee::net {

using core::Result;
using core::Status;

namespace {

// OpenSSL's oldest queued error in words, and the queue emptied: "unsupported protocol".
std::string pop_ssl_errors() {
  std::string first;
  while (const unsigned long e = ERR_get_error()) {
    if (first.empty()) {
      const char* reason = ERR_reason_error_string(e);
      first = reason != nullptr ? reason : fmt::format("OpenSSL error {:#x}", e);
    }
  }
  return first;
}

// The index of the TlsSessionCache* kept on each SSL, for the new-session callback.
int cache_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// The pass-phrase callback: notes that one was asked for and gives none.
extern "C" int refuse_pass_phrase(char*, int, int, void* asked) {
  *static_cast<bool*>(asked) = true;
  return 0;
}

extern "C" int on_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* cache = static_cast<TlsSessionCache*>(SSL_get_ex_data(ssl, cache_index()));
  if (cache == nullptr) return 0;  // OpenSSL keeps its reference
  cache->store(session);
  return 1;  // the cache took the reference
}

// A socket BIO of knee's own: OpenSSL's writes with write(2), which raises SIGPIPE on a
// connection the peer reset; this one sends with MSG_NOSIGNAL, as TcpTransport does.
int bio_fd(BIO* b) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b))); }

bool retryable(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

extern "C" int bio_write(BIO* b, const char* data, int length) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::send(bio_fd(b), data, static_cast<size_t>(length), MSG_NOSIGNAL);
  if (n < 0 && retryable(errno)) BIO_set_retry_write(b);
  return static_cast<int>(n);
}

extern "C" int bio_read(BIO* b, char* data, int length) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::recv(bio_fd(b), data, static_cast<size_t>(length), 0);
  if (n < 0 && retryable(errno)) BIO_set_retry_read(b);
  return static_cast<int>(n);
}

extern "C" long bio_ctrl(BIO*, int command, long, void*) {
  return command == BIO_CTRL_FLUSH ? 1 : 0;  // nothing is buffered here
}

extern "C" int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "knee socket");
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    return m;
  }();
  return method;
}

// How to get past a certificate that did not verify, after its reason.
const char* verify_hint(long code) {
  switch (code) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      return " (trust its CA with --cacert FILE, or skip the check with -k)";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return " (the certificate is for other names: use one of them in the URL, or -k)";
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return " (check the server's certificate and this host's clock, or -k)";
    default:
      return "";
  }
}

// What a handshake failure usually means, for the reasons users meet most.
std::string reason_hint(const std::string& reason) {
  if (reason.find("wrong version number") != std::string::npos ||
      reason.find("packet length too long") != std::string::npos) {
    return " (the server does not speak TLS on this port: plain HTTP? try http://)";
  }
  if (reason.find("certificate required") != std::string::npos) {
    return " (the server asks for a client certificate: give --cert and --key)";
  }
  if (reason.find("no application protocol") != std::string::npos) {
    return " (the server speaks none of the protocols offered in ALPN: for h2, it has no "
           "HTTP/2 over TLS; drop --h2)";
  }
  if (reason.find("protocol version") != std::string::npos) {
    return " (the server speaks none of the TLS versions knee offered: see --tls)";
  }
  return "";
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// OpenSSL asks for an empty error queue before each I/O call; peeking first skips the clearing
// loop on the hot path, where the queue is empty (fail_tls() pops what a failure left).
void clear_errors() {
  if (ERR_peek_error() != 0) ERR_clear_error();
}

bool is_ip_literal(const std::string& host) {
  in6_addr v6{};
  in_addr v4{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 || inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

// ALPN's wire format (RFC 7301 section 3.1): each protocol as a length byte and its name.
std::string alpn_wire(const std::vector<std::string>& protocols) {
  std::string wire;
  for (const std::string& p : protocols) {
    wire += static_cast<char>(p.size());
    wire += p;
  }
  return wire;
}

}  // namespace

Result<std::shared_ptr<const TlsContext>> TlsContext::create(const TlsOptions& options) {
  if (options.version && *options.version != 12 && *options.version != 13) {
    return Status::invalid_field(
        "tls", fmt::format("{}: knee speaks TLS 1.2 and 1.3; give 1.2 or 1.3", *options.version));
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return Status::invalid_field(options.cert_file.empty() ? "cert" : "key",
                                 "a client certificate needs both --cert and --key");
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::io_error("TLS: cannot make a context: " + pop_ssl_errors());
  std::shared_ptr<const TlsContext> owned(new TlsContext(ctx, options));
  const int low =
      options.version ? (*options.version == 12 ? TLS1_2_VERSION : TLS1_3_VERSION) : TLS1_2_VERSION;
  const int high = options.version ? low : TLS1_3_VERSION;
  SSL_CTX_set_min_proto_version(ctx, low);
  SSL_CTX_set_max_proto_version(ctx, high);
  // Writes may return after one record, and a retry may pass the rest from a moved pointer.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // A peer that closes without close_notify is a close (HTTP/1.1 servers often do): the
  // response's own framing says whether anything was cut short.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  if (options.verify) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    const bool loaded = options.ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx) == 1
                                                : SSL_CTX_load_verify_locations(
                                                      ctx, options.ca_file.c_str(), nullptr) == 1;
    if (!loaded) {
      return Status::invalid_field(
          "cacert", options.ca_file.empty()
                        ? "TLS: cannot load the system's trusted certificates: " + pop_ssl_errors()
                        : fmt::format("'{}': not a readable PEM bundle of certificates ({})",
                                      options.ca_file, pop_ssl_errors()));
    }
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  if (!options.cert_file.empty()) {
    // No pass-phrase prompt: knee runs unattended, so an encrypted key is refused with a reason.
    bool asked_pass_phrase = false;
    SSL_CTX_set_default_passwd_cb_userdata(ctx, &asked_pass_phrase);
    SSL_CTX_set_default_passwd_cb(ctx, refuse_pass_phrase);
    if (SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) != 1) {
      return Status::invalid_field("cert", fmt::format("'{}': not a readable PEM certificate ({})",
                                                       options.cert_file, pop_ssl_errors()));
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, options.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      const std::string why = pop_ssl_errors();
      if (asked_pass_phrase) {
        return Status::invalid_field(
            "key", fmt::format("'{}' is encrypted and knee does not ask for pass phrases; "
                               "decrypt it first: openssl pkey -in {} -out key.pem",
                               options.key_file, options.key_file));
      }
      if (why.find("mismatch") != std::string::npos) {
        return Status::invalid_field(
            "key", fmt::format("'{}' does not belong to the certificate '{}'", options.key_file,
                               options.cert_file));
      }
      return Status::invalid_field(
          "key", fmt::format("'{}': not a readable PEM private key ({})", options.key_file, why));
    }
    SSL_CTX_set_default_passwd_cb(ctx, nullptr);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return Status::invalid_field(
          "key", fmt::format("'{}' does not belong to the certificate '{}'", options.key_file,
                             options.cert_file));
    }
  }
  if (!options.alpn.empty()) {
    const std::string wire = alpn_wire(options.alpn);
    SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(wire.data()),
                            static_cast<unsigned>(wire.size()));
  }
  if (options.resume) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  }
  return owned;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

TlsSessionCache::~TlsSessionCache() { SSL_SESSION_free(latest_); }

void TlsSessionCache::store(SSL_SESSION* session) {
  SSL_SESSION_free(latest_);
  latest_ = session;
}

Result<std::unique_ptr<TlsTransport>> TlsTransport::over_socket(Fd fd, const TlsContext& context) {
  SSL* ssl = SSL_new(context.get());
  if (ssl == nullptr) return Status::io_error("TLS: cannot make a connection: " + pop_ssl_errors());
  std::unique_ptr<TlsTransport> t(new TlsTransport(std::move(fd), ssl));
  BIO* bio = BIO_new(socket_method());
  if (bio == nullptr) return Status::io_error("TLS: cannot make a socket BIO: " + pop_ssl_errors());
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(t->fd_.get())));
  SSL_set_bio(ssl, bio, bio);  // the SSL owns the BIO from here
  return t;
}

Result<std::unique_ptr<TlsTransport>> TlsTransport::create(Fd fd, const TlsContext& context,
                                                           const std::string& server_name,
                                                           TlsSessionCache* sessions) {
  auto made = over_socket(std::move(fd), context);
  if (!made) return made.status();
  std::unique_ptr<TlsTransport> t = std::move(made).value();
  SSL* ssl = t->ssl_;
  SSL_set_connect_state(ssl);
  if (is_ip_literal(server_name)) {
    // RFC 6066 section 3: no IP literal in SNI; the certificate must list the address.
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), server_name.c_str());
  } else {
    // SSL_set_tlsext_host_name() without its C cast.
    SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(server_name.c_str()));
    SSL_set1_host(ssl, server_name.c_str());
  }
  if (context.options().resume && sessions != nullptr) {
    SSL_set_ex_data(ssl, cache_index(), sessions);
    if (sessions->latest() != nullptr) SSL_set_session(ssl, sessions->latest());
  }
  return t;
}

Result<std::unique_ptr<TlsTransport>> TlsTransport::accept(Fd fd, const TlsContext& context) {
  auto t = over_socket(std::move(fd), context);
  if (t) SSL_set_accept_state((*t)->ssl_);
  return t;
}

TlsTransport::~TlsTransport() {
  // OpenSSL drops the session of a connection freed without a shutdown as if it had failed;
  // a connection knee closes (keep-alive end, the run's end) is not a failure, so its session
  // stays resumable. One that failed is dropped.
  if (handshake_done_ && !failed_) SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN);
  SSL_free(ssl_);
}

IoResult TlsTransport::fail_tls(int ssl_result, std::string_view during) {
  const int code = SSL_get_error(ssl_, ssl_result);
  switch (code) {
    case SSL_ERROR_WANT_READ:
      return IoResult::would_block(false);
    case SSL_ERROR_WANT_WRITE:
      return IoResult::would_block(true);
    case SSL_ERROR_ZERO_RETURN:
      return IoResult::closed();  // close_notify: the peer's orderly close
    case SSL_ERROR_SYSCALL: {
      const int err = errno;
      pop_ssl_errors();
      // An EOF without close_notify: a peer that simply closed (HTTP/1.1 servers often do).
      if (ssl_result == 0 || err == 0) {
        if (!handshake_done_) {
          error_ = fmt::format("{}: the server closed the connection", during);
          return IoResult::failed(EPROTO);
        }
        return IoResult::closed();
      }
      return IoResult::failed(err);
    }
    default: {
      failed_ = true;
      std::string reason = pop_ssl_errors();
      const long verify = SSL_get_verify_result(ssl_);
      if (SSL_get_verify_mode(ssl_) != SSL_VERIFY_NONE && verify != X509_V_OK) {
        reason = fmt::format("certificate verify failed: {}{}",
                             X509_verify_cert_error_string(verify), verify_hint(verify));
      } else {
        reason += reason_hint(reason);
      }
      error_ = fmt::format("{}: {}", during, reason.empty() ? "protocol error" : reason);
      return IoResult::failed(EPROTO);
    }
  }
}

IoResult TlsTransport::finish_connect() {
  if (!tcp_done_) {
    if (const int err = connect_error(fd_.get()); err != 0) return IoResult::failed(err);
    tcp_done_ = true;
  }
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    handshake_done_ = true;
    info_.version = SSL_get_version(ssl_);
    const char* cipher = SSL_get_cipher_name(ssl_);
    info_.cipher = cipher != nullptr ? cipher : "";
    const unsigned char* alpn = nullptr;
    unsigned alpn_length = 0;
    SSL_get0_alpn_selected(ssl_, &alpn, &alpn_length);
    info_.alpn.assign(reinterpret_cast<const char*>(alpn), alpn != nullptr ? alpn_length : 0);
    info_.resumed = SSL_session_reused(ssl_) == 1;
    return IoResult::done(0);
  }
  const IoResult why = fail_tls(r, "TLS handshake");
  if (why.status == IoStatus::kClosed) {
    error_ = "TLS handshake: the server closed the connection";
    return IoResult::failed(EPROTO);
  }
  // A socket error once TCP was up is the handshake's failure too: say so in words.
  if (why.status == IoStatus::kError && error_.empty()) {
    error_ = fmt::format("TLS handshake: {}", core::errno_name(why.error));
  }
  return why;
}

IoResult TlsTransport::send_some(std::string_view data) {
  clear_errors();
  size_t written = 0;
  const int r = SSL_write_ex(ssl_, data.data(), data.size(), &written);
  if (r == 1) return IoResult::done(written);
  return fail_tls(r, "TLS write");
}

IoResult TlsTransport::recv_some(std::span<char> buffer) {
  if (pending_) return *std::exchange(pending_, std::nullopt);
  size_t got = 0;
  while (got < buffer.size()) {
    clear_errors();
    size_t n = 0;
    const int r = SSL_read_ex(ssl_, buffer.data() + got, buffer.size() - got, &n);
    if (r == 1) {
      got += n;
      continue;
    }
    const IoResult why = fail_tls(r, "TLS read");
    if (got == 0) return why;
    // Bytes already decrypted go first; a close or error that came after them is kept for the
    // next call (buffered() says so: the socket may never be readable again).
    if (why.status != IoStatus::kWouldBlock) pending_ = why;
    return IoResult::done(got);
  }
  return IoResult::done(got);
}

bool TlsTransport::buffered() const { return pending_.has_value() || SSL_pending(ssl_) > 0; }

void TlsTransport::shutdown_write() {
  if (handshake_done_) SSL_shutdown(ssl_);  // close_notify; not waiting for the peer's
  ::shutdown(fd_.get(), SHUT_WR);
}

Result<TlsInfo> check_tls(Fd fd, const TlsContext& context, const std::string& server_name) {
  auto t = TlsTransport::create(std::move(fd), context, server_name, nullptr);
  if (!t) return t.status();
  const IoResult r = (*t)->finish_connect();
  if (r.status == IoStatus::kDone) {
    // In TLS 1.3 the client's handshake ends before the server has judged a client
    // certificate, so its refusal arrives as an alert after it, with the session tickets.
    // Whatever the server sends within 100 ms is read (nothing is asked of it yet).
    pollfd p{(*t)->fd(), POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char byte = 0;
      set_nonblocking((*t)->fd());
      const IoResult after = (*t)->recv_some(std::span<char>(&byte, 1));
      if (after.status == IoStatus::kError) {
        return Status::unavailable((*t)->error_text().empty()
                                       ? fmt::format("TLS: {}", std::strerror(after.error))
                                       : (*t)->error_text());
      }
    }
    return *(*t)->tls();
  }
  std::string reason = (*t)->error_text();
  if (reason.empty()) {
    reason = r.status == IoStatus::kWouldBlock
                 ? "TLS handshake: no answer within the timeout"
                 : fmt::format("TLS handshake: {}", std::strerror(r.error));
  }
  return Status::unavailable(std::move(reason));
}

}  // namespace knee::net
