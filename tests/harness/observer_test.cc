// The target a measurement follows (harness/observer.h): a server's pid, or the stack `knee lab
// up` recorded, whose balancer becomes the server and whose replicas the backends.
#include "harness/observer.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace knee::harness {
namespace {

TEST(ResolveTarget, EachWrongCombinationNamesItsFlag) {
  testing::TempDir dir;
  const std::pair<TargetSpec, const char*> cases[] = {
      {{0, false, ""}, "--server-pid: no process 0"},
      {{std::nullopt, false, dir.path()}, "--lab-state: only with --stack"},
      {{1, true, ""}, "--server-pid and --stack"},
      {{std::nullopt, true, dir.path()}, "--stack: no lab is up in"},
  };
  for (const auto& [spec, message] : cases) {
    auto t = resolve_target(spec, dir.path());
    ASSERT_FALSE(t) << message;
    EXPECT_TRUE(t.status().message().starts_with(message)) << t.status().message();
  }
}

TEST(ResolveTarget, AServerPidIsTheServerAndNothingElse) {
  testing::TempDir dir;
  auto alone = resolve_target({}, dir.path());
  ASSERT_TRUE(alone) << alone.status().message();
  EXPECT_FALSE(alone->stack);
  EXPECT_FALSE(alone->processes.server);
  auto pid = resolve_target({static_cast<int>(::getpid()), false, ""}, dir.path());
  ASSERT_TRUE(pid) << pid.status().message();
  ASSERT_TRUE(pid->processes.server);
  EXPECT_EQ(pid->processes.server->pid, ::getpid());
  EXPECT_TRUE(pid->processes.backends.empty());
}

// The balancer is the server, each replica a backend; the database is left out (a process per
// connection: the postmaster's own CPU says nothing of theirs).
TEST(ResolveTarget, AStacksBalancerIsTheServerAndItsReplicasTheBackends) {
  testing::TempDir state;
  std::filesystem::create_directories(state.path() + "/stack");
  const int me = static_cast<int>(::getpid());  // no children: the balancer's own pid is used
  std::ofstream(state.path() + "/stack/stack.json")
      << fmt::format(R"({{"kind":"lab_stack","balance":"round_robin","parts":[)"
                     R"({{"name":"postgres","role":"db","pid":{0},"port":5432}},)"
                     R"({{"name":"app1","role":"replica","pid":{0},"port":18081}},)"
                     R"({{"name":"app2","role":"replica","pid":{0},"port":18082}},)"
                     R"({{"name":"nginx","role":"balancer","pid":{0},"port":18080}}]}})",
                     me);
  for (const TargetSpec& spec :
       {TargetSpec{std::nullopt, true, state.path()}, TargetSpec{std::nullopt, true, ""}}) {
    auto t = resolve_target(spec, state.path());  // the folder given, or the default one
    ASSERT_TRUE(t) << t.status().message();
    ASSERT_TRUE(t->stack);
    EXPECT_EQ(t->stack->parts.size(), 4u);
    ASSERT_TRUE(t->processes.server);
    EXPECT_EQ(t->processes.server->name, "nginx");
    ASSERT_EQ(t->processes.backends.size(), 2u);
    EXPECT_EQ(t->processes.backends[0].name, "app1");
    EXPECT_EQ(t->processes.backends[1].name, "app2");
  }
}

}  // namespace
}  // namespace knee::harness
