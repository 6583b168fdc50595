// `knee ladder` end to end: the real binary's JSON holds every rung with its method and context,
// a memory filesystem under --dir is warned about, and a bad --only is one clear line, exit 2.
#include <gtest/gtest.h>
#include <sys/statfs.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace knee {
namespace {

using nlohmann::json;
using testing::run_process;

json run_json(const std::vector<std::string>& args, int& exit_code) {
  std::vector<std::string> argv = {KNEE_BINARY, "ladder", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_process(argv, std::chrono::seconds(120));
  exit_code = r.exit_code;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

TEST(Ladder, UnknownGroupInOnlyExits2NamingIt) {
  const auto r = run_process({KNEE_BINARY, "ladder", "--only", "sqlite,gpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'gpu'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("inprocess,sqlite,disk,loopback,network"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(Ladder, BadRouteExits2) {
  const auto r = run_process({KNEE_BINARY, "ladder", "--only", "network", "--route", "91,0:0,0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--route"), std::string::npos) << r.err;
}

TEST(Ladder, JsonHoldsEveryRungWithItsMethodAndContext) {
  int code = -1;
  const json j = run_json({"--only", "sqlite,loopback,network"}, code);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["kind"], "ladder");
  EXPECT_TRUE(j["host"].contains("cpu_model"));
  EXPECT_TRUE(j["host"].contains("governor"));
  EXPECT_GT(j["clock"]["target_sample_ns"].get<int64_t>(), 0);
  ASSERT_EQ(j["rungs"].size(), 5u);  // 3 SQLite reads, 2 loopback
  double previous = 0;
  for (const json& r : j["rungs"]) {
    EXPECT_FALSE(r["method"].get<std::string>().empty()) << r;
    EXPECT_GE(r["median_ns"].get<double>(), previous) << "rungs sorted by median";
    previous = r["median_ns"].get<double>();
    for (const char* f : {"p99_ns", "best_ns", "ops_per_s", "batch", "samples", "rung"}) {
      EXPECT_TRUE(r.contains(f)) << f;
    }
  }
  EXPECT_EQ(j["sqlite"]["plans"]["sqlite_scan"], "SCAN users");
  EXPECT_TRUE(j["disk"].is_null());
  bool london_new_york = false;
  for (const json& route : j["network"]["routes"]) {
    if (route["name"] != "London - New York") continue;
    london_new_york = true;
    EXPECT_NEAR(route["distance_km"].get<double>(), 5570, 10);
    EXPECT_NEAR(route["vacuum_rtt_ms"].get<double>(), 37.2, 0.1);
    EXPECT_NEAR(route["fibre_rtt_ms"].get<double>(), 55.7, 0.1);
  }
  EXPECT_TRUE(london_new_york);
}

TEST(Ladder, DirOnTmpfsWarnsThatDurabilityMeansNothing) {
  struct statfs s {};
  if (::statfs("/dev/shm", &s) != 0 || s.f_type != 0x01021994) {
    GTEST_SKIP() << "/dev/shm is not tmpfs here";
  }
  int code = -1;
  const json j = run_json({"--only", "disk", "--dir", "/dev/shm"}, code);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["disk"]["fs_type"], "tmpfs");
  EXPECT_EQ(j["disk"]["memory"], true);
  ASSERT_EQ(j["rungs"].size(), 4u);
  bool warned = false;
  for (const json& w : j["warnings"]) {
    warned |= w.get<std::string>().find("tmpfs") != std::string::npos;
  }
  EXPECT_TRUE(warned) << j["warnings"];
}

}  // namespace
}  // namespace knee
