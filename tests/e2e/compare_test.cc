// `knee report a.json b.json`: two sweeps of the same built-in server, one with 1 client thread
// and one with 2, compared level by level (issue 5, point 4).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/scripted_server.h"
#include "support/subprocess.h"

namespace knee {
namespace {

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "knee-compare-XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A short sweep of the built-in server written to `name` as JSON.
  void sweep(const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {KNEE_BINARY, "sweep", "-d",     "0.3s",
                                     "-w",        "0.1s",  "--json", path(name)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = testing::run_process(argv, std::chrono::seconds(120));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::filesystem::path dir_;
};

TEST_F(CompareTest, SweepsWithOneAndTwoThreadsSideBySide) {
  sweep("t1.json", {"--levels", "1,4,16", "--repeat", "2", "--threads", "1"});
  sweep("t2.json", {"--levels", "1,4,16", "--repeat", "2", "--threads", "2"});
  sweep("t2-short.json", {"--levels", "1,4,8", "--threads", "2"});

  auto text = testing::run_process({KNEE_BINARY, "report", path("t1.json"), path("t2.json")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("1 client thread,"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2 client threads,"), std::string::npos) << text.out;
  for (const char* figure : {"throughput(req/s)", "p50(ms)", "p90(ms)", "p99(ms)", "p99.9(ms)"}) {
    EXPECT_NE(text.out.find(figure), std::string::npos) << figure << "\n" << text.out;
  }

  auto js =
      testing::run_process({KNEE_BINARY, "report", path("t1.json"), path("t2.json"), "--json"});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["kind"], "comparison");
  EXPECT_EQ(j["key"], "concurrency");
  EXPECT_EQ(j["a"]["threads"], 1);
  EXPECT_EQ(j["b"]["threads"], 2);
  ASSERT_EQ(j["levels"].size(), 3u);
  const std::set<std::string> judged = {"higher", "lower", "within"};
  for (const auto& level : j["levels"]) {
    EXPECT_EQ(level["a_repeats"], 2);
    for (const char* f : {"throughput_rps", "p50_ns", "p90_ns", "p99_ns", "p999_ns"}) {
      const auto& fig = level["figures"][f];
      // Both sides have repeats: every figure gets a verdict.
      EXPECT_TRUE(judged.contains(fig["difference"].get<std::string>())) << fig;
      EXPECT_GT(fig["ratio"].get<double>(), 0) << fig;
      EXPECT_LE(fig["a"]["min"].get<double>(), fig["a"]["max"].get<double>());
    }
  }
  EXPECT_TRUE(j["only_in_a"].empty());

  // Without repeats on one side it cannot tell, and says which levels only one file has.
  auto unmatched =
      testing::run_process({KNEE_BINARY, "report", path("t1.json"), path("t2-short.json")});
  ASSERT_EQ(unmatched.exit_code, 0) << unmatched.err;
  EXPECT_NE(unmatched.out.find("cannot tell (no repeats)"), std::string::npos) << unmatched.out;
  EXPECT_NE(unmatched.out.find("only in a (" + path("t1.json") + "): concurrency 16"),
            std::string::npos)
      << unmatched.out;
  EXPECT_NE(unmatched.out.find("only in b (" + path("t2-short.json") + "): concurrency 8"),
            std::string::npos)
      << unmatched.out;
}

TEST_F(CompareTest, BadFilesAreBadInput) {
  std::ofstream(path("newer.json")) << R"({"schema_version": 99, "kind": "sweep", "levels": []})";
  std::ofstream(path("broken.json")) << "{not json";
  // A valid document of any kind: both files are read before they are compared.
  auto little =
      testing::run_process({KNEE_BINARY, "model", "little", "--n", "4", "--x", "2", "--json"});
  ASSERT_EQ(little.exit_code, 0) << little.err;
  std::ofstream(path("ok.json")) << little.out;
  for (const auto& [file, words] :
       std::vector<std::pair<std::string, std::string>>{{"newer.json", "schema_version 99"},
                                                        {"broken.json", "not valid JSON"},
                                                        {"missing.json", "cannot read"}}) {
    auto r = testing::run_process({KNEE_BINARY, "report", path("ok.json"), path(file)});
    EXPECT_EQ(r.exit_code, 2) << file;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace knee

namespace knee {
namespace {

// `knee report FILE.json` prints, byte for byte, what the sweep printed when it wrote FILE.json:
// one document, one renderer.
TEST(ReportTest, ASavedSweepReRendersAsItWasPrinted) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response(), std::chrono::milliseconds(1));
  });
  char dir[] = "/tmp/knee-rerender-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/s.json";
  auto sweep = testing::run_process({KNEE_BINARY, "sweep", server.url("/"), "--levels", "1,2,4",
                                     "-d", "0.3s", "-w", "0", "--json", file});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  auto again = testing::run_process({KNEE_BINARY, "report", file});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, sweep.out);
  std::remove(file.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace knee
