// Live progress (harness/progress.h): an updating line on stderr when it is a terminal, nothing at
// all in a pipe or with --quiet. `script -qfec CMD /dev/null` (util-linux) runs CMD on a
// pseudo-terminal and copies what it writes there to its own stdout.
#include <gtest/gtest.h>

#include <string>

#include "support/subprocess.h"

namespace knee {
namespace {

const std::string kErase = "\033[K";  // clear to end of line: the progress line is redrawn

std::string fast_url(int port) { return "http://127.0.0.1:" + std::to_string(port) + "/fast"; }

// `command` under `script`, on a terminal: everything it printed, stdout and stderr together.
testing::ProcessResult on_terminal(const std::string& command) {
  return testing::run_process({"/usr/bin/script", "-qfec", command, "/dev/null"},
                              std::chrono::seconds(120));
}

TEST(Progress, RunShowsAnUpdatingLineOnATerminal) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0"});
  int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0) << server.first_line();
  auto r = on_terminal(std::string(KNEE_BINARY) + " run " + fast_url(port) +
                       " -c 2 -d 1.5s -w 0.5s --no-color");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\r"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kErase), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warm-up"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("elapsed, ~"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" req/s  p99 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("errors 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("left"), std::string::npos) << r.out;
  // The result follows the progress line, which was erased first.
  size_t result = r.out.find("knee run GET");
  ASSERT_NE(result, std::string::npos) << r.out;
  EXPECT_NE(r.out.rfind("\r" + kErase, result), std::string::npos) << r.out;
}

TEST(Progress, SweepGrowsItsTableRowByRowOnATerminal) {
  auto r = on_terminal(std::string(KNEE_BINARY) + " sweep --levels 1,2 -d 0.6s -w 0.2s");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("level 1/2 c=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("level 2/2 c=2"), std::string::npos) << r.out;
  // The sweep's heading (URL, target, levels: three lines) first, then the column header and
  // two rows live; then all six erased (lines up, clear to the end of the screen) before the
  // final report prints the full table. Regression (issue 11): the heading came only at the end.
  size_t erase = r.out.find("\033[6F\033[J");
  ASSERT_NE(erase, std::string::npos) << r.out;
  EXPECT_LT(r.out.find("knee sweep: GET"), r.out.find("level 1/2 c=1")) << r.out;
  EXPECT_LT(r.out.find("concurrency  requests"), erase) << r.out;
  EXPECT_GT(r.out.rfind("knee sweep: GET"), erase) << r.out;
}

TEST(Progress, NoneInAPipeOrWithQuiet) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--port", "0"});
  int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0) << server.first_line();
  // stderr is a pipe here: results only, not a single control character.
  auto piped = testing::run_process(
      {KNEE_BINARY, "run", fast_url(port), "-c", "2", "-d", "1s", "-w", "0.3s", "--no-color"},
      std::chrono::seconds(60));
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "");
  EXPECT_EQ(piped.out.find('\r'), std::string::npos) << piped.out;
  EXPECT_EQ(piped.out.find('\033'), std::string::npos) << piped.out;
  EXPECT_NE(piped.out.find("knee run GET"), std::string::npos) << piped.out;
  auto capacity = testing::run_process(
      {KNEE_BINARY, "capacity", fast_url(port), "--slo", "p99<1s", "--start-rate", "100",
       "--max-rate", "100", "--repeat", "1", "-d", "0.3s", "-w", "0.1s"},
      std::chrono::seconds(60));
  ASSERT_EQ(capacity.exit_code, 0) << capacity.err;
  EXPECT_EQ(capacity.err, "");
  EXPECT_EQ(capacity.out.find('\033'), std::string::npos) << capacity.out;
  EXPECT_NE(capacity.out.find("PASS"), std::string::npos) << capacity.out;
  // On a terminal, --quiet (and NO_COLOR, accepted) leaves the results only.
  auto quiet = on_terminal("NO_COLOR=1 " + std::string(KNEE_BINARY) + " run " + fast_url(port) +
                           " -c 2 -d 1s -w 0.3s --quiet");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("elapsed"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.out.find('\033'), std::string::npos) << quiet.out;
  EXPECT_NE(quiet.out.find("knee run GET"), std::string::npos) << quiet.out;
}

}  // namespace
}  // namespace knee
