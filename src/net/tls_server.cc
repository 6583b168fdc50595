// The server side of TLS for the lab server (knee serve --tls): TlsContext::create_server(), its
// in-memory self-signed certificate and its ALPN selection. The client side is in tls.cc.
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <array>
#include <filesystem>
#include <memory>

#include "net/tls.h"

namespace knee::net {

using core::Result;
using core::Status;

namespace {

std::string openssl_reason() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
  return reason != nullptr ? reason : "unknown OpenSSL error";
}

template <class T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Freer<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Freer<X509, X509_free>>;

// A self-signed certificate for the loopback names, and its key.
Status make_self_signed(SSL_CTX* ctx) {
  KeyPtr key(EVP_EC_gen("P-256"));
  CertPtr cert(X509_new());
  if (!key || !cert) return Status::io_error("TLS: cannot make a key: " + openssl_reason());
  std::array<unsigned char, 16> serial{};
  RAND_bytes(serial.data(), static_cast<int>(serial.size()));
  serial[0] &= 0x7f;  // a positive serial number (RFC 5280 4.1.2.2)
  BIGNUM* bn = BN_bin2bn(serial.data(), static_cast<int>(serial.size()), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_set_version(cert.get(), 2);  // v3, for the extensions
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 30L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("knee serve"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509V3_CTX v3{};
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       {std::pair{NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1"},
        std::pair{NID_basic_constraints, "critical,CA:FALSE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value);
    if (ext == nullptr)
      return Status::io_error("TLS: cannot make a certificate: " + openssl_reason());
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0 ||
      SSL_CTX_use_certificate(ctx, cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    return Status::io_error("TLS: cannot make a certificate: " + openssl_reason());
  }
  return Status::success();
}

extern "C" int no_pass_phrase(char*, int, int, void* asked) {
  *static_cast<bool*>(asked) = true;
  return 0;
}

std::string fingerprint_of(const X509* cert) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int size = 0;
  if (cert == nullptr || X509_digest(cert, EVP_sha256(), md.data(), &size) != 1) return "";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += fmt::format("{}{:02X}", i == 0 ? "" : ":", md[i]);
  }
  return out;
}

// ALPN, server side (RFC 7301 section 3.2): the first of the server's protocols the client
// offered; none (the handshake goes on without ALPN) when they share none.
extern "C" int select_protocol(SSL*, const unsigned char** out, unsigned char* outlen,
                               const unsigned char* in, unsigned inlen, void* arg) {
  const auto* mine = static_cast<const std::vector<std::string>*>(arg);
  for (const std::string& want : *mine) {
    for (unsigned i = 0; i < inlen;) {
      const unsigned len = in[i];
      if (i + 1 + len <= inlen &&
          std::string_view(reinterpret_cast<const char*>(in + i + 1), len) == want) {
        *out = in + i + 1;
        *outlen = static_cast<unsigned char>(len);
        return SSL_TLSEXT_ERR_OK;
      }
      i += 1 + len;
    }
  }
  return SSL_TLSEXT_ERR_NOACK;
}

}  // namespace

Result<std::shared_ptr<const TlsContext>> TlsContext::create_server(
    const TlsServerIdentity& identity, std::vector<std::string> alpn) {
  if (identity.cert_file.empty() != identity.key_file.empty()) {
    return Status::invalid_field(identity.cert_file.empty() ? "cert" : "key",
                                 "give --cert and --key together (or neither, for a self-signed "
                                 "certificate made at start)");
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status::io_error("TLS: cannot make a context: " + openssl_reason());
  std::shared_ptr<TlsContext> owned(new TlsContext(ctx, TlsOptions{}));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (identity.cert_file.empty()) {
    if (Status s = make_self_signed(ctx); !s) return s;
    owned->self_signed_ = true;
  } else {
    for (const auto& [field, file] :
         {std::pair{"cert", &identity.cert_file}, std::pair{"key", &identity.key_file}}) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(*file, ec)) {
        return Status::invalid_field(field, fmt::format("'{}' is not a readable file", *file));
      }
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, identity.cert_file.c_str()) != 1) {
      return Status::invalid_field("cert", fmt::format("'{}': not a readable PEM certificate ({})",
                                                       identity.cert_file, openssl_reason()));
    }
    // A key with a pass phrase is refused, never prompted for (a server started by a script
    // must not wait on a terminal).
    bool asked = false;
    SSL_CTX_set_default_passwd_cb_userdata(ctx, &asked);
    SSL_CTX_set_default_passwd_cb(ctx, no_pass_phrase);
    const bool loaded =
        SSL_CTX_use_PrivateKey_file(ctx, identity.key_file.c_str(), SSL_FILETYPE_PEM) == 1;
    SSL_CTX_set_default_passwd_cb(ctx, nullptr);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
    if (asked) {
      return Status::invalid_field(
          "key", fmt::format("'{}' is encrypted and knee does not ask for pass phrases; decrypt "
                             "it first: openssl pkey -in {} -out key.pem",
                             identity.key_file, identity.key_file));
    }
    if (!loaded || SSL_CTX_check_private_key(ctx) != 1) {
      return Status::invalid_field(
          "key", fmt::format("'{}': not the readable, unencrypted PEM key of '{}' ({})",
                             identity.key_file, identity.cert_file, openssl_reason()));
    }
  }
  owned->fingerprint_ = fingerprint_of(SSL_CTX_get0_certificate(ctx));
  owned->server_alpn_ = std::move(alpn);
  SSL_CTX_set_alpn_select_cb(ctx, select_protocol, &owned->server_alpn_);
  return std::shared_ptr<const TlsContext>(std::move(owned));
}

}  // namespace knee::net
