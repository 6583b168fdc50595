// A request mix and rate stages as a user runs them against the shipment service: `knee run
// --mix` sends the seed's reads and writes in its proportions to `knee serve --state`, reports
// each endpoint apart in text and JSON, the writes land in the store, and bad mixes or stages are
// refused with exit 2 and a message naming the flag.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "net/socket.h"
#include "support/blocking_client.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee {
namespace {

using nlohmann::json;
using testing::run_process;

class ServiceMix : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run_process({KNEE_BINARY, "lab", "data", "--state", dir_.path(), "--records", "3k",
                           "--days", "2", "--sellers", "5"})
                  .exit_code,
              0);
    std::ofstream(event_file()) << R"({"no":"{shipment}","state":"in_transit","zone":"z{conn}",)"
                                << R"("step":2,"atMs":{seq}})";
    server_.emplace(
        std::vector<std::string>{KNEE_BINARY, "serve", "--state", dir_.path(), "--port", "0"});
    port_ = testing::port_of_listening_line(server_->first_line());
    ASSERT_GT(port_, 0) << server_->first_line();
  }
  void TearDown() override {
    if (server_) {
      EXPECT_EQ(server_->terminate(), 0);
    }
  }
  std::string event_file() const { return dir_.path() + "/event.json"; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  json health() {
    auto address = net::resolve("127.0.0.1", port_);
    testing::Client client(*address);
    auto r = client.get("/health");
    return r ? json::parse(r->body, nullptr, false) : json();
  }

  testing::TempDir dir_{"knee-e2e-mix"};
  std::optional<testing::BackgroundProcess> server_;
  int port_ = 0;
};

TEST_F(ServiceMix, TheSeedsMixRunsAtItsRatesWithEachEndpointReportedApart) {
  const std::string mix =
      "GET /tracking/{shipment}=416.67/s,POST /events @" + event_file() + "=97.22/s";
  const std::string out_json = dir_.path() + "/mix.json";
  auto r = run_process({KNEE_BINARY, "run", url(), "--mix", mix, "--shipments", "3k", "--zipf",
                        "1.0", "-d", "2s", "-w", "500ms", "--json", out_json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("open loop: 513.9 req/s target"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{shipment}   ids 1..3000 drawn by Zipf's law, s = 1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GET /tracking/{shipment}  81.1%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("POST /events              18.9%"), std::string::npos) << r.out;
  std::ifstream in(out_json);
  const json doc = json::parse(in);
  const json& median = doc;  // a run's figures are at the top level
  ASSERT_EQ(median["endpoints"].size(), 2u);
  const json& reads = median["endpoints"][0];
  const json& writes = median["endpoints"][1];
  EXPECT_EQ(reads["name"], "GET /tracking/{shipment}");
  EXPECT_EQ(writes["name"], "POST /events");
  // Every tracking number exists (1..3000), every event is accepted.
  EXPECT_EQ(reads["ok"], reads["sent"]) << reads.dump();
  EXPECT_EQ(writes["status"].value("201", 0), writes["sent"].get<int>()) << writes.dump();
  EXPECT_EQ(reads["sent"].get<int>() + writes["sent"].get<int>(), median["sent"].get<int>());
  // 2 s at 416.67 and 97.22 req/s, within a request of the round robin and one of rounding.
  EXPECT_NEAR(reads["sent"].get<double>(), 833.3, 3);
  EXPECT_NEAR(writes["sent"].get<double>(), 194.4, 3);
  EXPECT_NEAR(writes["throughput_rps"].get<double>(), 97.2, 5);
  // As typed, so the heading's command runs the same mix again (regression: /s and @FILE lost).
  EXPECT_EQ(doc["params"]["mix"], mix);
  EXPECT_EQ(doc["params"]["zipf"], 1.0);
  // The writes reached the store: warm-up and measured ones, all committed.
  const json h = health();
  EXPECT_GE(h["store"]["eventsCommitted"].get<int>(), writes["sent"].get<int>()) << h.dump();
  EXPECT_GT(h["cache"]["hitRatio"].get<double>(), 0.3) << "Zipf's hot shipments hit the cache";
  // The saved result renders as the run printed it.
  auto again = run_process({KNEE_BINARY, "report", out_json});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
}

TEST_F(ServiceMix, StagesRampTheMixAndTheTimelineShowsTheRamp) {
  auto r =
      run_process({KNEE_BINARY, "run", url(), "--mix", "GET /tracking/{shipment}=4,GET /health=1",
                   "--shipments", "3000", "--stages", "2s:400,2s:0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("open loop in stages 2s:400,2s:0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("200 req/s intended on average"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("800 scheduled"), std::string::npos) << r.out;
  // Second by second: 100, 300, 300, 100 req/s intended.
  for (const char* row : {"    0               100 ", "    1               300 ",
                          "    2               300 ", "    3               100 "}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  }
}

TEST_F(ServiceMix, ASweepOfTheMixReportsEveryEndpointAtEveryLevel) {
  auto r = run_process({KNEE_BINARY, "sweep", url(), "--mix",
                        "GET /tracking/{shipment}=416.67,POST /events @" + event_file() + "=97.22",
                        "--shipments", "3000", "--rate", "200,400", "-d", "1s", "-w", "200ms"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("per endpoint at each level"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  rate 200 req/s\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  rate 400 req/s\n"), std::string::npos) << r.out;
}

TEST(MixFlags, BadMixesAndStagesAreRefusedNamingTheFlag) {
  for (const auto& [args, words] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--mix", "GET /a"}, "--mix entry 'GET /a': no =WEIGHT"},
           {{"--mix", "GET /a=1,POST /b @/nonexistent.json=1"}, "cannot read '/nonexistent.json'"},
           {{"--mix", "GET /a=1", "-m", "POST"}, "each endpoint of the mix names its own method"},
           {{"--mix", "GET /{x}=1"}, "--mix: GET /{x}: unknown placeholder"},
           {{"--zipf", "0"}, "--zipf: Zipf exponent 0"},
           {{"--shipments", "0"}, "--shipments: 0 shipments"},
           {{"--stages", "10s:100", "-r", "10"}, "--stages: not with -r, -d or -n"},
           {{"--stages", "10s"}, "--stages: '10s': '10s' is not DURATION:RATE"},
           {{"--stages", "1s:100", "-w", "2s"}, "-w/--warmup: -w 2s leaves nothing"},
           {{"--stages", "1ns:100"},
            "--stages: '1ns:100' intends 5e-08 requests after the warm-up"}}) {
    std::vector<std::string> argv = {KNEE_BINARY, "run", "http://127.0.0.1:9/"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << words << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  }
  auto sweep = run_process(
      {KNEE_BINARY, "sweep", "http://127.0.0.1:9/", "--mix", "GET /a=1/s", "--levels", "1,2"});
  EXPECT_EQ(sweep.exit_code, 2);
  EXPECT_NE(sweep.err.find("--mix: rates make an open loop: use --rate RATES"), std::string::npos)
      << sweep.err;
}

}  // namespace
}  // namespace knee
