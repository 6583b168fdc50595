// The lab stack's pure parts (lab/stack.h): the spec is checked field by field, and the nginx
// configuration holds the algorithm, every replica, keep-alive upstreams and retries, with every
// path inside the state folder (tests/e2e/lab_stack_test.cc runs it under a real nginx).
#include "lab/stack.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace knee::lab {
namespace {

StackSpec spec(const std::string& balance) {
  StackSpec s;
  s.dir = "/tmp/knee-lab/stack";
  s.replicas = 2;
  s.balance = balance;
  s.port = 18080;
  return s;
}

std::vector<StackPart> replicas() {
  return {{"app1", "replica", 11, 40001, "", {}}, {"app2", "replica", 12, 40002, "", {}}};
}

TEST(NginxConfig, HoldsTheAlgorithmEveryReplicaAndTheRetries) {
  const std::string rr = nginx_config(spec("round_robin"), replicas());
  EXPECT_EQ(rr.find("least_conn;"), std::string::npos) << "round robin is nginx's default";
  EXPECT_EQ(rr.find("random;"), std::string::npos);
  for (const char* line :
       {"    server 127.0.0.1:40001 max_fails=0;\n", "    server 127.0.0.1:40002 max_fails=0;\n",
        "    keepalive 64;\n", "    listen 127.0.0.1:18080;\n", "      proxy_http_version 1.1;\n",
        "      proxy_set_header Connection \"\";\n",
        "      proxy_next_upstream error timeout http_502;\n",
        "pid /tmp/knee-lab/stack/nginx.pid;\n",
        "  proxy_temp_path /tmp/knee-lab/stack/nginx-tmp/proxy;\n", "daemon off;\n"}) {
    EXPECT_NE(rr.find(line), std::string::npos) << line << rr;
  }
  EXPECT_NE(nginx_config(spec("least_conn"), replicas()).find("    least_conn;\n"),
            std::string::npos);
  EXPECT_NE(nginx_config(spec("random"), replicas()).find("    random;\n"), std::string::npos);
}

TEST(StackSpec, NamesTheFieldOfEachBadValue) {
  StackSpec s = spec("round_robin");
  EXPECT_TRUE(s.validate());
  s.replicas = 0;
  EXPECT_EQ(s.validate().field(), "replicas");
  s = spec("weighted");
  EXPECT_EQ(s.validate().field(), "balance");
  s = spec("random");
  s.port = 70000;
  EXPECT_EQ(s.validate().field(), "port");
  s = spec("random");
  s.extra_cpu = {{"app3", "1ms"}};
  EXPECT_EQ(s.validate().field(), "replica_cost") << "only app1..app2";
  s.extra_cpu = {{"app2", "1"}};
  EXPECT_EQ(s.validate().field(), "replica_cost") << "a duration needs its unit";
  s.extra_cpu = {{"app02", "1ms"}};
  EXPECT_EQ(s.validate().field(), "replica_cost");
  s.extra_cpu = {{"app2", "1ms"}};
  EXPECT_TRUE(s.validate());
}

TEST(StackSpec, AReplicaCostAsTypedGoesIntoExtraCpuOrNamesItsForm) {
  StackSpec s = spec("round_robin");
  EXPECT_TRUE(s.add_replica_cost("app2=cpu:1ms"));
  EXPECT_TRUE(s.add_replica_cost("app1=cpu:250us"));
  EXPECT_EQ(s.extra_cpu, (std::map<std::string, std::string>{{"app1", "250us"}, {"app2", "1ms"}}));
  EXPECT_TRUE(s.validate());
  const core::Status bad = s.add_replica_cost("app2:1ms");
  EXPECT_EQ(bad.field(), "replica_cost");
  EXPECT_NE(bad.message().find("NAME=cpu:DURATION"), std::string::npos) << bad.message();
  EXPECT_EQ(s.extra_cpu.size(), 2u) << "a refused cost changes nothing";
  EXPECT_TRUE(s.add_replica_cost("app9=cpu:1ms")) << "the name is validate()'s to check";
  EXPECT_EQ(s.validate().field(), "replica_cost");
}

TEST(PartLines, SayWhereEachPartIsAndWhetherItAnswers) {
  StackPart app{"app1", "replica", 4242, 8081, "/s/app1.log", {}, 1};
  EXPECT_EQ(part_line(app),
            "app1   replica  pid 4242    http://127.0.0.1:8081/  log /s/app1.log  CPU 1");
  StackPart cache{"redis", "cache", 7, 6379, "/s/redis.log", {}, -1};
  EXPECT_EQ(part_line(cache),
            "redis  cache    pid 7       redis://127.0.0.1:6379/  log /s/redis.log");
  EXPECT_EQ(status_line({app, true, true, 12}),
            "app1   replica  pid 4242    port 8081   up, 12 requests served, CPU 1");
  EXPECT_EQ(status_line({app, false, false, -1}),
            "app1   replica  pid 4242    port 8081   DOWN, CPU 1");
  EXPECT_EQ(status_line({cache, true, false, -1}),
            "redis  cache    pid 7       port 6379   alive, not answering PING");
  StackPart db{"postgres", "db", 9, 5432, "", {}, -1};
  EXPECT_EQ(status_line({db, true, false, -1}),
            "postgres db       pid 9       port 5432   alive, not accepting connections");
}

TEST(ReadStack, SaysNoLabIsUpWhereNoneWasStarted) {
  auto s = read_stack("/tmp/knee-no-lab-here");
  ASSERT_FALSE(s);
  EXPECT_NE(s.status().message().find("no lab is up in /tmp/knee-no-lab-here"), std::string::npos);
}

// Regression (review): a stack.json of the right kind with a missing or mistyped field threw
// out of read_stack (json's type_error) or read a missing key of a const object.
TEST(ReadStack, AStackFileKneeDidNotWriteIsAnErrorNotAThrow) {
  const std::string dir = ::testing::TempDir() + "knee-stack-read";
  std::filesystem::create_directories(dir);
  for (const char* text : {R"({"kind":"lab_stack"})", R"({"kind":"lab_stack","parts":[3]})",
                           R"({"kind":"lab_stack","parts":[{"pid":"twelve"}]})",
                           R"({"kind":7,"parts":[]})", R"([1,2])", "not json"}) {
    std::ofstream(dir + "/stack.json") << text;
    auto s = read_stack(dir);
    ASSERT_FALSE(s) << text;
    EXPECT_NE(s.status().message().find("is not a lab stack knee wrote"), std::string::npos)
        << text << ": " << s.status().message();
  }
  std::filesystem::remove_all(dir);
}

// A CPU each for the balancer and every replica, and one left for the load; else none pinned.
TEST(CpuPlan, PinsEachPartWhenThereAreEnoughCpusAndNoneOtherwise) {
  EXPECT_EQ(cpu_plan({0, 1, 2, 3, 4}, 3), (std::vector<int>{1, 2, 3, 0}));
  EXPECT_EQ(cpu_plan({2, 5, 6, 7, 9, 11}, 3), (std::vector<int>{5, 6, 7, 2}))
      << "the CPUs this process may use, in order, not 0..N";
  EXPECT_EQ(cpu_plan({0, 1, 2, 3}, 3), (std::vector<int>{-1, -1, -1, -1}))
      << "4 CPUs for 3 replicas and a balancer leave none for the load";
  EXPECT_EQ(cpu_plan({0, 1}, 1), (std::vector<int>{-1, -1})) << "this 2-CPU machine";
  EXPECT_EQ(cpu_plan({0, 1, 2}, 1), (std::vector<int>{1, 0}));
}

}  // namespace
}  // namespace knee::lab
