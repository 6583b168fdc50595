#include "support/test_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

namespace knee::testing {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("TestPki: ") + what);
}

Key new_key() {
  Key k(EVP_EC_gen("P-256"));
  check(k != nullptr, "EC key generation");
  return k;
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  check(ext != nullptr, "extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `subject_key` named `cn`, valid from now + from_s to now + to_s seconds,
// signed by issuer_key (and named after `issuer`, or itself when null).
Cert make_cert(EVP_PKEY* subject_key, const char* cn, const char* san, long from_s, long to_s,
               X509* issuer, EVP_PKEY* issuer_key, bool is_ca, long serial) {
  Cert c(X509_new());
  check(c != nullptr, "X509_new");
  X509_set_version(c.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(c.get()), from_s);
  X509_gmtime_adj(X509_getm_notAfter(c.get()), to_s);
  X509_set_pubkey(c.get(), subject_key);
  X509_NAME* name = X509_get_subject_name(c.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(c.get(), issuer != nullptr ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer != nullptr ? issuer : c.get();
  if (is_ca) {
    add_extension(c.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(c.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(c.get(), signer, NID_basic_constraints, "CA:FALSE");
  }
  add_extension(c.get(), signer, NID_subject_key_identifier, "hash");
  if (san != nullptr) add_extension(c.get(), signer, NID_subject_alt_name, san);
  check(X509_sign(c.get(), issuer_key, EVP_sha256()) > 0, "X509_sign");
  return c;
}

void write_cert(const std::string& path, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "open a certificate file");
  const bool ok = PEM_write_X509(f, cert) == 1;
  std::fclose(f);
  check(ok, "write a certificate");
}

void write_key(const std::string& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "open a key file");
  const bool ok = PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  check(ok, "write a key");
}

void write_encrypted_key(const std::string& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "open a key file");
  char pass[] = "knee";
  const bool ok = PEM_write_PrivateKey(f, key, EVP_aes_256_cbc(), nullptr, 0, nullptr, pass) == 1;
  std::fclose(f);
  check(ok, "write an encrypted key");
}

}  // namespace

TestPki::TestPki() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "knee-pki-XXXXXX").string();
  check(::mkdtemp(tmpl.data()) != nullptr, "mkdtemp");
  dir_ = tmpl;
  constexpr long kDay = 24 * 3600;
  constexpr const char* kLocal = "DNS:localhost,IP:127.0.0.1";
  Key ca_key = new_key();
  Cert ca = make_cert(ca_key.get(), "knee test CA", nullptr, -kDay, 30 * kDay, nullptr,
                      ca_key.get(), true, 1);
  Key key = new_key();
  write_cert(ca_cert(), ca.get());
  write_key(this->key(), key.get());
  write_encrypted_key(encrypted_key(), key.get());
  write_cert(server_cert(), make_cert(key.get(), "localhost", kLocal, -kDay, 30 * kDay, ca.get(),
                                      ca_key.get(), false, 2)
                                .get());
  write_cert(expired_cert(), make_cert(key.get(), "localhost", kLocal, -10 * kDay, -kDay, ca.get(),
                                       ca_key.get(), false, 3)
                                 .get());
  write_cert(wrong_host_cert(), make_cert(key.get(), "other.example", "DNS:other.example", -kDay,
                                          30 * kDay, ca.get(), ca_key.get(), false, 4)
                                    .get());
  write_cert(self_signed_cert(), make_cert(key.get(), "localhost", kLocal, -kDay, 30 * kDay,
                                           nullptr, key.get(), false, 5)
                                     .get());
  write_cert(client_cert(), make_cert(key.get(), "knee test client", nullptr, -kDay, 30 * kDay,
                                      ca.get(), ca_key.get(), false, 6)
                                .get());
}

TestPki::~TestPki() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace knee::testing
