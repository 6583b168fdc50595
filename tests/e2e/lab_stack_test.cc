// The lab stack as a user runs it (lab/stack.h): `knee lab up` starts replicas behind a real
// nginx on loopback, round robin spreads requests evenly, `knee lab status` notices a killed
// replica, `knee lab down` leaves no process behind, and a part that cannot start stops the rest.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "net/socket.h"
#include "support/blocking_client.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee {
namespace {

using nlohmann::json;
using testing::run_process;

// Alive and not a zombie (the parts' parent, knee lab up, is gone; pid 1 reaps them).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// Every running process whose command line (NUL-separated arguments) `matches`.
std::vector<pid_t> processes_where(const std::function<bool(const std::string&)>& matches) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (matches(cmdline) && alive(std::stoi(name))) out.push_back(std::stoi(name));
  }
  return out;
}

// Every running `knee serve ... --instance` this binary started: lab replicas.
std::vector<pid_t> lab_replicas() {
  return processes_where([](const std::string& cmdline) {
    return cmdline.starts_with(std::string(KNEE_BINARY) + '\0' + "serve") &&
           cmdline.find(std::string("--instance") + '\0' + "app") != std::string::npos;
  });
}

// Every running process whose command line is exactly `argv`.
std::vector<pid_t> processes_running(const std::vector<std::string>& argv) {
  std::string wanted;
  for (const std::string& a : argv) wanted += a + '\0';
  return processes_where([&](const std::string& cmdline) { return cmdline == wanted; });
}

class LabStack : public ::testing::Test {
 protected:
  void TearDown() override {
    // Whatever a failed test left running.
    run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()});
  }
  testing::ProcessResult up(std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        KNEE_BINARY, "lab", "up", "--state", dir_.path(), "--port", std::to_string(port_)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv);
  }
  json stack() {
    std::ifstream in(dir_.path() + "/stack/stack.json");
    return json::parse(in, nullptr, false);
  }
  long long requests_of(int port) {
    auto address = net::resolve("127.0.0.1", port);
    testing::Client client(*address);
    auto r = client.get("/health");
    if (!r) return -1;
    return json::parse(r->body, nullptr, false).value("totalRequests", -1LL);
  }

  testing::TempDir dir_{"knee-e2e-stack"};
  int port_ = testing::free_loopback_port();
};

TEST_F(LabStack, RoundRobinSpreadsRequestsEvenlyAndDownLeavesNothing) {
  auto r = up({"--replicas", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("lab up: http://127.0.0.1:" + std::to_string(port_) + "/ (3 replicas"),
            std::string::npos)
      << r.out;
  const json s = stack();
  ASSERT_EQ(s["parts"].size(), 4u) << s.dump();
  std::vector<int> ports;
  std::vector<pid_t> pids;
  for (const json& p : s["parts"]) {
    pids.push_back(p["pid"]);
    if (p["role"] == "replica") ports.push_back(p["port"]);
  }
  EXPECT_EQ(s["parts"][3]["name"], "nginx");
  std::vector<long long> before;
  for (int p : ports) before.push_back(requests_of(p));

  // 300 requests through the balancer, on one keep-alive connection.
  auto address = net::resolve("127.0.0.1", port_);
  ASSERT_TRUE(address);
  testing::Client client(*address);
  for (int i = 0; i < 300; ++i) {
    auto resp = client.get("/fast");
    ASSERT_TRUE(resp) << i;
    ASSERT_EQ(resp->status, 200) << i;
  }
  for (size_t i = 0; i < ports.size(); ++i) {
    EXPECT_EQ(requests_of(ports[i]) - before[i], 100 + 1) << "app" << i + 1 << ": its share and "
                                                          << "this /health";
  }
  auto status = run_process({KNEE_BINARY, "lab", "status", "--state", dir_.path()});
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_NE(status.out.find("app2   replica"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("requests served"), std::string::npos) << status.out;

  // Regression: a relative --state reached nginx as a path relative to its prefix (-p), which
  // is the state folder itself, so it found neither its configuration nor its log.
  auto relative = run_process(
      {KNEE_BINARY, "lab", "status", "--state", std::filesystem::relative(dir_.path()).string()});
  EXPECT_EQ(relative.exit_code, 0) << relative.err;

  auto again = up({"--replicas", "2"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("a lab is already up"), std::string::npos) << again.err;

  auto down = run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()});
  EXPECT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.out.find("4 parts stopped"), std::string::npos) << down.out;
  for (pid_t pid : pids) EXPECT_FALSE(alive(pid)) << pid;
  EXPECT_TRUE(lab_replicas().empty());
  // Regression: with no lab up, status and down exited 2 as if their flags were wrong; status
  // says so and exits 1 (not everything is up), down has nothing to stop and exits 0.
  auto gone = run_process({KNEE_BINARY, "lab", "status", "--state", dir_.path()});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.out.find("no lab is up"), std::string::npos) << gone.out;
  auto again_down = run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()});
  EXPECT_EQ(again_down.exit_code, 0) << again_down.err;
  EXPECT_NE(again_down.out.find("nothing to stop"), std::string::npos) << again_down.out;
}

TEST_F(LabStack, StatusNoticesAKilledReplicaAndDownStillCleansUp) {
  // From a relative state folder (regression, as above).
  auto r = run_process({KNEE_BINARY, "lab", "up", "--state",
                        std::filesystem::relative(dir_.path()).string(), "--port",
                        std::to_string(port_), "--replicas", "2", "--balance", "least_conn"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json s = stack();
  const pid_t app1 = s["parts"][0]["pid"];
  ::kill(app1, SIGKILL);
  for (int i = 0; i < 100 && alive(app1); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // The balancer routes around it: requests still succeed.
  auto address = net::resolve("127.0.0.1", port_);
  testing::Client client(*address);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(client.get("/fast")->status, 200) << i;
  auto status = run_process({KNEE_BINARY, "lab", "status", "--state", dir_.path()});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.out.find("app1   replica  pid " + std::to_string(app1)), std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("DOWN"), std::string::npos) << status.out;
  EXPECT_EQ(run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()}).exit_code, 0);
  EXPECT_TRUE(lab_replicas().empty());
}

// Seed 002's lesson 3: a slow node gets its equal share under round robin, and far less under
// least_conn, which sends each request where the fewest are in flight.
// With --stack the run's report follows the balancer and each replica: requests per node from
// their /health, CPU per process, and the verdict names the replica that saturated.
TEST_F(LabStack, LeastConnSendsTheSlowReplicaLessThanRoundRobinDoes) {
  std::map<std::string, std::vector<long long>> served;
  std::map<std::string, json> level;
  for (const char* balance : {"round_robin", "least_conn"}) {
    auto r = up({"--replicas", "2", "--balance", balance, "--replica-cost", "app2=cpu:2ms"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string out = dir_.path() + "/" + balance + ".json";
    auto run = run_process({KNEE_BINARY, "run",
                            "http://127.0.0.1:" + std::to_string(port_) + "/fast", "-c", "8", "-d",
                            "1s", "-w", "0", "--stack", "--lab-state", dir_.path(), "--json", out});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const json s = stack();
    for (size_t i = 0; i < 2; ++i) served[balance].push_back(requests_of(s["parts"][i]["port"]));
    std::ifstream in(out);
    level[balance] = json::parse(in, nullptr, false);  // a run's figures are top-level
    ASSERT_EQ(run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()}).exit_code, 0);
  }
  const auto& rr = served["round_robin"];
  const auto& lc = served["least_conn"];
  EXPECT_NEAR(static_cast<double>(rr[0]), static_cast<double>(rr[1]), 2.0) << "equal counts";
  EXPECT_LT(lc[1] * 3, lc[0]) << "app2 (2 ms per request) got " << lc[1] << " of " << lc[0] + lc[1];

  for (const auto& [balance, l] : level) {
    SCOPED_TRACE(balance);
    ASSERT_TRUE(l.is_object()) << "no JSON report";
    const json& resources = l["resources"];
    EXPECT_EQ(resources["server"].value("name", ""), "nginx") << resources.dump();
    ASSERT_EQ(resources["backends"].size(), 2u) << resources.dump();
    double total = 0;
    for (const json& b : resources["backends"]) {
      ASSERT_TRUE(b.contains("requests")) << b.dump();
      total += b["requests"].get<double>();
    }
    // The replicas' books against the client's: /health is read just after the measured phase
    // starts and just after it ends, so a few requests in flight at either edge may fall apart.
    const double ok = l["ok"].get<double>();
    EXPECT_NEAR(total, ok, 0.02 * ok + 16) << resources.dump();
  }
  // Round robin: app2's CPU, at 2 ms per request, is what saturated, and the verdict says so.
  const json& verdict = level["round_robin"]["saturated"];
  EXPECT_EQ(verdict.value("resource", ""), "cpu") << verdict.dump();
  EXPECT_TRUE(verdict.value("detail", "").starts_with("app2")) << verdict.dump();
  const json& rr_backends = level["round_robin"]["resources"]["backends"];
  EXPECT_NEAR(rr_backends[0]["requests"].get<double>(), rr_backends[1]["requests"].get<double>(),
              16.0)
      << "balanced counts in the report too";
}

// Issue 14's scale-out: the same sweep through the balancer with 1 and then 3 replicas (each
// burning 1 ms of CPU per request). One replica saturates its core and is named; three share
// the host's CPUs, which then saturate together, and the curve's ceiling rises. The top level
// is 64, not 16: at 16 a replica that drains its few queued requests sits idle while nginx and
// the client, queued behind the other replicas on the shared CPUs, forward the next ones, and a
// CI host showed the CPUs only 86-87 % busy there (95-97 % here); 64 in flight keep every
// replica's queue full through that round trip (99-100 % here).
TEST_F(LabStack, ASweepThroughMoreReplicasRaisesTheCeilingAndNamesWhatSaturated) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 CPUs";
  std::map<int, json> sweeps;
  for (int replicas : {1, 3}) {
    std::vector<std::string> argv = {"--replicas", std::to_string(replicas)};
    for (int i = 1; i <= replicas; ++i) {
      argv.insert(argv.end(), {"--replica-cost", "app" + std::to_string(i) + "=cpu:1ms"});
    }
    auto r = up(argv);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string out = dir_.path() + "/sweep" + std::to_string(replicas) + ".json";
    auto sweep =
        run_process({KNEE_BINARY, "sweep", "http://127.0.0.1:" + std::to_string(port_) + "/fast",
                     "--levels", "1,4,64", "-d", "1s", "-w", "200ms", "--stack", "--lab-state",
                     dir_.path(), "--json", out});
    EXPECT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
    EXPECT_NE(sweep.out.find("per process at each level"), std::string::npos) << sweep.out;
    std::ifstream in(out);
    sweeps[replicas] = json::parse(in, nullptr, false);
    ASSERT_EQ(run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()}).exit_code, 0);
  }
  auto ceiling = [](const json& doc) {
    double best = 0;
    for (const json& l : doc["levels"]) best = std::max(best, l["throughput_rps"].get<double>());
    return best;
  };
  ASSERT_TRUE(sweeps[1].is_object() && sweeps[3].is_object());
  EXPECT_GT(ceiling(sweeps[3]), 1.3 * ceiling(sweeps[1]))
      << ceiling(sweeps[1]) << " req/s with 1 replica, " << ceiling(sweeps[3]) << " with 3";
  const json& one = sweeps[1]["levels"].back()["saturated"];
  EXPECT_EQ(one.value("resource", ""), "cpu") << one.dump();
  EXPECT_TRUE(one.value("detail", "").starts_with("app1")) << one.dump();
  const json& three = sweeps[3]["levels"].back();
  EXPECT_EQ(three["saturated"].value("resource", ""), "cpu") << three["saturated"].dump();
  EXPECT_EQ(three["resources"]["backends"].size(), 3u);
  ASSERT_TRUE(sweeps[3]["service_demand"].is_object()) << sweeps[3].dump();
  EXPECT_TRUE(sweeps[3]["service_demand"].contains("total_cpu_bound_rps"));
}

// The load's result while `knee lab deploy MODE` replaces both replicas mid-run.
json run_through_deploy(const std::string& state, int port, const std::string& mode) {
  const std::string out = state + "/deploy-run.json";
  testing::ProcessResult run;
  std::thread load([&] {
    run = run_process({KNEE_BINARY, "run", "http://127.0.0.1:" + std::to_string(port) + "/fast",
                       "-c", "4", "-d", "3s", "-w", "0", "--timeline", "--json", out});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  auto deploy =
      run_process({KNEE_BINARY, "lab", "deploy", "--state", state, mode, "--pause", "300ms"});
  load.join();
  EXPECT_EQ(deploy.exit_code, 0) << deploy.out << deploy.err;
  EXPECT_NE(deploy.out.find("2 replicas replaced"), std::string::npos) << deploy.out;
  std::ifstream in(out);
  return json::parse(in, nullptr, false);
}

uint64_t total_errors(const json& run) {
  uint64_t n = 0;
  for (const auto& [kind, count] : run["errors"].items()) n += count.get<uint64_t>();
  return n;
}

TEST_F(LabStack, AGracefulRollingDeployFailsNoRequest) {
  ASSERT_EQ(up({"--replicas", "2"}).exit_code, 0);
  const std::vector<pid_t> before = {stack()["parts"][0]["pid"], stack()["parts"][1]["pid"]};
  const json run = run_through_deploy(dir_.path(), port_, "--graceful");
  ASSERT_TRUE(run.is_object());
  EXPECT_EQ(total_errors(run), 0u) << run["errors"].dump() << run["error_causes"].dump();
  EXPECT_EQ(run["ok"], run["sent"]);
  EXPECT_GT(run["ok"].get<int>(), 100);
  // Both replicas are new processes, the old ones gone.
  const json s = stack();
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NE(s["parts"][i]["pid"].get<pid_t>(), before[i]);
    EXPECT_FALSE(alive(before[i]));
  }
}

TEST_F(LabStack, AnAbruptDeployWithoutRetriesShowsItsBurstOfErrorsInTheTimeline) {
  ASSERT_EQ(up({"--replicas", "2", "--next-upstream", "off"}).exit_code, 0);
  const json run = run_through_deploy(dir_.path(), port_, "--abrupt");
  ASSERT_TRUE(run.is_object());
  const uint64_t errors = total_errors(run);
  EXPECT_GT(errors, 0u) << "requests in flight on a killed replica, not retried";
  uint64_t in_timeline = 0;
  for (const json& i : run["intervals"]) in_timeline += i.value("errors", uint64_t{0});
  EXPECT_EQ(in_timeline, errors) << "the timeline places every error in its second";
  EXPECT_EQ(run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()}).exit_code, 0);
  EXPECT_TRUE(lab_replicas().empty());
}

// Ctrl-C while the stack comes up: knee lab up stops what it started and exits 130. The
// "balancer" here never answers (sleep(1) under the name nginx, which knee lab checks before
// it signals a part), so the interrupt lands, every time, after the replicas are up and while
// it waits for the balancer.
TEST_F(LabStack, AnInterruptedUpStopsEveryPartItStarted) {
  std::filesystem::create_directories(dir_.path() + "/fake");
  const std::string sleeper = dir_.path() + "/fake/nginx";
  std::filesystem::copy_file("/bin/sleep", sleeper);
  const std::string fake = dir_.path() + "/nginx-never-answers";
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\nexec " << sleeper << " 29.5\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  testing::BackgroundProcess up({KNEE_BINARY, "lab", "up", "--state", dir_.path(), "--port",
                                 std::to_string(port_), "--replicas", "2", "--nginx", fake});
  EXPECT_NE(up.first_line().find("lab up: starting 2 replicas"), std::string::npos)
      << up.first_line();
  for (int i = 0; i < 500 && processes_running({sleeper, "29.5"}).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(processes_running({sleeper, "29.5"}).empty()) << "the balancer never started";
  EXPECT_EQ(lab_replicas().size(), 2u) << "both replicas up before the balancer";
  EXPECT_EQ(up.terminate(std::chrono::seconds(20), SIGINT), 130);
  EXPECT_TRUE(lab_replicas().empty());
  EXPECT_TRUE(processes_running({sleeper, "29.5"}).empty());
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/stack/stack.json"))
      << "nothing is up, so nothing is recorded";
}

// Seed 002's stack with its cache: a redis-server started beside the replicas, which all cache
// tracking reads in it, so a shipment one replica read is a hit on the other; knee run --stack
// follows redis too, and knee lab down stops it.
TEST_F(LabStack, ACacheRedisIsSharedByTheReplicasAndStoppedByDown) {
  ASSERT_EQ(run_process({KNEE_BINARY, "lab", "data", "--state", dir_.path(), "--records", "2k",
                         "--days", "2", "--sellers", "5"})
                .exit_code,
            0);
  auto r = up({"--replicas", "2", "--db", "sqlite", "--cache", "redis"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json s = stack();
  ASSERT_EQ(s["parts"].size(), 4u) << s.dump();
  EXPECT_EQ(s["parts"][0]["role"], "cache");
  const pid_t redis = s["parts"][0]["pid"];
  EXPECT_TRUE(alive(redis));
  const std::string out = dir_.path() + "/cached.json";
  auto run = run_process({KNEE_BINARY, "run",
                          "http://127.0.0.1:" + std::to_string(port_) + "/tracking/{shipment}",
                          "--shipments", "2000", "-c", "4", "-d", "1s", "-w", "0", "--stack",
                          "--lab-state", dir_.path(), "--json", out});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  std::ifstream in(out);
  const json doc = json::parse(in, nullptr, false);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["ok"], doc["requests"]) << "every tracking read answered";
  const json& backends = doc["resources"]["backends"];
  ASSERT_EQ(backends.size(), 3u) << backends.dump();
  EXPECT_EQ(backends[0]["name"], "redis");
  EXPECT_FALSE(backends[0].contains("requests")) << "redis has no /health";
  // Both replicas cache in the one Redis: each has hits, and their misses together are at most
  // the shipments there are (a shipment one replica missed is a hit on the other).
  long long hits = 0, misses = 0;
  for (size_t i = 1; i <= 2; ++i) {
    const json h = json::parse(
        testing::Client(*net::resolve("127.0.0.1", s["parts"][i]["port"])).get("/health")->body,
        nullptr, false);
    EXPECT_EQ(h["cache"]["kind"], "redis") << h.dump();
    EXPECT_GT(h["cache"]["hits"].get<long long>(), 0) << h.dump();
    hits += h["cache"]["hits"].get<long long>();
    misses += h["cache"]["misses"].get<long long>();
  }
  EXPECT_LE(misses, 2000 + 4) << hits << " hits";
  auto status = run_process({KNEE_BINARY, "lab", "status", "--state", dir_.path()});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_NE(status.out.find("redis  cache"), std::string::npos) << status.out;
  EXPECT_EQ(run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()}).exit_code, 0);
  EXPECT_FALSE(alive(redis));
  EXPECT_TRUE(lab_replicas().empty());
}

// The whole of seed 002's stack: PostgreSQL and Redis started by knee lab up in its state
// folder, the data set loaded into PostgreSQL, the replicas serving it behind nginx; knee lab
// down stops all five parts.
TEST_F(LabStack, ADatabaseAndACacheOfItsOwnServeTheReplicasAndStopWithThem) {
  // PostgreSQL runs as the user postgres when the test runs as root: it must enter the folder.
  std::filesystem::permissions(
      dir_.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                       std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                       std::filesystem::perms::others_exec);
  auto r = up({"--replicas", "2", "--db", "postgres", "--records", "2k", "--cache", "redis"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json s = stack();
  ASSERT_EQ(s["parts"].size(), 5u) << s.dump();
  EXPECT_EQ(s["parts"][0]["name"], "redis");
  EXPECT_EQ(s["parts"][1]["name"], "postgres");
  EXPECT_EQ(s["parts"][1]["role"], "db");
  const pid_t postmaster = s["parts"][1]["pid"];
  EXPECT_TRUE(alive(postmaster));
  auto run = run_process({KNEE_BINARY, "run",
                          "http://127.0.0.1:" + std::to_string(port_) + "/tracking/{shipment}",
                          "--shipments", "2000", "-c", "4", "-d", "1s", "-w", "0", "--json",
                          dir_.path() + "/pg.json"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  std::ifstream in(dir_.path() + "/pg.json");
  const json doc = json::parse(in, nullptr, false);
  ASSERT_TRUE(doc.is_object());
  EXPECT_GT(doc["ok"].get<long long>(), 100);
  EXPECT_EQ(doc["ok"], doc["requests"]) << "every tracking read found its shipment";
  const json h = json::parse(
      testing::Client(*net::resolve("127.0.0.1", s["parts"][2]["port"])).get("/health")->body,
      nullptr, false);
  EXPECT_EQ(h["store"]["kind"], "postgresql") << h.dump();
  auto status = run_process({KNEE_BINARY, "lab", "status", "--state", dir_.path()});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_NE(status.out.find("postgres db"), std::string::npos) << status.out;
  EXPECT_EQ(run_process({KNEE_BINARY, "lab", "down", "--state", dir_.path()}).exit_code, 0);
  EXPECT_FALSE(alive(postmaster));
  EXPECT_TRUE(lab_replicas().empty());
}

// As root, PostgreSQL runs as the user postgres: a state folder it cannot enter is refused
// before anything starts, with the way out.
TEST_F(LabStack, ADatabaseInAFolderThePostgresUserCannotEnterIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only as root";
  std::filesystem::permissions(dir_.path(), std::filesystem::perms::owner_all);
  auto r = up({"--db", "postgres", "--records", "1k"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--db: postgres: as root"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("give --state outside it"), std::string::npos) << r.err;
  EXPECT_TRUE(lab_replicas().empty());
}

TEST_F(LabStack, ABalancerThatCannotStartStopsTheReplicasAndSaysWhy) {
  // The balancer's port is taken.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port_));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  auto r = up({"--replicas", "2"});
  ::close(fd);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nginx"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Address already in use"), std::string::npos) << r.err;
  EXPECT_TRUE(lab_replicas().empty()) << "the replicas started before it were stopped";
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/stack/stack.json"));
}

TEST(LabStackFlags, BadValuesAreRefusedNamingTheFlag) {
  for (const auto& [args, words] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--balance", "fastest"}, "--balance"},
           {{"--replicas", "0"}, "--replicas: 0 replicas; give 1 to 32"},
           {{"--lb", "haproxy"}, "--lb"},
           {{"--db", "sqlite", "--state", "/tmp/knee-no-such-lab"}, "no data set in"},
           {{"--cache", "redis", "--state", "/tmp/knee-no-such-lab"},
            "--cache: only with the shipment service's data (--db sqlite)"},
           {{"--cache", "memcached"}, "--cache"}}) {
    std::vector<std::string> argv = {KNEE_BINARY, "lab", "up"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << words << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace knee
