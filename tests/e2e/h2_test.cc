// knee run and sweep over HTTP/2 and with HTTP/1.1 pipelining, as a user types them (issue 12,
// points 3, 4 and 7): the text header and the JSON name the protocol and the requests per
// connection, Little's law is checked against connections x streams, a saved result renders back
// to the same text, an HTTP/1.1 sweep compares against an HTTP/2 one, and the flags that
// contradict each other are exit 2 with the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/h2_server.h"
#include "support/scripted_server.h"
#include "support/subprocess.h"

namespace knee {
namespace {

using testing::run_process;

TEST(H2Cli, ARunNamesTheProtocolAndChecksLittleAgainstConnectionsTimesStreams) {
  testing::H2Script script;
  script.delay = std::chrono::milliseconds(5);
  testing::H2Server server(script);
  auto r = run_process({KNEE_BINARY, "run", server.url(), "--h2c", "-c", "2", "--streams", "4",
                        "-d", "0.5s", "-w", "0.1s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  closed loop: 2 connections x 4 = 8 in flight"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  HTTP/2 over cleartext (h2c, prior knowledge), 4 streams per connection"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Little's law N = 8, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  HTTP/2       server's max concurrent streams not set; 0 GOAWAY"),
            std::string::npos)
      << r.out;

  const std::string dir = ::testing::TempDir() + "/knee_h2_cli";
  std::filesystem::create_directories(dir);
  const std::string saved = dir + "/h2.json";
  auto j = run_process({KNEE_BINARY, "run", server.url(), "--h2c", "-c", "2", "--streams", "4",
                        "-d", "0.3s", "-w", "0", "--json", saved});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  std::ifstream in(saved);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["params"]["protocol"], "h2c");
  EXPECT_EQ(doc["params"]["per_connection"], 4);
  EXPECT_EQ(doc["concurrency"], 8);
  EXPECT_EQ(doc["connects"]["opened"], 2);
  EXPECT_EQ(doc["connects"]["h2"]["goaways"], 0);
  // The saved result renders back to what the run printed.
  auto back = run_process({KNEE_BINARY, "report", saved});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  ASSERT_NE(back.out.find("  HTTP/2 over cleartext (h2c, prior knowledge), 4 streams per "
                          "connection; N = connections x 4\n"),
            std::string::npos)
      << back.out;
  EXPECT_EQ(back.out, j.out.substr(0, back.out.size())) << back.out;
}

TEST(H2Cli, AnHttp11SweepComparesAgainstAnHttp2SweepOfTheSameServer) {
  testing::H2Script script;
  testing::H2Server h2(script);
  testing::ScriptedServer h1(testing::ScriptedServer::always_ok());
  const std::string dir = ::testing::TempDir() + "/knee_h2_compare";
  std::filesystem::create_directories(dir);
  auto a = run_process({KNEE_BINARY, "sweep", h1.url(), "--levels", "2,4", "-d", "0.2s", "-w", "0",
                        "--quiet", "--json", dir + "/h1.json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  // Levels are connections; x 2 streams they are the same concurrency as the HTTP/1.1 levels.
  auto b = run_process({KNEE_BINARY, "sweep", h2.url(), "--h2c", "--streams", "2", "--levels",
                        "1,2", "-d", "0.2s", "-w", "0", "--quiet", "--json", dir + "/h2.json"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto c = run_process({KNEE_BINARY, "report", dir + "/h1.json", dir + "/h2.json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("      protocol: HTTP/1.1\n"), std::string::npos) << c.out;
  EXPECT_NE(
      c.out.find("      protocol: HTTP/2 over cleartext (h2c, prior knowledge), 2 streams per "
                 "connection\n"),
      std::string::npos)
      << c.out;
  EXPECT_EQ(c.out.find("no level is in both files"), std::string::npos) << c.out;
  EXPECT_NE(b.out.find("HTTP/2: server's max concurrent streams not set; 0 GOAWAY received"),
            std::string::npos)
      << b.out;
}

TEST(H2Cli, PipeliningIsNamedAndItsNIsConnectionsTimesDepth) {
  testing::ScriptedServer server(testing::ScriptedServer::always_ok());
  auto r = run_process(
      {KNEE_BINARY, "run", server.url(), "-c", "2", "--pipeline", "3", "-d", "0.3s", "-w", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  HTTP/1.1 pipelined, 3 requests in flight per connection, answered in "
                       "order; N = connections x 3"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Little's law N = 6, "), std::string::npos) << r.out;
}

TEST(H2Cli, ContradictoryProtocolFlagsAreExit2WithTheFix) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"http://127.0.0.1:1/", "--h2"}, "knee: --h2/--h2c: http:// has no TLS"},
      {{"https://127.0.0.1:1/", "--h2c"}, "knee: --h2/--h2c: --h2c is HTTP/2 over cleartext"},
      {{"http://127.0.0.1:1/", "--streams", "4"}, "knee: --streams: HTTP/2 only"},
      {{"http://127.0.0.1:1/", "--h2c", "--pipeline", "4"}, "knee: --pipeline: HTTP/1.1 only"},
      {{"http://127.0.0.1:1/", "--pipeline", "4", "--no-keepalive"},
       "knee: --streams/--pipeline: more than one request per connection needs connections that "
       "stay open"},
      {{"http://127.0.0.1:1/", "--pipeline", "0"}, "knee: --pipeline: 0 requests"},
      {{"http://127.0.0.1:1/", "--h2c", "--streams", "5000"}, "knee: --streams: 5000 requests"},
      {{"http://127.0.0.1:1/", "--h2c", "--no-keepalive"}, "knee: --h2/--h2c: HTTP/2 keeps"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> argv = {KNEE_BINARY, "run"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto r = run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << flags.back();
    EXPECT_EQ(r.err.rfind(message, 0), 0u) << r.err;
  }
}

}  // namespace
}  // namespace knee
