// Exit codes and messages of the real binary: bad input is one clear line and exit 2, a run that
// cannot happen is exit 1 naming the URL and the OS error, failures on the wire are counted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/scripted_server.h"
#include "support/subprocess.h"

namespace knee {
namespace {

using testing::run_process;

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

struct BadInput {
  std::vector<std::string> args;
  std::string mentions;  // the flag or value the message must name
};

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, PrintsOneClearErrorAndExits2) {
  std::vector<std::string> argv = {KNEE_BINARY};
  argv.insert(argv.end(), GetParam().args.begin(), GetParam().args.end());
  auto r = run_process(argv, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(GetParam().mentions), std::string::npos) << r.err;
  EXPECT_LE(count_lines(r.err), 2) << r.err;  // the error, plus where to find the accepted form
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, BadInputTest,
    ::testing::Values(BadInput{{"run", "--bogus", "http://127.0.0.1:1/"}, "--bogus"},
                      BadInput{{"run", "notaurl"}, "notaurl"}, BadInput{{"run", "http://"}, "URL"},
                      BadInput{{"sweep", "--levels", "0"}, "--levels"},
                      BadInput{{"sweep", "--levels", "abc"}, "--levels"},
                      BadInput{{"sweep", "--levels", "4,2"}, "--levels"},
                      BadInput{{"run", "http://127.0.0.1:1/", "-d", "-1s"}, "-d"},
                      BadInput{{"run", "http://127.0.0.1:1/", "--duration=-1s"}, "negative"},
                      BadInput{{"run", "http://127.0.0.1:1/", "-d", "2parsecs"}, "-d/--duration"},
                      BadInput{{"run", "http://127.0.0.1:1/", "-c", "0"}, "-c/--connections"},
                      BadInput{{"serve", "--wait", "soon"}, "--wait"}));

TEST(Cli, UnreachableTargetExits1NamingUrlAndOsError) {
  int port;
  {
    testing::ScriptedServer closed([](int, int, const std::string&) {
      return testing::Action::respond(testing::ok_response());
    });
    port = closed.port();
  }
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  auto r = run_process({KNEE_BINARY, "run", url, "-d", "0.2s", "-w", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(url), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ECONNREFUSED"), std::string::npos) << r.err;
}

TEST(Cli, RunCountsConnectionsTheServerClosesAndAccountsForEveryRequest) {
  testing::ScriptedServer server([](int, int request, const std::string&) {
    if (request % 4 == 3) return testing::Action::close();
    return testing::Action::respond(testing::ok_response());
  });
  auto r = run_process(
      {KNEE_BINARY, "run", server.url("/"), "-c", "4", "-d", "0.5s", "-w", "0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  uint64_t requests = j["requests"], sent = j["sent"], aborted = j["aborted"];
  uint64_t closed = j["errors"]["closed_before_response"];
  EXPECT_GT(requests, 0u);
  EXPECT_GT(closed, 0u);
  EXPECT_GT(j["reconnects"].get<uint64_t>(), 0u);
  uint64_t failures = 0;
  for (auto& [kind, count] : j["errors"].items()) {
    if (kind != "connect" && kind != "status") failures += count.get<uint64_t>();
  }
  EXPECT_EQ(sent, requests + failures + aborted);
  for (const char* key : {"duration_s", "throughput_rps", "concurrency", "latency_ns"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"min", "mean", "p50", "p90", "p99", "p999", "max"}) {
    EXPECT_TRUE(j["latency_ns"].contains(key)) << key;
  }
}

}  // namespace
}  // namespace knee
