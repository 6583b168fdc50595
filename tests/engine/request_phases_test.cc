// knee probe's measuring: cumulative phases in curl's order, one sample per attempt, --reuse on
// one connection, and every failure on the wire an attempt with its cause.
#include "engine/request_phases.h"

#include <gtest/gtest.h>

#include <string>

#include "http/url.h"
#include "support/scripted_server.h"
#include "support/test_pki.h"

namespace knee::engine {
namespace {

using testing::Action;
using testing::ScriptedServer;

RequestPhasesOptions options_for(const std::string& url, int count) {
  RequestPhasesOptions o;
  auto parsed = http::parse_url(url);
  EXPECT_TRUE(parsed) << parsed.status().message();
  if (parsed) o.request.url = *parsed;
  o.count = count;
  o.timeout = std::chrono::seconds(5);
  return o;
}

Action ok_action(int, int, const std::string&) { return Action::respond(testing::ok_response()); }

void expect_cumulative_order(const RequestAttempt& a) {
  int64_t last = 0;
  for (size_t i = 0; i < kRequestPhaseCount; ++i) {
    if (a.at_ns[i] == kNotMeasured) continue;
    EXPECT_GE(a.at_ns[i], last) << request_phase_key(static_cast<RequestPhase>(i));
    last = a.at_ns[i];
  }
}

TEST(RequestPhases, EveryAttemptOpensAConnectionAndItsPhasesAreCumulative) {
  ScriptedServer server(ok_action);
  auto r = measure_request_phases(options_for(server.url("/x"), 5));
  ASSERT_TRUE(r) << r.status().message();
  ASSERT_EQ(r->attempts.size(), 5u);
  EXPECT_EQ(r->ok, 5);
  EXPECT_EQ(r->failed, 0);
  EXPECT_EQ(r->connections, 5);
  EXPECT_EQ(server.connections_accepted(), 5);
  EXPECT_EQ(r->status.at(200), 5);
  EXPECT_EQ(r->address, "127.0.0.1:" + std::to_string(server.port()));
  for (const RequestAttempt& a : r->attempts) {
    EXPECT_TRUE(a.ok);
    EXPECT_TRUE(a.new_connection);
    EXPECT_EQ(a.status_code, 200);
    EXPECT_EQ(a.body_bytes, 2u);
    EXPECT_GE(a.at(RequestPhase::kNameLookup), 0);
    EXPECT_EQ(a.at(RequestPhase::kAppConnect), kNotMeasured);  // no TLS
    EXPECT_GT(a.at(RequestPhase::kTotal), 0);
    expect_cumulative_order(a);
  }
  // dns <= connect <= sent <= first byte <= complete, on the statistics too.
  const auto& ph = r->phases;
  for (RequestPhase p :
       {RequestPhase::kNameLookup, RequestPhase::kConnect, RequestPhase::kPreTransfer,
        RequestPhase::kPostTransfer, RequestPhase::kStartTransfer, RequestPhase::kTotal}) {
    EXPECT_EQ(ph[static_cast<size_t>(p)].count, 5) << request_phase_key(p);
    EXPECT_GE(ph[static_cast<size_t>(p)].min_ns, 0) << request_phase_key(p);
  }
  EXPECT_EQ(ph[static_cast<size_t>(RequestPhase::kAppConnect)].count, 0);
  EXPECT_LE(ph[static_cast<size_t>(RequestPhase::kConnect)].min_ns,
            ph[static_cast<size_t>(RequestPhase::kTotal)].min_ns);
}

TEST(RequestPhases, ReuseConnectsOnceAndSkipsLookupAndConnectAfterwards) {
  ScriptedServer server(ok_action);
  RequestPhasesOptions o = options_for(server.url("/"), 5);
  o.reuse = true;
  auto r = measure_request_phases(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->ok, 5);
  EXPECT_EQ(r->connections, 1);
  EXPECT_EQ(server.connections_accepted(), 1);
  EXPECT_TRUE(r->attempts[0].new_connection);
  EXPECT_NE(r->attempts[0].at(RequestPhase::kConnect), kNotMeasured);
  for (size_t i = 1; i < r->attempts.size(); ++i) {
    const RequestAttempt& a = r->attempts[i];
    EXPECT_FALSE(a.new_connection);
    EXPECT_EQ(a.at(RequestPhase::kNameLookup), kNotMeasured);
    EXPECT_EQ(a.at(RequestPhase::kConnect), kNotMeasured);
    expect_cumulative_order(a);
  }
  EXPECT_EQ(r->phases[static_cast<size_t>(RequestPhase::kConnect)].count, 1);
  EXPECT_EQ(r->phases[static_cast<size_t>(RequestPhase::kTotal)].count, 5);
}

TEST(RequestPhases, ReuseOpensANewConnectionWhenTheServerClosesIt) {
  ScriptedServer server([](int, int, const std::string&) {
    return Action::respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                           {}, true);
  });
  RequestPhasesOptions o = options_for(server.url("/"), 3);
  o.reuse = true;
  auto r = measure_request_phases(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->ok, 3);
  EXPECT_EQ(r->connections, 3);
}

TEST(RequestPhases, GarbageIsAFailedAttemptWithItsCause) {
  ScriptedServer server([](int, int, const std::string&) {
    return Action::respond("SSH-2.0-OpenSSH_9.2\r\n\r\n", {}, true);
  });
  auto r = measure_request_phases(options_for(server.url("/"), 3));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->ok, 0);
  EXPECT_EQ(r->failed, 3);
  ASSERT_EQ(r->errors.size(), 1u);
  EXPECT_EQ(r->errors.begin()->first.rfind("parse: ", 0), 0u) << r->errors.begin()->first;
  for (const RequestAttempt& a : r->attempts) {
    EXPECT_FALSE(a.ok);
    EXPECT_EQ(a.error_kind, "parse");
    EXPECT_NE(a.at(RequestPhase::kStartTransfer), kNotMeasured);  // bytes did arrive
    EXPECT_EQ(a.at(RequestPhase::kTotal), kNotMeasured);
  }
  EXPECT_EQ(r->phases[static_cast<size_t>(RequestPhase::kTotal)].count, 0);
}

TEST(RequestPhases, AServerThatClosesEarlyIsCountedAndTheNextAttemptGoesOn) {
  ScriptedServer server([](int conn, int, const std::string&) {
    if (conn == 1) return Action::close();
    if (conn == 2)
      return Action::respond("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok", {}, true);
    return Action::respond(testing::ok_response());
  });
  auto r = measure_request_phases(options_for(server.url("/"), 4));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->ok, 2);
  EXPECT_EQ(r->failed, 2);
  EXPECT_EQ(r->attempts[1].error_kind, "closed_before_response");
  EXPECT_EQ(r->attempts[1].error_cause, "EOF");
  EXPECT_EQ(r->attempts[2].error_kind, "eof_mid_body");
  EXPECT_TRUE(r->attempts[3].ok);
  EXPECT_EQ(r->errors.at("closed_before_response: EOF"), 1);
  EXPECT_EQ(r->errors.at("eof_mid_body: EOF"), 1);
}

TEST(RequestPhases, ASilentServerIsATimeout) {
  ScriptedServer server([](int, int, const std::string&) { return Action::hang(); });
  RequestPhasesOptions o = options_for(server.url("/"), 1);
  o.timeout = std::chrono::milliseconds(200);
  auto r = measure_request_phases(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->failed, 1);
  EXPECT_EQ(r->attempts[0].error_kind, "timeout");
  EXPECT_EQ(r->attempts[0].error_cause, "no response byte");
}

TEST(RequestPhases, AClosedPortOnTheFirstAttemptMeansUnreachable) {
  int port;
  {
    ScriptedServer closed(ok_action);
    port = closed.port();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  auto r = measure_request_phases(options_for(url, 3));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), core::Status::Code::kUnavailable);
  EXPECT_NE(r.status().message().find(url), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("ECONNREFUSED"), std::string::npos) << r.status().message();
}

// https (issue 12): the TLS phase is measured between connect and pre-transfer, and what the
// handshakes agreed on is reported; a second connection resumes the first one's session.
TEST(RequestPhases, HttpsMeasuresTheTlsPhase) {
  testing::TestPki pki;
  testing::ServerTls tls = testing::ServerTls::serving(pki.server_cert(), pki.key());
  tls.alpn = "http/1.1";
  testing::ScriptedServer server(testing::ScriptedServer::always_ok(), tls);
  RequestPhasesOptions o = options_for(server.https_url("localhost"), 3);
  o.tls.ca_file = pki.ca_cert();
  auto r = measure_request_phases(o);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->ok, 3);
  EXPECT_EQ(r->tls_version, "TLSv1.3");
  // Regression: the probe offered no ALPN, so it saw "none" where a run agrees on http/1.1.
  EXPECT_EQ(r->alpn, "http/1.1");
  EXPECT_EQ(r->tls_resumed, 2);  // the 2nd and 3rd connections resume the 1st's session
  const auto& app = r->phases[static_cast<size_t>(RequestPhase::kAppConnect)];
  EXPECT_EQ(app.count, 3);
  for (const auto& a : r->attempts) {
    // Regression: TCP connect was stamped after the first handshake step, so the TLS phase
    // read 0.000 ms and TCP connect carried the handshake.
    EXPECT_GT(a.at(RequestPhase::kAppConnect), a.at(RequestPhase::kConnect));
    EXPECT_LE(a.at(RequestPhase::kAppConnect), a.at(RequestPhase::kPreTransfer));
  }
  // A certificate for another host: the first attempt cannot reach the target.
  o.tls.ca_file.clear();
  auto refused = measure_request_phases(o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), core::Status::Code::kUnavailable);
  EXPECT_NE(refused.status().message().find("certificate verify failed"), std::string::npos)
      << refused.status().message();
}

TEST(RequestPhases, OptionsOutsideTheirRangesAreRefused) {
  RequestPhasesOptions o = options_for("http://127.0.0.1/", 0);
  EXPECT_EQ(o.validate().field(), "count");
  o.count = 1;
  o.timeout = core::Nanos(0);
  EXPECT_EQ(o.validate().field(), "timeout");
}

TEST(RequestAttempt, PhaseDurationIsTheDifferenceFromTheLastMeasuredPhase) {
  RequestAttempt a;
  a.ok = true;
  a.at_ns = {100, 300, kNotMeasured, 310, 400, 900, 1000};
  EXPECT_EQ(a.phase_ns(RequestPhase::kNameLookup), 100);
  EXPECT_EQ(a.phase_ns(RequestPhase::kConnect), 200);
  EXPECT_EQ(a.phase_ns(RequestPhase::kAppConnect), kNotMeasured);
  EXPECT_EQ(a.phase_ns(RequestPhase::kPreTransfer), 10);  // from connect: TLS did not happen
  EXPECT_EQ(a.phase_ns(RequestPhase::kStartTransfer), 500);
  EXPECT_EQ(a.phase_ns(RequestPhase::kTotal), 100);
  // On a reused connection the first measured phase starts at 0.
  RequestAttempt reused;
  reused.ok = true;
  reused.at_ns = {kNotMeasured, kNotMeasured, kNotMeasured, 5, 50, 500, 600};
  EXPECT_EQ(reused.phase_ns(RequestPhase::kPreTransfer), 5);
}

TEST(RequestAttempt, SummaryCountsOnlySuccessfulAttemptsThatMeasuredThePhase) {
  std::vector<RequestAttempt> attempts(3);
  attempts[0].ok = true;
  attempts[0].at_ns = {10, 20, kNotMeasured, 21, 30, 100, 200};
  attempts[1].ok = true;
  attempts[1].at_ns = {kNotMeasured, kNotMeasured, kNotMeasured, 1, 5, 50, 60};
  attempts[2].ok = false;  // failed: left out
  attempts[2].at_ns = {5, 6, kNotMeasured, 7, 8, 9, kNotMeasured};
  const auto s = summarise_attempts(attempts);
  const PhaseStats& connect = s[static_cast<size_t>(RequestPhase::kConnect)];
  EXPECT_EQ(connect.count, 1);
  EXPECT_EQ(connect.min_ns, 20);
  EXPECT_EQ(connect.phase_median_ns, 10);
  const PhaseStats& total = s[static_cast<size_t>(RequestPhase::kTotal)];
  EXPECT_EQ(total.count, 2);
  EXPECT_EQ(total.min_ns, 60);
  EXPECT_EQ(total.max_ns, 200);
  EXPECT_EQ(total.p99_ns, 200);
  EXPECT_EQ(s[static_cast<size_t>(RequestPhase::kAppConnect)].count, 0);
}

}  // namespace
}  // namespace knee::engine
