// `knee capacity`'s words on whose limit bounded the answer (report/capacity.h,
// capacity_limit_line): a search whose failing rate measured knee's client found a floor for the
// target, not its capacity.
#include "report/capacity.h"

#include <gtest/gtest.h>

#include <string>

#include "support/report_fixtures.h"

namespace knee::report {
namespace {

// The golden search (fails at 400 req/s, answer 300) with every run of the 400 req/s step
// limited by `limit`.
CapacityDocument failing_at_400(const CapacityLimit& limit) {
  CapacityDocument d = testing::golden_capacity();
  for (CapacityStepFigures& st : d.steps) {
    if (st.rate_rps != 400) continue;
    for (CapacityRepeatFigures& r : st.repeats) r.limit = limit;
  }
  return d;
}

TEST(CapacityLimitLine, AClientBoundFailingRateMakesTheAnswerAFloor) {
  const std::string line = capacity_limit_line(failing_at_400(CapacityLimit{
      "client",
      "client-bound: these numbers measure knee, not the server (busiest client thread "
      "at 97% of one core)",
      0.97}));
  EXPECT_NE(line.find("the failing rate 400 req/s measured knee's client, not the target"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("300 req/s is a floor for the target"), std::string::npos) << line;
  EXPECT_NE(line.find("-t"), std::string::npos) << line;
  // The conclusion carries it.
  EXPECT_NE(capacity_conclusion(failing_at_400(CapacityLimit{"client", "x", 0.97})).find("floor"),
            std::string::npos);
}

TEST(CapacityLimitLine, AClientThatKeptUpLeavesTheFailureToTheTarget) {
  EXPECT_EQ(capacity_limit_line(failing_at_400(CapacityLimit{"none", "nothing", 0.31})),
            "  at 400 req/s knee's client kept up (its busiest thread at 31% of a core): the "
            "failure is the target's\n");
  EXPECT_EQ(capacity_limit_line(failing_at_400(CapacityLimit{"pool", "pool of 4 exhausted", {}})),
            "  at 400 req/s knee's client kept up: the failure is the target's (pool of 4 "
            "exhausted)\n");
  EXPECT_EQ(capacity_limit_line(failing_at_400(CapacityLimit{"unreachable", "gone at 1.2 s", {}})),
            "  at 400 req/s the target stopped answering: gone at 1.2 s\n");
}

TEST(CapacityLimitLine, OnlyTheFailedRunsOfTheFailingRateSpeak) {
  CapacityDocument d = failing_at_400(CapacityLimit{"none", "nothing", 0.2});
  // A passed run beside the failed one at 400 req/s was client-bound; the failed one was not.
  for (CapacityStepFigures& st : d.steps) {
    if (st.rate_rps != 400) continue;
    CapacityRepeatFigures passed = st.repeats[0];
    passed.passed = true;
    passed.limit = CapacityLimit{"client", "busy", 0.95};
    st.repeats.insert(st.repeats.begin(), passed);
  }
  EXPECT_NE(capacity_limit_line(d).find("kept up (its busiest thread at 20%"), std::string::npos);
}

TEST(CapacityLimitLine, AnAnswerWithNoFailingRateSaysWhenTheClientWasAtItsLimit) {
  CapacityDocument d = testing::golden_capacity();
  d.steps.resize(2);  // 100 and 200 passed, the search stopped at --max-rate 200
  d.capacity_rps = 200;
  d.bracket = CapacityBracket{200, std::nullopt};
  d.reached_max = true;
  EXPECT_EQ(capacity_limit_line(d), "");
  d.steps[1].repeats[0].limit = CapacityLimit{"client", "client-bound (97%)", 0.97};
  EXPECT_EQ(capacity_limit_line(d),
            "  at 200 req/s knee's client was at its limit: client-bound (97%); the target may "
            "take more\n");
}

TEST(CapacityLimitLine, NothingWithoutJudgedRunsOrAnAnswer) {
  CapacityDocument d = testing::golden_capacity();
  for (CapacityStepFigures& st : d.steps) {
    for (CapacityRepeatFigures& r : st.repeats) r.limit.reset();  // a file from before limits
  }
  EXPECT_EQ(capacity_limit_line(d), "");
  d = failing_at_400(CapacityLimit{"client", "busy", 0.97});
  d.interrupted = true;
  EXPECT_EQ(capacity_limit_line(d), "");
}

}  // namespace
}  // namespace knee::report
