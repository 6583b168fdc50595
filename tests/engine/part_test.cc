// A load split into parts (engine::part_of: --part, MPI ranks): shares add up to the whole, the
// {conn} numbers stay unique across parts, and in open loop the parts together send the one
// schedule of the whole load.
#include <gtest/gtest.h>

#include <set>

#include "engine/load.h"
#include "engine/plan.h"
#include "engine/schedule.h"
#include "http/url.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using testing::Action;
using testing::ScriptedServer;

LoadOptions closed(int connections) {
  LoadOptions o;
  o.request.url = *http::parse_url("http://127.0.0.1:1/");
  o.connections = connections;
  o.threads = 2;
  return o;
}

TEST(PartOf, ClosedLoopSharesSpreadTheRemainderAndNumberConnectionsOnce) {
  const LoadOptions whole = closed(10);
  std::vector<int> shares;
  std::vector<uint64_t> firsts;
  for (int i = 0; i < 4; ++i) {
    auto p = part_of(whole, i, 4);
    ASSERT_TRUE(p) << p.status().what();
    EXPECT_TRUE(p->validate()) << i;
    shares.push_back(p->connections);
    firsts.push_back(p->share.first_connection);
    EXPECT_EQ(p->share.index, i);
    EXPECT_EQ(p->share.count, 4);
  }
  EXPECT_EQ(shares, (std::vector<int>{3, 3, 2, 2}));
  EXPECT_EQ(firsts, (std::vector<uint64_t>{0, 3, 6, 8}));
}

TEST(PartOf, RequestsSplitAndEmptySharesAreRefused) {
  LoadOptions whole = closed(8);
  whole.requests = 10;
  EXPECT_EQ(part_of(whole, 0, 4)->requests, 3u);
  EXPECT_EQ(part_of(whole, 3, 4)->requests, 2u);
  for (auto [index, count] : {std::pair{0, 0}, {4, 4}, {-1, 2}}) {
    auto bad = part_of(whole, index, count);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.status().field(), "part");
  }
  auto few = part_of(closed(3), 0, 4);
  ASSERT_FALSE(few);
  EXPECT_NE(few.status().message().find("3 connections cannot be split over 4"), std::string::npos);
}

TEST(PartOf, OpenLoopKeepsTheWholeScheduleAndSharesTheTarget) {
  LoadOptions whole = closed(1);
  whole.rate_rps = 1000;
  whole.max_connections = 20;
  auto p = part_of(whole, 1, 2);
  ASSERT_TRUE(p) << p.status().what();
  EXPECT_EQ(*p->rate_rps, 1000);  // the schedule is the whole load's
  EXPECT_EQ(p->max_connections, 10);
  EXPECT_EQ(p->share.first_connection, 10u);
  // Thread t of part i takes global turn i * threads + t: together, the whole sequence.
  std::set<int64_t> together, alone;
  for (int part = 0; part < 2; ++part) {
    for (int t = 0; t < 2; ++t) {
      ArrivalSchedule s(Arrival::kPoisson, 1000, 7, part * 2 + t, 4);
      for (int k = 0; k < 50; ++k, s.advance()) together.insert(s.next_ns());
    }
  }
  for (int t = 0; t < 4; ++t) {
    ArrivalSchedule s(Arrival::kPoisson, 1000, 7, t, 4);
    for (int k = 0; k < 50; ++k, s.advance()) alone.insert(s.next_ns());
  }
  EXPECT_EQ(together, alone);
}

TEST(PartOf, PartsTogetherSendUniqueConnectionNumbers) {
  ScriptedServer server(
      [](int, int, const std::string&) { return Action::respond(testing::ok_response()); });
  LoadOptions whole;
  whole.request.url = *http::parse_url(server.url("/c{conn}"));
  whole.connections = 5;
  whole.duration = 100ms;
  whole.warmup = 0ms;
  whole.timeout = 2s;
  uint64_t sent = 0;
  for (int i = 0; i < 2; ++i) {
    auto p = part_of(whole, i, 2);
    ASSERT_TRUE(p);
    auto r = run_load(*p);
    ASSERT_TRUE(r) << r.status().what();
    EXPECT_EQ(r->connections, i == 0 ? 3 : 2);
    sent += r->stats.sent + r->stats.warmup.sent;
  }
  const std::vector<std::string> targets = server.targets();
  EXPECT_EQ(targets.size(), sent);
  const std::set<std::string> numbers(targets.begin(), targets.end());
  EXPECT_EQ(numbers, (std::set<std::string>{"/c0", "/c1", "/c2", "/c3", "/c4"}));
}

TEST(AimPlan, EveryLoadOfEveryLevelGoesToTheNewUrl) {
  Plan plan;
  plan.levels = {{closed(1), closed(1)}, {closed(2), closed(2)}};
  plan.levels[1][1].tls.verify = false;  // -k given already stays
  aim_plan(plan, *http::parse_url("https://127.0.0.1:4433/t?no={seq}"), /*verify_tls=*/true);
  for (const auto& level : plan.levels) {
    for (const LoadOptions& o : level) {
      EXPECT_EQ(o.request.url.port, 4433);
      EXPECT_EQ(o.request.url.target, "/t?no={seq}");
    }
  }
  EXPECT_TRUE(plan.levels[0][0].tls.verify);
  EXPECT_FALSE(plan.levels[1][1].tls.verify);
  aim_plan(plan, *http::parse_url("https://127.0.0.1:4434/"), /*verify_tls=*/false);
  EXPECT_FALSE(plan.levels[0][0].tls.verify);
  EXPECT_EQ(plan.levels[1][0].request.url.port, 4434);
}

}  // namespace
}  // namespace knee::engine
