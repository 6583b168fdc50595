// `knee sweep` with no URL, as `make run` runs it (shorter phases): seven levels against the
// built-in lab server (wait 3 ms, CPU 0.2 ms, one thread), with Little's law, the median floor and
// a knee.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/subprocess.h"

namespace knee {
namespace {

TEST(Sweep, BuiltInServerSevenLevelsHoldLittlesLawAndShowAKnee) {
  // The default phases (2 s after 1 s of warm-up per level), as `make run` measures: shorter
  // levels leave the p99 step at the knee too close to the rule's 1.5x to be marked every time.
  auto r = testing::run_process({KNEE_BINARY, "sweep", "--json", "-"}, std::chrono::seconds(240));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["levels"].size(), 7u);
  const std::vector<int> expected_levels = {1, 2, 4, 8, 16, 32, 64};
  for (size_t i = 0; i < 7; ++i) {
    const auto& level = j["levels"][i];
    EXPECT_EQ(level["concurrency"], expected_levels[i]);
    EXPECT_EQ(level["errors"]["timeout"], 0);
    // Little's law: X * mean R within 5% of N at every level.
    double n_eff = level["little"]["x_times_mean_r"];
    EXPECT_NEAR(n_eff / expected_levels[i], 1.0, 0.05) << "level " << expected_levels[i];
  }
  // The server waits 3 ms and burns 0.2 ms of CPU per request: no response can be faster.
  EXPECT_GE(j["levels"][0]["latency_ns"]["p50"].get<double>(), 3.2e6);
  EXPECT_GE(j["levels"][0]["latency_ns"]["min"].get<double>(), 3.2e6);
  // One thread at 0.2 ms of CPU per request cannot exceed 5,000 req/s.
  for (const auto& level : j["levels"]) EXPECT_LT(level["throughput_rps"].get<double>(), 5000.0);
  EXPECT_FALSE(j["knee"]["concurrency"].is_null()) << j["knee"]["summary"];
  EXPECT_NE(j["knee"]["concurrency"], 64) << "the last level is never the knee";
  EXPECT_FALSE(j["host"]["cpu_model"].get<std::string>().empty());
}

TEST(Sweep, TablePrintsOneRowPerLevelAndTheKneeRule) {
  auto r =
      testing::run_process({KNEE_BINARY, "sweep", "--levels", "1,8,64", "-d", "0.5s", "-w", "0.2s"},
                           std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("concurrency"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("X*meanR"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rule:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("built-in lab server"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace knee
