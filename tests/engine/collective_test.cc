// engine::run_plan_together with a scripted group: what the other ranks say before each run (and
// after the plan) stops this rank's plan as a failure or an interruption, and the levels kept are
// the ones every rank finished.
#include "engine/collective.h"

#include <gtest/gtest.h>

#include <deque>

#include "http/url.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using testing::Action;
using testing::ScriptedServer;

// Rank 0 of a group whose other ranks answer agree() from a script ("" = all can go on), and
// whose least level count is `least_levels` (-1: this rank's own).
class ScriptedGroup final : public Collective {
 public:
  ScriptedGroup(std::deque<std::string> answers, int64_t least_levels)
      : answers_(std::move(answers)), least_(least_levels) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string host() const override { return "here"; }
  core::Result<std::string> agree(const std::string& failure) override {
    said.push_back(failure);
    std::string other = answers_.empty() ? "" : answers_.front();
    if (!answers_.empty()) answers_.pop_front();
    if (!failure.empty()) return "rank 0 on host here: " + failure;  // the lowest rank's first
    return other;
  }
  core::Result<std::vector<std::string>> gather(const std::string& mine) override {
    return std::vector<std::string>{mine, ""};
  }
  core::Result<int64_t> min_all(int64_t mine) override { return least_ < 0 ? mine : least_; }
  core::Result<std::vector<ClockOffset>> clock_offsets() override {
    return std::vector<ClockOffset>(2);
  }
  std::vector<std::string> said;

 private:
  std::deque<std::string> answers_;
  int64_t least_;
};

Plan three_levels(const std::string& url) {
  Plan plan;
  for (int c : {1, 2, 3}) {
    LoadOptions o;
    o.request.url = *http::parse_url(url);
    o.connections = c;
    o.duration = 50ms;
    o.warmup = 0ms;
    o.timeout = 1s;
    plan.levels.push_back({o});
  }
  return plan;
}

TEST(RunPlanTogether, AllGoOnAndAgreeOnceMoreAtTheEnd) {
  ScriptedServer server(ScriptedServer::always_ok());
  ScriptedGroup group({}, -1);
  PlanResult r = run_plan_together(three_levels(server.url("/")), {}, group);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.levels.size(), 3u);
  EXPECT_EQ(group.said.size(), 4u);  // before each of 3 runs, then the last word
}

TEST(RunPlanTogether, AnotherRanksFailureStopsThisOneNamingIt) {
  ScriptedServer server(ScriptedServer::always_ok());
  ScriptedGroup group({"", "", "rank 1 on host b: cannot reach http://x/"}, -1);
  PlanResult r = run_plan_together(three_levels(server.url("/")), {}, group);
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.failed->what(), "rank 1 on host b: cannot reach http://x/");
  EXPECT_EQ(r.levels.size(), 2u);    // the levels before it
  EXPECT_EQ(group.said.size(), 3u);  // no last word after the others' stop: they said theirs
}

TEST(RunPlanTogether, ThisRanksFailureIsItsLastWord) {
  int port;
  {
    ScriptedServer gone(ScriptedServer::always_ok());
    port = gone.port();
  }
  ScriptedGroup group({}, -1);
  PlanResult r =
      run_plan_together(three_levels("http://127.0.0.1:" + std::to_string(port) + "/"), {}, group);
  ASSERT_TRUE(r.failed);
  EXPECT_NE(r.failed->what().find("rank 0 on host here:"), std::string::npos) << r.failed->what();
  ASSERT_EQ(group.said.size(), 2u);  // before the first run, then its failure
  EXPECT_FALSE(group.said[1].empty());
}

TEST(RunPlanTogether, AnInterruptionElsewhereIsAnInterruptionHere) {
  ScriptedServer server(ScriptedServer::always_ok());
  ScriptedGroup group({"", "rank 1 on host b: interrupted by a signal"}, -1);
  PlanResult r = run_plan_together(three_levels(server.url("/")), {}, group);
  EXPECT_FALSE(r.failed) << r.failed->what();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.levels.size(), 1u);
}

TEST(RunPlanTogether, KeepsOnlyTheLevelsEveryRankFinished) {
  ScriptedServer server(ScriptedServer::always_ok());
  ScriptedGroup group({}, 2);  // another rank finished two
  PlanResult r = run_plan_together(three_levels(server.url("/")), {}, group);
  EXPECT_EQ(r.levels.size(), 2u);
}

}  // namespace
}  // namespace knee::engine
