// Exit codes and messages of the real binary: bad input is one clear line and exit 2, a run that
// cannot happen is exit 1 naming the URL and the OS error, failures on the wire are counted.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/scripted_server.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

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
    ::testing::Values(
        BadInput{{"run", "--bogus", "http://127.0.0.1:1/"}, "--bogus"},
        // Regression (a new user's trial): a flag of another command was "not expected", with
        // its value printed before it.
        BadInput{{"sweep", "http://127.0.0.1:1/", "--stages", "1s:10"},
                 "`knee sweep` does not take --stages; it is a flag of `knee run`"},
        BadInput{{"run", "http://127.0.0.1:1/", "--days=2"},
                 "`knee run` does not take --days; it is a flag of `knee lab data`"},
        // Regression (a new user's trial): CLI11's own words for a short flag of another
        // command, a flag given twice, a port that is not a number, and a list where one value
        // goes.
        BadInput{{"sweep", "http://127.0.0.1:1/", "-r", "100"},
                 "`knee sweep` does not take -r; write --rate"},
        BadInput{{"run", "http://127.0.0.1:1/", "--stages", "1s:10", "--stages", "1s:20"},
                 "--stages: given more than once; give it once"},
        BadInput{{"serve", "--port", "18080x"}, "--port: '18080x' is not a number"},
        BadInput{{"run", "http://127.0.0.1:1/", "--rate", "100,200"},
                 "it takes one value, not a list"},
        BadInput{{"run", "notaurl"}, "notaurl"}, BadInput{{"run", "http://"}, "URL"},
        BadInput{{"sweep", "--levels", "0"}, "--levels"},
        // knee model sim: the page's file, its topology, its service time, a sweep to read.
        BadInput{{"model", "sim"}, "--output"},
        BadInput{{"model", "sim", "-o", "-", "--topology", "star"}, "--topology"},
        BadInput{{"model", "sim", "-o", "-", "--service-time", "0"}, "--service-time"},
        BadInput{{"model", "sim", "-o", "-", "--from", "/nonexistent/sweep.json"}, "--from"},
        BadInput{{"sweep", "--levels", "abc"}, "--levels"},
        BadInput{{"sweep", "--levels", "4,2"}, "--levels"},
        BadInput{{"run", "http://127.0.0.1:1/", "-d", "-1s"}, "-d"},
        BadInput{{"run", "http://127.0.0.1:1/", "--duration=-1s"}, "negative"},
        BadInput{{"run", "http://127.0.0.1:1/", "-d", "2parsecs"}, "-d/--duration"},
        BadInput{{"run", "http://127.0.0.1:1/", "-c", "0"}, "-c/--connections"},
        BadInput{{"run", "http://127.0.0.1:1/", "--spin", "200us"}, "--spin"},
        BadInput{{"run", "http://127.0.0.1:1/", "-r", "10", "--spin", "soon"},
                 "neither auto nor a duration"},
        // Regressions found by a new user: -r 0 ran a closed loop, -r 1e12 filled 24 GB, -r nan
        // blamed -c, and a bad --hlog path was found only after the whole run.
        BadInput{{"run", "http://127.0.0.1:1/", "-r", "0"}, "-r/--rate"},
        BadInput{{"run", "http://127.0.0.1:1/", "-r", "1e12"}, "-r/--rate"},
        BadInput{{"run", "http://127.0.0.1:1/", "-r", "nan"}, "-r/--rate"},
        // Regression (a new user's trial): a rate too low to schedule anything passed --strict.
        BadInput{{"run", "http://127.0.0.1:1/", "-r", "0.5", "-d", "1s", "--strict"},
                 "0.5 req/s for 1 s schedules no request (one every 2 s); give a higher -r or a "
                 "-d of at least 2 s"},
        BadInput{{"run", "http://127.0.0.1:1/", "--hlog", "/nonexistent/x.hlog"}, "--hlog"},
        BadInput{{"sweep", "http://127.0.0.1:1/", "--hlog", "/nonexistent/x.hlog"}, "--hlog"},
        BadInput{{"capacity", "http://127.0.0.1:1/", "--slo", "p99<1s", "--max-rate", "1e7"},
                 "--max-rate"},
        // Regression (a new user's trial): '10%' was "not a number"; a % is now read as the
        // percent it is, so 200% reaches the range check.
        BadInput{{"capacity", "http://127.0.0.1:1/", "--slo", "p99<1s", "--precision", "200%"},
                 "--precision: give a percentage above 0, at most 100"},
        BadInput{{"capacity", "http://127.0.0.1:1/", "--slo", "p99<1s", "--precision", "5%%"},
                 "--precision"},
        BadInput{
            {"capacity", "http://127.0.0.1:1/", "--slo", "p99<1s", "--json", "/nonexistent/c.json"},
            "--json: cannot write '/nonexistent/c.json'"},
        BadInput{{"capacity", "--slo", "p99<1s"}, "a target is required"},
        BadInput{{"report", "/nonexistent/sweep.json"}, "cannot read '/nonexistent/sweep.json'"},
        BadInput{{"run", "http://127.0.0.1:1/", "-r", "100", "--spin", "1s"}, "--spin"},
        BadInput{{"serve", "--wait", "soon"}, "--wait"},
        // Regression: the accepted range was printed as 0 to a 309-digit number.
        BadInput{{"serve", "--max-connections", "-1"}, "not in range 0 to 2147483647"},
        // Regressions: an empty --state meant the default folder; a nested subcommand's bad
        // value pointed to its parent's --help.
        BadInput{{"lab", "data", "--state", ""}, "--state: empty"},
        BadInput{{"lab", "billing", "--date", ""}, "--date: empty"},
        BadInput{{"lab", "data", "--days", "2.5"}, "Run 'knee lab data --help'"},
        // Regressions (a new user's trial): CLI11's "Could not convert: --connections = ...",
        // and a missing required flag of a nested subcommand pointing to 'knee --help'.
        BadInput{{"run", "http://127.0.0.1:1/", "-c", "99999999999"},
                 "-c/--connections: 99999999999 is out of range"},
        BadInput{{"run", "http://127.0.0.1:1/", "-t", "1.5"}, "-t/--threads: '1.5' is not a whole"},
        BadInput{{"run", "http://127.0.0.1:1/", "-r", "abc"}, "-r/--rate: 'abc' is not a number"},
        BadInput{{"model", "usl"}, "Run 'knee model usl --help'"},
        BadInput{{"report", "/tmp"}, "report: '/tmp' is a folder"},
        // Regressions (a new user's trial): -o y.json wrote HTML into y.json; -o with a log said
        // to give logs.
        BadInput{{"report", "a.json", "-o", "y.json"}, "-o: 'y.json' is not an .html name"},
        BadInput{{"report", "x.hlog", "-o", "z.html"},
                 "-o: knee report writes HTML from JSON results only"},
        BadInput{{"lab", "data", "--records", "0"}, "--records: 0 shipments"},
        // Regressions found by a new user:
        BadInput{{"badcmd"}, "unknown command 'badcmd'"},
        BadInput{{"run", "http://127.0.0.1:1/", "-d", "2"}, "-d/--duration"},
        BadInput{{"serve", "--cpu", "10"}, "--cpu"},
        BadInput{{"run", "http://127.0.0.1:1/{con}"}, "placeholder"},
        BadInput{{"run", "http://127.0.0.1:1/", "--body-file", "/"}, "--body-file"},
        BadInput{{"run", "http://127.0.0.1:1/", "--body-file", "/nonexistent/b"}, "--body-file"},
        // Regression: an empty --mix or --stages ran the default closed loop instead.
        BadInput{{"run", "http://127.0.0.1:1/", "--mix", ""}, "--mix: empty"},
        BadInput{{"run", "http://127.0.0.1:1/", "--stages", ""}, "--stages: empty"},
        BadInput{{"run", "http://127.0.0.1:1/", "-c", "100000000"}, "-c/--connections"},
        // Regression: a seed of -1 read as 2^64-1, and 2^64 wrapped, without a word.
        BadInput{{"run", "http://127.0.0.1:1/", "-r", "10", "--arrival", "poisson", "--seed", "-1"},
                 "--seed: '-1' is not a seed; give a whole number from 0 to 18446744073709551615"},
        BadInput{{"lab", "data", "--seed", "18446744073709551616"}, "is not a seed"},
        // Regression: --json FILE where --json prints on stdout said only that FILE was not
        // expected.
        BadInput{{"probe", "http://127.0.0.1:1/", "--json", "out.json"},
                 "`knee probe`'s --json takes no file: it prints on stdout; redirect it "
                 "(--json > out.json)"},
        BadInput{{"ladder", "--json", "lad.json"}, "`knee ladder`'s --json takes no file"},
        BadInput{{"report", "compare", "a.json", "b.json"},
                 "report: there is no 'compare' word; give the two results: knee report a.json "
                 "b.json"},
        BadInput{{"run", "http://127.0.0.1:1/", "--no-keepalive", "yes"},
                 "`knee run`'s --no-keepalive takes no value; 'yes' was left over"},
        BadInput{{"sweep", "--json", "/nonexistent/dir/x.json"}, "--json"},
        BadInput{{"sweep", "http://127.0.0.1:1/", "--server-threads", "2"}, "--server-threads"},
        BadInput{{"sweep", "--server-threads", "100000"}, "--server-threads"},
        // Regressions (issue 11): flags that did nothing.
        BadInput{{"run", "http://127.0.0.1:1/", "--server-pid", "999999999"}, "--server-pid"},
        BadInput{{"sweep", "http://127.0.0.1:1/", "--server-pid", "999999999"}, "--server-pid"},
        // --stack: the stack knee lab up started, so a folder without one is bad input.
        BadInput{{"run", "http://127.0.0.1:1/", "--stack", "--lab-state", "/nonexistent/knee"},
                 "--stack: no lab is up in /nonexistent/knee/stack"},
        BadInput{{"run", "http://127.0.0.1:1/", "--lab-state", "/tmp"}, "--lab-state"},
        BadInput{{"sweep", "--stack"}, "--stack: only with a URL"},
        BadInput{{"run", "http://127.0.0.1:1/", "--stack", "--server-pid", "1"},
                 "--server-pid and --stack"},
        BadInput{{"run", "--stack", "--scenario", "name=a url=http://127.0.0.1:1/"}, "--stack"},
        // Regression (a new user's trial): the engine's "the open loop's rate must be the
        // stages' peak" spoke for the command line.
        BadInput{{"run", "--stages", "1s:100", "--scenario", "name=a url=http://127.0.0.1:1/ r=10"},
                 "--stages with --scenario: not together yet"},
        BadInput{{"run", "http://127.0.0.1:1/", "--arrival", "poisson"}, "--arrival"},
        BadInput{{"run", "http://127.0.0.1:1/", "--seed", "7"}, "--seed"},
        BadInput{{"run", "http://127.0.0.1:1/", "--strict"}, "--strict"},
        BadInput{{"sweep", "http://127.0.0.1:1/", "--arrival", "poisson"}, "--arrival"},
        BadInput{{"report", "x.hlog", "--from", "8", "--to", "5"}, "--from 8 --to 5"},
        BadInput{{"report", "x.hlog", "--from", "-1"}, "--from"},
        BadInput{{"run", "ftp://127.0.0.1:1/"}, "knee speaks http://"},
        BadInput{{"sweep", "http://127.0.0.1:1/", "--levels", "1,100000"}, "--levels"},
        BadInput{{"run", "http://127.0.0.1:1/", "-n", "0"}, "-n/--requests"},
        BadInput{{"run", "http://127.0.0.1:1/", "-n", "-5"}, "-n/--requests"},
        BadInput{{"run", "http://127.0.0.1:1/", "--json", "/tmp/knee-same.out", "--html",
                  "/tmp/knee-same.out"},
                 "--json and --html"},
        BadInput{{"run", "https://127.0.0.1:1/", "--io", "uring"},
                 "--io: uring is for plain http://"},
        BadInput{{"sweep", "http://127.0.0.1:1/", "--levels", "1", "--io", "poll"},
                 "--io: 'poll' is not one of epoll|uring"},
        // Regression (a trial): an empty value printed "--io:  not in {epoll,uring}".
        BadInput{{"run", "http://127.0.0.1:1/", "--io", ""},
                 "--io: '' is not one of epoll|uring"}));

// --io uring: the run and a sweep write their requests through the send ring, account for every
// request, and say so in the text and the JSON; a saved run renders back to the same text.
TEST(Cli, IoUringRunsAndSweepsSayHowTheyWroteTheirRequests) {
  testing::ScriptedServer server(testing::ScriptedServer::always_ok());
  const std::string saved = ::testing::TempDir() + "/knee_io_uring_run.json";
  auto r = run_process({KNEE_BINARY, "run", server.url(), "-c", "3", "-n", "300", "-w", "0", "--io",
                        "uring", "--json", saved});
  if (r.exit_code == 1 && r.err.find("no io_uring") != std::string::npos) {
    GTEST_SKIP() << r.err;  // a kernel without io_uring, or one forbidding it
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  requests written through io_uring (--io uring)"), std::string::npos)
      << r.out;
  std::ifstream in(saved);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["params"]["io"], "uring");
  EXPECT_EQ(j["sent"], 300);
  EXPECT_EQ(j["requests"], 300);
  auto back = run_process({KNEE_BINARY, "report", saved});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, r.out.substr(0, back.out.size())) << back.out;
  auto s = run_process({KNEE_BINARY, "sweep", server.url(), "--levels", "1,2", "-n", "100", "-w",
                        "0", "--io", "uring", "--json", "-"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto sj = nlohmann::json::parse(s.out);
  EXPECT_EQ(sj["params"]["io"], "uring");
  for (const auto& level : sj["levels"]) EXPECT_EQ(level["sent"], 100);
  // Without --io the field is left out: files of the default path are as before.
  auto e = run_process(
      {KNEE_BINARY, "run", server.url(), "-c", "1", "-n", "10", "-w", "0", "--json", "-"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_FALSE(nlohmann::json::parse(e.out)["params"].contains("io"));
}

// --io uring where the kernel has no io_uring (no_io_uring's seccomp filter): each command stops
// before it measures or prints anything, exit 1, one line naming --io and the way out.
// Regression (a trial): `knee capacity` printed its table's header first.
TEST(Cli, IoUringOnAKernelWithoutItStopsBeforeAnythingIsMeasured) {
  testing::ScriptedServer server(testing::ScriptedServer::always_ok());
  const std::vector<std::vector<std::string>> commands = {
      {"run", server.url(), "-c", "1", "-n", "10", "-w", "0"},
      {"sweep", server.url(), "--levels", "1,2", "-n", "10", "-w", "0"},
      {"capacity", server.url(), "--slo", "p99<1s", "--start-rate", "10", "-d", "1s", "-w", "0"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> argv = {NO_IO_URING_BINARY, KNEE_BINARY};
    argv.insert(argv.end(), command.begin(), command.end());
    argv.insert(argv.end(), {"--io", "uring"});
    auto r = run_process(argv, std::chrono::seconds(30));
    if (r.exit_code == 77) GTEST_SKIP() << r.err;  // no seccomp filter here
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.err;
    EXPECT_NE(r.err.find("knee: --io: uring: this kernel has no io_uring or forbids it; leave "
                         "--io at epoll"),
              std::string::npos)
        << command[0] << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << command[0] << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << command[0] << ": " << r.out;
  }
  EXPECT_TRUE(server.targets().empty()) << "nothing was sent";
  // The lab server refuses to start rather than serve on another path than asked.
  auto serve =
      run_process({NO_IO_URING_BINARY, KNEE_BINARY, "serve", "--port", "0", "--io", "uring"},
                  std::chrono::seconds(30));
  EXPECT_EQ(serve.exit_code, 1) << serve.err;
  EXPECT_NE(serve.err.find("knee serve: --io: uring: this kernel has no io_uring or forbids it; "
                           "leave --io at epoll"),
            std::string::npos)
      << serve.err;
}

// -n (issue 12, point 5): a count instead of a duration, for a run and for each sweep level.
TEST(Cli, RequestsCountReplacesTheDurationInRunAndSweep) {
  testing::ScriptedServer server(testing::ScriptedServer::always_ok());
  auto r = run_process(
      {KNEE_BINARY, "run", server.url(), "-c", "3", "-n", "200", "-w", "0", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sent"], 200);
  EXPECT_EQ(j["requests"], 200);
  EXPECT_EQ(j["requests_asked"], 200);
  EXPECT_LT(j["duration_s"].get<double>(), 30.0);
  auto s = run_process({KNEE_BINARY, "sweep", server.url(), "--levels", "1,2", "-n", "100", "-w",
                        "0", "--json", "-"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto sj = nlohmann::json::parse(s.out);
  ASSERT_EQ(sj["levels"].size(), 2u);
  for (const auto& level : sj["levels"]) EXPECT_EQ(level["sent"], 100);
}

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

namespace knee {
namespace {

// Regression: sweep validated -t against run's default of 10 connections, not its levels.
TEST(Cli, SweepAcceptsMoreThreadsThanRunsDefaultConnections) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response());
  });
  auto r = testing::run_process({KNEE_BINARY, "sweep", server.url("/"), "--levels", "16,32", "-t",
                                 "12", "-d", "0.2s", "-w", "0", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["levels"][0]["threads"], 12);
}

// Regression: a target that died mid-sweep lost every level already measured.
TEST(Cli, SweepReportsTheLevelsMeasuredBeforeTheTargetDied) {
  auto server = std::make_unique<testing::ScriptedServer>([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response());
  });
  std::string url = server->url("/");
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    server.reset();
  });
  auto r = testing::run_process({KNEE_BINARY, "sweep", url, "--levels", "1,2,4,8,16", "-d", "0.5s",
                                 "-w", "0", "--grace", "0.1s", "--json", "-"});
  killer.join();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("ECONNREFUSED"), std::string::npos) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["levels"].size(), 1u);
  EXPECT_LT(j["levels"].size(), 5u);
  bool named = false;
  for (const auto& w : j["warnings"])
    named = named || w.get<std::string>().find("failed during") != std::string::npos;
  EXPECT_TRUE(named) << j["warnings"];
}

}  // namespace
}  // namespace knee

namespace knee {
namespace {

TEST(Cli, FailingThresholdExits3AndNamesIt) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response(), std::chrono::milliseconds(2));
  });
  auto pass =
      testing::run_process({KNEE_BINARY, "run", server.url("/"), "-c", "2", "-d", "0.3s", "-w", "0",
                            "--threshold", "p99<1s", "--threshold", "errors<0.1%"});
  EXPECT_EQ(pass.exit_code, 0) << pass.err;
  auto fail = testing::run_process({KNEE_BINARY, "run", server.url("/"), "-c", "2", "-d", "0.3s",
                                    "-w", "0", "--threshold", "p99<1ms"});
  EXPECT_EQ(fail.exit_code, 3) << fail.err;
  EXPECT_NE(fail.err.find("p99 < 1ms: FAILED"), std::string::npos) << fail.err;
}

}  // namespace
}  // namespace knee

namespace knee {
namespace {

TEST(Cli, SweepByRateRunsOpenLoopLevels) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response(), std::chrono::milliseconds(1));
  });
  auto r = testing::run_process({KNEE_BINARY, "sweep", server.url("/"), "--rate", "100,200", "-d",
                                 "0.5s", "-w", "0", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["levels"].size(), 2u);
  EXPECT_EQ(j["levels"][0]["mode"], "open");
  EXPECT_EQ(j["levels"][1]["target_rate_rps"], 200.0);
  EXPECT_NEAR(j["levels"][1]["achieved_rate_rps"].get<double>(), 200.0, 4.0);
  EXPECT_TRUE(j["knee"].contains("rate_rps"));
}

}  // namespace
}  // namespace knee

namespace knee {
namespace {

TEST(Cli, CapacityFindsARateMeetingTheSloOrSaysNoneDoes) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response(), std::chrono::milliseconds(5));
  });
  std::vector<std::string> common = {
      KNEE_BINARY, "capacity", server.url("/"), "-d", "0.3s",       "-w", "0",
      "--repeat",  "1",        "--start-rate",  "50", "--max-rate", "200"};
  auto meets = common;
  meets.insert(meets.end(), {"--slo", "p99<500ms", "--json"});
  auto ok = testing::run_process(meets);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_FALSE(ok.out.empty());
  EXPECT_EQ(nlohmann::json::parse(ok.out)["kind"], "capacity");
  // --json FILE (regression, a new user's trial: --json took no file): the document in the file,
  // written whole after the search; the rows and whose limit the answer was on stdout.
  testing::TempDir dir;
  auto to_file = common;
  to_file.insert(to_file.end(), {"--slo", "p99<500ms", "--json", dir.file("capacity.json")});
  auto written = testing::run_process(to_file);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  std::ifstream in(dir.file("capacity.json"));
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["kind"], "capacity");
  ASSERT_FALSE(doc["steps"].empty());
  const nlohmann::json& limit = doc["steps"][0]["repeats"][0]["limit"];
  EXPECT_TRUE(limit["resource"].is_string()) << doc.dump();
  EXPECT_NE(written.out.find("capacity: at least 200 req/s"), std::string::npos) << written.out;
  auto misses = common;
  misses.insert(misses.end(), {"--slo", "p99<1ms"});  // every answer takes 5 ms
  auto none = testing::run_process(misses);
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.err.find("with no errors (try a lower --start-rate)"), std::string::npos)
      << none.err;
}

// Regression (a new user's trial): a URL that answers 404 to every request was told to try a
// lower --start-rate; the start rate's requests all failed, and the hint says to check the URL.
TEST(Cli, CapacityWhereEveryRequestFailsPointsToTheUrlNotTheRate) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
  });
  auto r = testing::run_process({KNEE_BINARY, "capacity", server.url("/nope"), "-d", "0.3s", "-w",
                                 "0", "--repeat", "1", "--start-rate", "50", "--max-rate", "200",
                                 "--slo", "p99<500ms"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("every request there failed (see its errors: check the URL"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("lower --start-rate"), std::string::npos) << r.err;
}

// Regression (a new user's trial): with every answer a 404 there is no latency, and
// '--threshold p99<1ms' passed with exit 0, in run and in sweep; it fails, saying why, exit 3.
TEST(Cli, ALatencyThresholdWithoutASuccessfulResponseFails) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
  });
  for (const char* command : {"run", "sweep"}) {
    testing::TempDir dir;
    std::vector<std::string> args = {KNEE_BINARY, command, server.url("/nope")};
    args.insert(args.end(), {"-d", "0.3s", "-w", "0", "--threshold", "p99<1ms"});
    args.insert(args.end(), {"--json", dir.file("r.json")});
    if (std::string(command) == "sweep") args.insert(args.end(), {"--levels", "1,2"});
    auto r = testing::run_process(args);
    EXPECT_EQ(r.exit_code, 3) << command << ": " << r.err;
    EXPECT_NE(r.err.find("p99 < 1ms: FAILED (no successful response: no latency to check)"),
              std::string::npos)
        << command << ": " << r.err;
    // The result file says what the exit code said.
    std::ifstream in(dir.file("r.json"));
    const nlohmann::json doc = nlohmann::json::parse(in);
    ASSERT_EQ(doc["thresholds"].size(), 1u) << command;
    EXPECT_EQ(doc["thresholds"][0]["threshold"], "p99 < 1ms");
    EXPECT_EQ(doc["thresholds"][0]["passed"], false);
  }
}

// Regression (a new user's trial): with stdout and stderr on one pipe (2>&1 | cat) the failing
// threshold's line came out above the whole report: stdout, block-buffered, was not flushed.
TEST(Cli, AFailingThresholdComesAfterTheReportOnOnePipe) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  });
  auto r = testing::run_process({"/bin/sh", "-c",
                                 std::string(KNEE_BINARY) + " run " + server.url("/") +
                                     " -c 1 -d 0.3s -w 0 --threshold 'p99<1ns' 2>&1 | cat"});
  const size_t report = r.out.find("Little's law");
  const size_t verdict = r.out.find("threshold p99 < 1ns: FAILED");
  ASSERT_NE(report, std::string::npos) << r.out;
  ASSERT_NE(verdict, std::string::npos) << r.out;
  EXPECT_LT(report, verdict) << r.out;
}

}  // namespace
}  // namespace knee
