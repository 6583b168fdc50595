// `knee probe URL` as a user runs it: against knee serve every phase shows in curl's cumulative
// order; --reuse connects once; https, a bad URL and a closed port are one clear line with the
// right exit code; a server that sends garbage is a counted failure, never a crash.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/scripted_server.h"
#include "support/subprocess.h"
#include "support/test_pki.h"

namespace knee {
namespace {

using nlohmann::json;
using testing::run_process;

constexpr const char* kPhases[] = {"namelookup",   "connect",       "appconnect", "pretransfer",
                                   "posttransfer", "starttransfer", "total"};

std::string serve_url(const testing::BackgroundProcess& server, const std::string& path) {
  const int port = testing::port_of_listening_line(server.first_line());
  EXPECT_GT(port, 0) << server.first_line();
  return "http://127.0.0.1:" + std::to_string(port) + path;
}

json probe_json(const std::vector<std::string>& args, int expected_exit = 0) {
  std::vector<std::string> argv = {KNEE_BINARY, "probe", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_process(argv, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, expected_exit) << r.err;
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

TEST(Probe, AgainstKneeServeEveryPhaseIsNonNegativeAndCumulative) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0"});
  json j = probe_json({serve_url(server, "/fast"), "-n", "5"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["kind"], "probe");
  EXPECT_EQ(j["ok"], 5);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["connections"], 5);
  EXPECT_EQ(j["status"]["200"], 5);
  ASSERT_EQ(j["attempts"].size(), 5u);
  for (const json& a : j["attempts"]) {
    EXPECT_TRUE(a["ok"].get<bool>());
    EXPECT_TRUE(a["new_connection"].get<bool>());
    EXPECT_TRUE(a["at_ns"]["appconnect"].is_null());  // no TLS
    // dns <= connect <= sent <= first byte <= complete.
    int64_t last = 0;
    for (const char* p : kPhases) {
      if (a["at_ns"][p].is_null()) continue;
      const int64_t t = a["at_ns"][p].get<int64_t>();
      EXPECT_GE(t, last) << p << " in " << a.dump();
      last = t;
    }
  }
  for (const char* p : kPhases) {
    const json& ph = j["phases"][p];
    if (std::string(p) == "appconnect") {
      EXPECT_EQ(ph["count"], 0);
      continue;
    }
    EXPECT_EQ(ph["count"], 5) << p;
    EXPECT_GE(ph["min_ns"].get<int64_t>(), 0) << p;
    EXPECT_LE(ph["min_ns"].get<int64_t>(), ph["median_ns"].get<int64_t>()) << p;
    EXPECT_LE(ph["median_ns"].get<int64_t>(), ph["p99_ns"].get<int64_t>()) << p;
  }
  EXPECT_LE(j["phases"]["connect"]["min_ns"].get<int64_t>(),
            j["phases"]["total"]["min_ns"].get<int64_t>());
}

TEST(Probe, TextOutputNamesEachPhaseWithCurlsVariable) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0"});
  auto r = run_process({KNEE_BINARY, "probe", serve_url(server, "/fast"), "-n", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* words : {"DNS lookup", "TCP connect", "TLS handshake", "request sent",
                            "first byte", "complete", "time_starttransfer", "3 of 3 complete"}) {
    EXPECT_NE(r.out.find(words), std::string::npos) << words << "\n" << r.out;
  }
}

TEST(Probe, ReuseConnectsOnce) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0"});
  json j = probe_json({serve_url(server, "/fast"), "-n", "5", "--reuse"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["ok"], 5);
  EXPECT_EQ(j["connections"], 1);
  EXPECT_EQ(j["phases"]["connect"]["count"], 1);
  EXPECT_EQ(j["phases"]["total"]["count"], 5);
  EXPECT_TRUE(j["attempts"][1]["at_ns"]["connect"].is_null());
}

TEST(Probe, HttpsShowsTheTlsPhaseLikeCurl) {
  testing::TestPki pki;
  testing::ScriptedServer server(testing::ScriptedServer::always_ok(),
                                 testing::ServerTls::serving(pki.server_cert(), pki.key()));
  auto r = run_process(
      {KNEE_BINARY, "probe", server.https_url("localhost"), "-n", "3", "--cacert", pki.ca_cert()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("TLS handshake  time_appconnect          3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TLS: TLSv1.3 "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(http: no TLS)"), std::string::npos) << r.out;
}

TEST(Probe, BadUrlExits2WithTheFix) {
  auto r = run_process({KNEE_BINARY, "probe", "127.0.0.1:8080/fast"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("http://"), std::string::npos) << r.err;
}

TEST(Probe, ClosedPortExits1NamingUrlAndOsError) {
  int port;
  {
    testing::ScriptedServer closed([](int, int, const std::string&) {
      return testing::Action::respond(testing::ok_response());
    });
    port = closed.port();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  auto r = run_process({KNEE_BINARY, "probe", url});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(url), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ECONNREFUSED"), std::string::npos) << r.err;
}

TEST(Probe, GarbageFromTheServerIsACountedFailureWithItsCause) {
  testing::ScriptedServer server([](int conn, int, const std::string&) {
    if (conn == 1) return testing::Action::respond("220 smtp.example ESMTP\r\n\r\n", {}, true);
    return testing::Action::respond(testing::ok_response());
  });
  json j = probe_json({server.url("/"), "-n", "4"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["ok"], 3);
  EXPECT_EQ(j["failed"], 1);
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"].begin().key().rfind("parse: ", 0), 0u) << j["errors"].dump();
  EXPECT_FALSE(j["attempts"][1]["ok"].get<bool>());
  EXPECT_EQ(j["attempts"][1]["error"].get<std::string>().rfind("parse: ", 0), 0u);
}

TEST(Probe, EveryAttemptFailingExits1) {
  testing::ScriptedServer server(
      [](int, int, const std::string&) { return testing::Action::close(); });
  auto r = run_process({KNEE_BINARY, "probe", server.url("/"), "-n", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("closed_before_response: EOF x2"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("every attempt failed"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace knee
