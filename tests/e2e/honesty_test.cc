// Issue 11 through the real binary: nothing vanishes from the accounting, nothing is blamed that
// did not do it, nothing is lost. Each test reproduces a trial that went wrong before.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "support/scripted_server.h"
#include "support/subprocess.h"

namespace knee {
namespace {

using namespace std::chrono_literals;
using testing::Action;
using testing::run_process;
using testing::ScriptedServer;

bool have_two_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

bool any_contains(const nlohmann::json& lines, const std::string& needle) {
  for (const auto& l : lines) {
    if (contains(l.get<std::string>(), needle)) return true;
  }
  return false;
}

// A fresh directory under TMPDIR, removed with what is in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    templ += "/knee-honesty-XXXXXX";
    path_ = ::mkdtemp(templ.data());
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // The names in the directory, "." and ".." left out.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(path_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
      }
      ::closedir(d);
    }
    return out;
  }

 private:
  std::string path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- nothing vanishes

// Regression: "0 completed, 0 failed, errors none" and a 10 s wait for a server that hangs.
TEST(Honesty, WarmUpRequestsToAHangingServerAreReportedAndTheRunEndsOnTime) {
  ScriptedServer server([](int, int, const std::string&) { return Action::hang(); });
  const auto started = std::chrono::steady_clock::now();
  auto r = run_process({KNEE_BINARY, "run", server.url("/"), "-c", "2", "-d", "1s", "-w", "0.5s"});
  EXPECT_LT(std::chrono::steady_clock::now() - started, 6s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out,
                       "warm-up      2 sent: 0 completed, 0 failed, 2 aborted; 2 carried "
                       "over into the measured phase"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "the measured phase sent no request")) << r.out;
}

// Regression: sweep said "see errors per level" and listed none, and printed 0.00 ms latencies
// for a level without a single response.
TEST(Honesty, ASweepListsErrorKindsPerLevelAndDashesWhereThereIsNoLatency) {
  ScriptedServer server([](int, int, const std::string&) { return Action::close(); });
  auto r = run_process(
      {KNEE_BINARY, "sweep", server.url("/"), "--levels", "1,2", "-d", "0.3s", "-w", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "warning: errors at concurrency 1: closed_before_response x"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "warning: errors at concurrency 2: closed_before_response x"))
      << r.out;
  int rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || first == 0 || !std::isdigit(line[first]) ||
        contains(line, " levels, ")) {
      continue;  // not a row of the table (the header line also starts with a number)
    }
    ++rows;  // a level of the table: no latency figure, so dashes, never 0.00
    EXPECT_FALSE(contains(line, "0.00")) << line;
    EXPECT_TRUE(contains(line, " - ")) << line;
  }
  EXPECT_EQ(rows, 2) << r.out;
  EXPECT_FALSE(contains(r.out, "see errors per level")) << r.out;
}

// Regression: a 0.8 s server freeze inside a sweep level passed without a word.
TEST(Honesty, ASweepFlagsAStalledLevelAsRunDoes) {
  std::atomic<int> requests{0};
  ScriptedServer server([&requests](int, int, const std::string&) {
    // The 200th request of the sweep, early in its first level (hundreds of requests a second
    // on one connection), stalls once.
    if (++requests == 200) return Action::respond(testing::ok_response(), 800ms);
    return Action::respond(testing::ok_response());
  });
  auto r = run_process({KNEE_BINARY, "sweep", server.url("/"), "--levels", "1,2", "-d", "1.5s",
                        "-w", "0", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["levels"].size(), 2u);
  EXPECT_GE(j["levels"][0]["latency_ns"]["max"].get<double>(), 800e6);
  EXPECT_TRUE(any_contains(j["levels"][0]["notes"], "coordinated omission"))
      << j["levels"][0]["notes"];
  // The stall is the first level's alone. (Level 2 may earn a note of its own on a busy host,
  // where a scheduling hiccup of a few ms is 10x its p99: one CI run saw that.)
  EXPECT_LT(j["levels"][1]["latency_ns"]["max"].get<double>(), 800e6)
      << j["levels"][1]["notes"].dump();
}

// ---- nothing is blamed that did not do it

// Regression: a target that stopped answering mid-run was "client could not keep the schedule",
// a network verdict and exit 0.
// The server goes away 1 s after it answered the run's first request, not 1 s after the run was
// started: a CI run spent 0.65 s starting the ASan binary, and the target went away at 0.35 s.
TEST(Honesty, ATargetThatGoesAwayIsNamedUnreachableAndTheRunExits1) {
  std::atomic<bool> answered{false};
  ScriptedServer server([&answered](int, int, const std::string&) {
    answered = true;
    return Action::respond(testing::ok_response());
  });
  std::atomic<bool> run_over{false};
  std::thread away([&server, &answered, &run_over] {
    while (!answered && !run_over) std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(1s);
    server.go_away();
  });
  auto r = run_process({KNEE_BINARY, "run", server.url("/"), "-c", "4", "-d", "3s", "-w", "0",
                        "--timeout", "1s", "--json", "-"});
  run_over = true;
  away.join();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "target unreachable since")) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("unreachable")) << r.out.substr(0, 2000);
  EXPECT_GT(j["unreachable"]["since_s"].get<double>(), 0.5);
  EXPECT_LT(j["unreachable"]["since_s"].get<double>(), 2.0);
  EXPECT_GT(j["unreachable"]["connect_failures"].get<uint64_t>(), 0u);
  ASSERT_FALSE(j["saturated"].is_null());
  EXPECT_EQ(j["saturated"]["resource"], "unreachable") << j["saturated"]["detail"];
  // Regression (a new user's trial): every refused attempt counted as a reconnect (18027 beside
  // 3 connections opened); a reconnect is a connection re-opened, so there are no more than the
  // connections opened, less the first of each of the 4 slots.
  EXPECT_LE(j["reconnects"].get<uint64_t>() + 4, j["connects"]["opened"].get<uint64_t>())
      << r.out.substr(0, 2000);
}

// Regression: a server whose threads sleep (2 % of a core) was called cpu-bound because another
// process filled its CPU. That process is host contention, a warning; the verdict is not cpu.
TEST(Honesty, AnotherProcessOnTheServersCpuIsContentionNotTheServersCpu) {
  if (!have_two_cpus()) GTEST_SKIP() << "needs CPUs 0 and 1";
  testing::BackgroundProcess server(
      {"/usr/bin/taskset", "-c", "0", KNEE_BINARY, "serve", "--port", "0"});
  const int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0);
  testing::BackgroundProcess burner(
      {"/usr/bin/taskset", "-c", "0", "/bin/sh", "-c", "echo spinning; while :; do :; done"});
  ASSERT_EQ(burner.first_line(), "spinning");
  auto r = run_process({"/usr/bin/taskset", "-c", "1", KNEE_BINARY, "run",
                        "http://127.0.0.1:" + std::to_string(port) + "/slow-async?ms=10", "-c", "8",
                        "-d", "1.5s", "-w", "0.3s", "--server-pid", std::to_string(server.pid()),
                        "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["saturated"].is_null());
  EXPECT_NE(j["saturated"]["resource"], "cpu") << j["saturated"]["detail"];
  EXPECT_TRUE(any_contains(j["saturated"]["warnings"], "host contention: other processes used"))
      << j["saturated"];
}

// Regression: an open-loop rate sweep whose p99 grew over 100x while the server's CPU was full
// had no knee.
TEST(Honesty, AnOpenLoopSweepPastTheServersCapacityHasAKneeThatNamesTheServer) {
  if (!have_two_cpus()) GTEST_SKIP() << "needs CPUs 0 and 1";
  auto r = run_process(
      {KNEE_BINARY, "sweep", "--rate", "1000,8000", "-d", "2s", "-w", "0.5s", "--json", "-"}, 180s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["knee"]["index"].is_null()) << j["knee"]["summary"];
  EXPECT_EQ(j["knee"]["index"], 0);
  EXPECT_EQ(j["knee"]["saturated_index"], 1);
  EXPECT_EQ(j["knee"]["saturated"], "cpu") << j["levels"][1]["saturated"]["detail"];
}

// ---- nothing is lost

// Regression: `knee report a.json -o a.json` overwrote its own input with HTML.
TEST(Honesty, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  TempDir dir;
  const std::string a = dir.file("a.json");
  auto r = run_process(
      {KNEE_BINARY, "run", server.url("/"), "-c", "2", "-d", "0.3s", "-w", "0", "--json", a});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string before = read_file(a);
  ASSERT_FALSE(before.empty());
  // report -o writes only .html names (a .json one is refused for that first), so the input
  // check is reached through a link named .html.
  for (const std::string& out : {a, dir.file("./a.json")}) {
    auto same = run_process({KNEE_BINARY, "report", a, "-o", out});
    EXPECT_EQ(same.exit_code, 2) << same.err;
    EXPECT_TRUE(contains(same.err, "is not an .html name")) << same.err;
  }
  std::filesystem::create_symlink(a, dir.file("a.html"));
  auto linked = run_process({KNEE_BINARY, "report", a, "-o", dir.file("a.html")});
  EXPECT_EQ(linked.exit_code, 2) << linked.err;
  EXPECT_TRUE(contains(linked.err, "is also an input")) << linked.err;
  EXPECT_EQ(read_file(a), before);
  std::vector<std::string> names = dir.names();  // no temporary file left
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a.html", "a.json"}));
}

// Regression: `knee run --body-file b.json --json b.json` replaced the body with the result, and
// sweep's --hlog and a mix's @body did the same: a result file may not be a file the load reads.
TEST(Honesty, AResultFileThatIsABodyTheLoadReadsIsRefusedAndTheBodyKept) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  TempDir dir;
  const std::string body = dir.file("b.json");
  { std::ofstream(body) << "{\"a\":1}\n"; }
  const std::vector<std::vector<std::string>> commands = {
      {"run", server.url("/"), "-m", "POST", "--body-file", body, "--json", body},
      {"sweep", server.url("/"), "--levels", "1", "-m", "POST", "--body-file", body, "--hlog",
       dir.file("./b.json")},
      {"run", server.url("/"), "--mix", "POST /x @" + body + "=1", "--html", body}};
  for (std::vector<std::string> argv : commands) {
    argv.insert(argv.begin(), KNEE_BINARY);
    for (const char* a : {"-d", "0.3s", "-w", "0"}) argv.push_back(a);
    auto r = run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << argv[1] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "is also an input")) << r.err;
    EXPECT_EQ(read_file(body), "{\"a\":1}\n");
  }
  EXPECT_TRUE(server.targets().empty()) << "refused before any request";
  EXPECT_EQ(dir.names(), std::vector<std::string>{"b.json"});
}

// A run that cannot happen leaves an existing result as it was: outputs are written whole, to
// a temporary name renamed into place, or not at all.
TEST(Honesty, AFailedRunLeavesAnExistingResultFileAsItWas) {
  TempDir dir;
  const std::string out = dir.file("result.json");
  { std::ofstream(out) << "{\"earlier\": true}\n"; }
  ScriptedServer server([](int, int, const std::string&) { return Action::close(); });
  const std::string url = server.url("/");
  server.go_away();  // nothing listens any more: the run cannot start
  auto r = run_process({KNEE_BINARY, "run", url, "-d", "0.3s", "--json", out});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(read_file(out), "{\"earlier\": true}\n");
  EXPECT_EQ(dir.names(), std::vector<std::string>{"result.json"});
}

// --json takes FILE or '-' in run as in sweep; alone it prints to stdout.
TEST(Honesty, RunJsonTakesAFileOrStdout) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  TempDir dir;
  const std::string file = dir.file("r.json");
  auto r = run_process(
      {KNEE_BINARY, "run", server.url("/"), "-c", "1", "-d", "0.2s", "-w", "0", "--json", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "knee run GET")) << r.out;  // the text, with the JSON in the file
  EXPECT_EQ(nlohmann::json::parse(read_file(file))["kind"], "run");
  for (const std::vector<std::string>& json :
       {std::vector<std::string>{"--json"}, std::vector<std::string>{"--json", "-"}}) {
    std::vector<std::string> argv = {KNEE_BINARY, "run", "-c", "1", "-d", "0.2s", "-w", "0"};
    argv.insert(argv.end(), json.begin(), json.end());
    argv.push_back(server.url("/"));  // after a bare --json, the URL is still the URL
    auto s = run_process(argv);
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_EQ(nlohmann::json::parse(s.out)["kind"], "run");
  }
}

// Flags that would do nothing say so: --tag names the tags that exist.
TEST(Honesty, AnUnknownHlogTagNamesTheTagsThere) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  TempDir dir;
  const std::string log = dir.file("s.hlog");
  auto r = run_process({KNEE_BINARY, "sweep", server.url("/"), "--levels", "1,2", "-d", "1s", "-w",
                        "0", "--hlog", log});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = run_process({KNEE_BINARY, "report", log, "--tag", "c999"});
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_TRUE(contains(t.err, "--tag: no interval is tagged 'c999'; the tags are c1, c2")) << t.err;
}

// Regression: a truncated log exited 1 (a corrupt JSON result exits 2), a range past the end
// printed a row of 0.000 as if measured, and a log given twice was counted twice (a JSON result
// given twice was compared with itself).
TEST(Honesty, AnHlogThatIsCorruptEmptyOrGivenTwiceIsBadInput) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  TempDir dir;
  const std::string log = dir.file("r.hlog");
  const std::string result = dir.file("r.json");
  auto r = run_process({KNEE_BINARY, "run", server.url("/"), "-c", "1", "-d", "1.2s", "-w", "0",
                        "--hlog", log, "--json", result});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_file(log);
  const std::string cut = dir.file("cut.hlog");
  { std::ofstream(cut) << text.substr(0, text.rfind(',')); }  // the last line loses a field
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"report", cut}, "report: " + cut + ": hlog line"},
      {{"report", log, "--from", "1000"}, "none of the"},
      {{"report", log, dir.file("./r.hlog")}, "is given twice"},
      // and a JSON result compared with itself (--json r.json: --json takes no file)
      {{"report", result, "--json", dir.file("./r.json")}, "is given twice: compared with itself"}};
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {KNEE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    auto t = run_process(argv);
    EXPECT_EQ(t.exit_code, 2) << args.back() << ": " << t.err;
    EXPECT_TRUE(contains(t.err, message)) << t.err;
  }
  EXPECT_EQ(run_process({KNEE_BINARY, "report", log}).exit_code, 0);
}

}  // namespace
}  // namespace knee
