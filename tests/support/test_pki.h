// A throw-away public-key infrastructure for TLS tests, made with OpenSSL's API in a temporary
// folder when the test starts (nothing is checked in): a test CA and, signed by it, certificates
// for the cases a TLS client must tell apart. Keys are P-256. Files are PEM; the folder is
// removed by the destructor.
#pragma once

#include <string>

namespace knee::testing {

class TestPki {
 public:
  // Throws std::runtime_error when OpenSSL cannot make or write a key or certificate.
  TestPki();
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  const std::string& dir() const { return dir_; }
  std::string ca_cert() const { return dir_ + "/ca.pem"; }
  // One key for every leaf certificate below.
  std::string key() const { return dir_ + "/key.pem"; }
  // The same key, encrypted with AES-256 under the pass phrase "knee".
  std::string encrypted_key() const { return dir_ + "/key_encrypted.pem"; }
  // Valid now, signed by the CA, for DNS localhost and IP 127.0.0.1.
  std::string server_cert() const { return dir_ + "/server.pem"; }
  // Signed by the CA, for localhost and 127.0.0.1, but expired a day ago.
  std::string expired_cert() const { return dir_ + "/expired.pem"; }
  // Signed by the CA, valid, but for other.example only.
  std::string wrong_host_cert() const { return dir_ + "/wrong_host.pem"; }
  // For localhost and 127.0.0.1, signed by its own key (no CA).
  std::string self_signed_cert() const { return dir_ + "/self_signed.pem"; }
  // A client certificate signed by the CA, for mutual TLS.
  std::string client_cert() const { return dir_ + "/client.pem"; }

 private:
  std::string dir_;
};

}  // namespace knee::testing
