// The lab server over TLS (knee serve --tls; issue 12, point 6): a self-signed certificate made
// at start, its fingerprint, the same endpoints answered over TLS, pipelined requests answered in
// order, and a client that does not speak TLS closed without stopping the server.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <string>

#include "lab/lab_server.h"
#include "net/tls.h"
#include "net/transport.h"
#include "support/test_pki.h"

namespace knee::lab {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const net::TlsContext> self_signed() {
  auto c = net::TlsContext::create_server({}, {"http/1.1"});
  EXPECT_TRUE(c) << c.status().message();
  return c ? *c : nullptr;
}

// A blocking TLS client: the handshake, then `request` written, then what arrives until
// `responses` status lines are in (or 5 s pass).
std::string exchange(const net::SocketAddress& address, const std::string& request,
                     int responses = 1, net::TlsInfo* info = nullptr) {
  net::TlsOptions o;
  o.verify = false;  // self-signed: the fingerprint is checked apart
  o.alpn = {"http/1.1"};
  auto client = net::TlsContext::create(o);
  EXPECT_TRUE(client);
  auto fd = net::connect_tcp(address, net::Blocking::kYes);
  EXPECT_TRUE(fd);
  net::set_io_timeouts(fd->get(), 5s);
  auto t = net::TlsTransport::create(std::move(fd).value(), **client, "localhost", nullptr);
  EXPECT_TRUE(t);
  const net::IoResult hs = (*t)->finish_connect();
  EXPECT_EQ(hs.status, net::IoStatus::kDone) << (*t)->error_text();
  if (info != nullptr && (*t)->tls() != nullptr) *info = *(*t)->tls();
  EXPECT_TRUE(net::send_all(**t, request, "request"));
  std::string got;
  char buf[4096];
  auto count = [&] {
    int n = 0;
    for (size_t at = got.find("HTTP/1.1 "); at != std::string::npos;
         at = got.find("HTTP/1.1 ", at + 1)) {
      ++n;
    }
    return n;
  };
  // Non-blocking from here: recv_some() reads every record that is ready, and on a blocking
  // socket it would wait for more until the timeout.
  ::fcntl((*t)->fd(), F_SETFL, ::fcntl((*t)->fd(), F_GETFL) | O_NONBLOCK);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (count() < responses || got.find("\r\n\r\n", got.rfind("HTTP/1.1 ")) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) break;
    pollfd p{(*t)->fd(), POLLIN, 0};
    if (!(*t)->buffered() && ::poll(&p, 1, 100) == 0) continue;
    const net::IoResult r = (*t)->recv_some(buf);
    if (r.status == net::IoStatus::kWouldBlock) continue;
    if (r.status != net::IoStatus::kDone) break;
    got.append(buf, r.bytes);
  }
  return got;
}

TEST(TlsServer, ASelfSignedCertificateIsMadeAtStartWithItsFingerprint) {
  auto c = self_signed();
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->self_signed());
  // SHA-256: 32 bytes as colon-separated upper-case hex.
  ASSERT_EQ(c->fingerprint().size(), 32u * 3 - 1) << c->fingerprint();
  EXPECT_EQ(c->fingerprint()[2], ':');
  EXPECT_EQ(c->fingerprint().find_first_not_of("0123456789ABCDEF:"), std::string::npos);
  // Two starts, two certificates.
  EXPECT_NE(self_signed()->fingerprint(), c->fingerprint());
}

TEST(TlsServer, CertAndKeyGoTogether) {
  auto only_cert = net::TlsContext::create_server({"/nonexistent.pem", ""}, {});
  ASSERT_FALSE(only_cert);
  EXPECT_EQ(only_cert.status().field(), "key");
  auto missing = net::TlsContext::create_server({"/nonexistent.pem", "/nonexistent.key"}, {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().field(), "cert");
  EXPECT_NE(missing.status().message().find("/nonexistent.pem"), std::string::npos);
}

TEST(TlsServer, AKeyWithAPassPhraseIsRefusedNotPromptedFor) {
  // Regression: knee serve --tls --key encrypted.pem waited on OpenSSL's terminal prompt.
  knee::testing::TestPki pki;
  auto c = net::TlsContext::create_server({pki.server_cert(), pki.encrypted_key()}, {});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.status().field(), "key");
  EXPECT_NE(c.status().message().find("is encrypted and knee does not ask for pass phrases"),
            std::string::npos)
      << c.status().message();
  auto good = net::TlsContext::create_server({pki.server_cert(), pki.key()}, {});
  ASSERT_TRUE(good) << good.status().message();
  EXPECT_FALSE((*good)->self_signed());
}

TEST(TlsServer, TheEndpointsAnswerOverTlsAndPipelinedRequestsInOrder) {
  ServerOptions options;
  options.tls = self_signed();
  options.wait = 1ms;
  auto server = LabServer::start(options);
  ASSERT_TRUE(server) << server.status().message();
  net::TlsInfo info;
  const std::string fast =
      exchange((*server)->address(), "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n", 1, &info);
  EXPECT_EQ(fast.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << fast;
  EXPECT_NE(fast.find(R"({"ok":true,"instance":"app1"})"), std::string::npos) << fast;
  EXPECT_EQ(info.alpn, "http/1.1");
  EXPECT_EQ(info.version, "TLSv1.3");
  // Three requests in one write: answered in the order sent, the slow one first.
  const std::string three = exchange((*server)->address(),
                                     "GET /tracking?no=A1 HTTP/1.1\r\nHost: x\r\n\r\n"
                                     "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                                     "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n",
                                     3);
  const size_t a = three.find("HTTP/1.1 200");
  const size_t b = three.find("HTTP/1.1 404");
  const size_t c = three.find("HTTP/1.1 200", a + 1);
  ASSERT_NE(a, std::string::npos) << three;
  EXPECT_NE(three.find("A1"), std::string::npos) << three;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_NE(c, std::string::npos) << three;
}

TEST(TlsServer, AClientThatDoesNotSpeakTlsIsClosedAndTheServerServesOn) {
  ServerOptions options;
  options.tls = self_signed();
  auto server = LabServer::start(options);
  ASSERT_TRUE(server) << server.status().message();
  auto fd = net::connect_tcp((*server)->address(), net::Blocking::kYes);
  ASSERT_TRUE(fd);
  net::set_io_timeouts(fd->get(), 5s);
  const std::string plain = "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd->get(), plain.data(), plain.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(plain.size()));
  char buf[256];
  ssize_t n = 0;
  size_t total = 0;
  while ((n = ::recv(fd->get(), buf, sizeof buf, 0)) > 0) total += static_cast<size_t>(n);
  EXPECT_LT(total, 64u);  // at most a TLS alert, never an HTTP response; then the close
  const std::string after = exchange((*server)->address(), plain);
  EXPECT_EQ(after.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << after;
}

}  // namespace
}  // namespace knee::lab
