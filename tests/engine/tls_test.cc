// https in the load engine (issue 12, points 1, 2 and 8): against scripted TLS servers on
// 127.0.0.1 with a test CA made for the test (support/test_pki.h), a verifying handshake, each
// kind of certificate failure named in the pre-flight error, servers that are not TLS or close
// mid-handshake counted and survived, resumption counted apart from full handshakes, and mutual
// TLS.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>

#include "engine/load.h"
#include "http/url.h"
#include "support/scripted_server.h"
#include "support/test_pki.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using core::ErrorKind;
using testing::Action;
using testing::ScriptedServer;
using testing::ServerTls;
using testing::TestPki;

LoadOptions https_options(const std::string& url, const TestPki& pki) {
  LoadOptions o;
  o.request.url = *http::parse_url(url);
  o.connections = 2;
  o.duration = 300ms;
  o.warmup = 0ms;
  o.timeout = 1s;
  o.tls.ca_file = pki.ca_cert();
  return o;
}

TEST(Tls, AVerifiedRunCountsHandshakesApartFromRequests) {
  TestPki pki;
  ScriptedServer server(ScriptedServer::always_ok(),
                        ServerTls::serving(pki.server_cert(), pki.key()));
  for (const char* host : {"localhost", "127.0.0.1"}) {
    auto r = run_load(https_options(server.https_url(host), pki));
    ASSERT_TRUE(r) << host << ": " << r.status().message();
    const core::RunStats& s = r->stats;
    EXPECT_GT(s.ok(), 10u) << host;
    EXPECT_EQ(s.total_errors(), 0u) << host;
    EXPECT_EQ(s.connects.opened, 2u) << host;
    EXPECT_EQ(s.connects.tls_full + s.connects.tls_resumed, 2u) << host;
    EXPECT_EQ(s.connects.tls_ns.count(), 2) << host;
    // Regression: a handshake that completed inside its first call was timed as 0 ns.
    EXPECT_GT(s.connects.tls_ns.min(), 0) << host;
    EXPECT_EQ(s.connects.tcp_ns.count(), 2) << host;
    EXPECT_EQ(s.connects.tls_version, "TLSv1.3") << host;
    EXPECT_FALSE(s.connects.tls_cipher.empty()) << host;
    // The bytes are those of HTTP, inside TLS: the same as over plain TCP.
    EXPECT_EQ(s.bytes_received_body, 2 * s.completed) << host;  // "ok"
  }
}

TEST(Tls, EachCertificateFailureIsNamedBeforeTheRun) {
  TestPki pki;
  struct Case {
    std::string cert;
    std::string host;
    std::string reason;
  };
  const Case cases[] = {
      {pki.wrong_host_cert(), "localhost", "hostname mismatch"},
      {pki.wrong_host_cert(), "127.0.0.1", "IP address mismatch"},
      {pki.expired_cert(), "localhost", "certificate has expired"},
      {pki.self_signed_cert(), "localhost", "self-signed certificate"},
  };
  for (const Case& c : cases) {
    ScriptedServer server(ScriptedServer::always_ok(), ServerTls::serving(c.cert, pki.key()));
    auto r = run_load(https_options(server.https_url(c.host), pki));
    ASSERT_FALSE(r) << c.reason;
    EXPECT_EQ(r.status().code(), core::Status::Code::kUnavailable) << c.reason;
    EXPECT_NE(r.status().message().find("certificate verify failed: " + c.reason),
              std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(server.https_url(c.host)), std::string::npos);
  }
  // An unknown CA: the system store does not know the test CA.
  ScriptedServer server(ScriptedServer::always_ok(),
                        ServerTls::serving(pki.server_cert(), pki.key()));
  LoadOptions o = https_options(server.https_url("localhost"), pki);
  o.tls.ca_file.clear();
  auto r = run_load(o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("unable to get local issuer certificate (trust its CA with "
                                      "--cacert FILE, or skip the check with -k)"),
            std::string::npos)
      << r.status().message();
  // -k: the same server is measured, unverified.
  o.tls.verify = false;
  auto insecure = run_load(o);
  ASSERT_TRUE(insecure) << insecure.status().message();
  EXPECT_GT(insecure->stats.ok(), 0u);
}

TEST(Tls, AServerThatIsNotTlsOrClosesMidHandshakeIsAClearError) {
  TestPki pki;
  for (ServerTls::Mode mode : {ServerTls::Mode::kGarbage, ServerTls::Mode::kCloseAfterHello}) {
    ServerTls t;
    t.mode = mode;
    ScriptedServer server(ScriptedServer::always_ok(), t);
    auto r = run_load(https_options(server.https_url("127.0.0.1"), pki));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), core::Status::Code::kUnavailable);
    const std::string m = r.status().message();
    EXPECT_NE(m.find("TLS handshake"), std::string::npos) << m;
    if (mode == ServerTls::Mode::kCloseAfterHello) {
      EXPECT_NE(m.find("the server closed the connection"), std::string::npos) << m;
    } else {
      EXPECT_NE(m.find("wrong version number (the server does not speak TLS on this port"),
                std::string::npos)
          << m;
    }
  }
}

TEST(Tls, ResumedHandshakesAreCountedApartFromFullOnes) {
  TestPki pki;
  // Every response closes its connection, so each request needs a new connect.
  ScriptedServer server(
      [](int, int, const std::string&) {
        return Action::respond(testing::ok_response(), {}, /*close_after=*/true);
      },
      ServerTls::serving(pki.server_cert(), pki.key()));
  LoadOptions o = https_options(server.https_url("localhost"), pki);
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  EXPECT_GT(s.ok(), 5u);
  EXPECT_EQ(s.connects.tls_full + s.connects.tls_resumed, s.connects.opened);
  EXPECT_GE(s.connects.opened, s.ok());
  // Resumption is on by default: after the first handshakes, sessions resume; the server
  // agrees on the count (it also saw the pre-flight's full handshake).
  EXPECT_GT(s.connects.tls_resumed, 0u);
  EXPECT_EQ(server.resumed(), static_cast<int>(s.connects.tls_resumed));

  o.tls.resume = false;
  auto full = run_load(o);
  ASSERT_TRUE(full) << full.status().message();
  EXPECT_EQ(full->stats.connects.tls_resumed, 0u);
  EXPECT_EQ(full->stats.connects.tls_full, full->stats.connects.opened);
}

TEST(Tls, HandshakeFailuresDuringTheRunAreCountedAsTlsErrors) {
  TestPki pki;
  // The pre-flight and the first connections shake hands; every later connection gets bytes
  // that are not TLS. Responses close their connections, so the run keeps reconnecting.
  ServerTls t = ServerTls::serving(pki.server_cert(), pki.key());
  t.garbage_from_connection = 4;  // 0: the reachability check, 1: the pre-flight handshake
  ScriptedServer server(
      [](int, int, const std::string&) {
        return Action::respond(testing::ok_response(), {}, /*close_after=*/true);
      },
      t);
  auto r = run_load(https_options(server.https_url("localhost"), pki));
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  EXPECT_EQ(s.ok(), 2u);  // one request on each of the two good connections
  EXPECT_GT(s.error_count(ErrorKind::kTls), 0u);
  EXPECT_EQ(s.error_count(ErrorKind::kConnect), 0u);
  EXPECT_EQ(s.sent, s.completed + s.request_failures() + s.aborted);  // nothing sent on them
  bool named = false;
  for (const auto& [cause, n] : s.causes) named |= cause.starts_with("tls: TLS handshake: ");
  EXPECT_TRUE(named);
}

// --no-keepalive (issue 12, point 2): a new connection per request, asked to close, and in
// closed loop each latency holds its connect and its handshake.
TEST(Tls, WithoutKeepAliveEveryRequestPaysItsHandshakeInsideItsLatency) {
  TestPki pki;
  std::atomic<int> asked_to_close{0};
  ScriptedServer server(
      [&asked_to_close](int, int, const std::string& head) {
        if (head.find("\r\nConnection: close\r\n") != std::string::npos) ++asked_to_close;
        return Action::respond(testing::ok_response());
      },
      ServerTls::serving(pki.server_cert(), pki.key()));
  LoadOptions o = https_options(server.https_url("localhost"), pki);
  o.keepalive = false;
  o.tls.resume = false;
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  const core::RunStats& s = r->stats;
  ASSERT_GT(s.ok(), 5u);
  // One connection per request (those of the measured phase and the warm-up's), every request
  // asked the server to close.
  EXPECT_GE(s.connects.opened, s.sent);
  EXPECT_GE(asked_to_close.load(), static_cast<int>(s.ok()));
  EXPECT_LE(asked_to_close.load(), static_cast<int>(s.sent + s.warmup.sent));
  EXPECT_EQ(s.connects.tls_full, s.connects.opened);
  // Each latency contains a whole handshake.
  EXPECT_GE(s.latency_ns.min(), s.connects.tls_ns.min());
  EXPECT_GE(s.latency_ns.value_at_percentile(50), s.connects.tls_ns.value_at_percentile(50));
}

TEST(Tls, MutualTlsNeedsTheClientCertificate) {
  TestPki pki;
  ServerTls t = ServerTls::serving(pki.server_cert(), pki.key());
  t.client_ca = pki.ca_cert();
  ScriptedServer server(ScriptedServer::always_ok(), t);
  LoadOptions o = https_options(server.https_url("localhost"), pki);
  auto refused = run_load(o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("give --cert and --key"), std::string::npos)
      << refused.status().message();
  o.tls.cert_file = pki.client_cert();
  o.tls.key_file = pki.key();
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_GT(r->stats.ok(), 0u);
  EXPECT_EQ(r->stats.total_errors(), 0u);
}

TEST(Tls, VersionAndAlpnAreWhatWasAgreed) {
  TestPki pki;
  ServerTls t = ServerTls::serving(pki.server_cert(), pki.key());
  t.alpn = "http/1.1";
  ScriptedServer server(ScriptedServer::always_ok(), t);
  LoadOptions o = https_options(server.https_url("localhost"), pki);
  o.tls.version = 12;
  o.tls.alpn = {"http/1.1"};
  auto r = run_load(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->stats.connects.tls_version, "TLSv1.2");
  EXPECT_EQ(r->stats.connects.alpn, "http/1.1");
}

TEST(Tls, BadTlsOptionsAreInvalidArguments) {
  TestPki pki;
  ScriptedServer server(ScriptedServer::always_ok(),
                        ServerTls::serving(pki.server_cert(), pki.key()));
  LoadOptions o = https_options(server.https_url("localhost"), pki);
  o.tls.ca_file = pki.dir() + "/missing.pem";
  auto r = run_load(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_EQ(r.status().field(), "cacert");
  o = https_options(server.https_url("localhost"), pki);
  o.tls.cert_file = pki.client_cert();
  o.tls.key_file = pki.ca_cert();  // not a key
  r = run_load(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().field(), "key");
  // An encrypted key is refused with its reason, never a pass-phrase prompt.
  o.tls.key_file = pki.encrypted_key();
  r = run_load(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().field(), "key");
  EXPECT_NE(r.status().message().find("is encrypted and knee does not ask for pass phrases"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace knee::engine
