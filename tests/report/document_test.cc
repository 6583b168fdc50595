// The result documents (report/document.h): every golden and fixture file reads back into the
// document that writes it again, saved results re-render byte for byte as they were printed,
// every kind carries schema_version and kind, and what cannot be read is refused in one line.
#include "report/document.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "report/analyse.h"
#include "report/queueing.h"
#include "report/render.h"
#include "support/report_fixtures.h"

namespace knee::report {
namespace {

using nlohmann::json;

const std::string kGolden = KNEE_GOLDEN_DIR;
const std::string kFixtures = KNEE_GOLDEN_DIR "/../fixtures";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Document read(const std::string& path) {
  auto doc = parse_document(read_file(path), path);
  EXPECT_TRUE(doc) << doc.status().message();
  return doc ? std::move(doc).value() : Document(LatencyReportDocument{});
}

TEST(Document, EveryGoldenAndFixtureFileReadsBackIntoTheSameDocument) {
  for (const std::string& path :
       {kGolden + "/run.json", kGolden + "/open_run.json", kGolden + "/sweep.json",
        kGolden + "/compare.json", kFixtures + "/run.json", kFixtures + "/sweep.json"}) {
    const Document doc = read(path);
    auto again = from_json(to_json(doc), path);
    ASSERT_TRUE(again) << again.status().message();
    EXPECT_TRUE(*again == doc) << path;
  }
}

TEST(Document, GoldenFilesAreWrittenExactlyAsTheyAreRead) {
  for (const char* name : {"run.json", "open_run.json", "sweep.json", "compare.json"}) {
    const std::string text = read_file(kGolden + "/" + name);
    EXPECT_EQ(to_json(read(kGolden + "/" + name)).dump(2) + "\n", text) << name;
  }
}

// `knee report FILE.json` prints what the run printed.
TEST(Document, ASavedResultReRendersAsTheRunPrintedIt) {
  for (const auto& [json_name, text_name] :
       std::vector<std::pair<std::string, std::string>>{{"run.json", "run.txt"},
                                                        {"open_run.json", "open_run.txt"},
                                                        {"sweep.json", "sweep.txt"},
                                                        {"compare.json", "compare.txt"}}) {
    EXPECT_EQ(render_text(read(kGolden + "/" + json_name)), read_file(kGolden + "/" + text_name))
        << json_name;
  }
  // And from the model itself, through JSON.
  const SweepDocument sweep = testing::golden_sweep_report();
  auto back = from_json(to_json(sweep), "sweep.json");
  ASSERT_TRUE(back);
  EXPECT_EQ(render_text(*back), render_sweep_text(sweep));
}

TEST(Document, EveryKindCarriesSchemaVersionAndKindAndRoundTrips) {
  LadderDocument ladder;
  ladder.only = {"inprocess"};
  ladder.rungs.push_back(RungFigures{"inprocess", "syscall", "getppid", "timed", "ns", 10, 100,
                                     1000, 5, 180.5, 210, 170, 181, 5.5e6, std::nullopt});
  ladder.disk = LadderDisk{"/tmp", "/tmp", "ext4", "/", "/dev/vda", "vda", "", 1, false, 4096, {}};
  ProbeDocument probe;
  probe.phases["total"] = PhaseFigures{"time_total", "complete", 1, 10, 10, 10, 10, 2, 2, 2};
  probe.attempts.push_back(
      AttemptFigures{true, true, 200, 2, {{"total", 10}, {"appconnect", {}}}, {}});
  CapacityDocument capacity;
  capacity.capacity_rps = 3900;
  capacity.params.io = "uring";
  capacity.bracket = CapacityBracket{3900, 4000};
  capacity.steps.push_back(CapacityStepFigures{3900, "confirm", true, {CapacityRepeatFigures{}}});
  UslDocument usl;
  usl.kneedle.error = "fewer than 3 points";
  RunDocument uring = testing::golden_run_report();
  uring.params.io = "uring";
  ScenariosDocument scenarios;
  scenarios.order = {"fast"};
  scenarios.scenarios.emplace("fast", testing::golden_run_report());
  const std::vector<std::pair<Document, std::string>> docs = {
      {testing::golden_run_report(), "run"},
      {testing::golden_h2_run_report(), "run"},
      {testing::golden_mix_run_report(), "run"},
      {uring, "run"},
      {testing::golden_sweep_report(), "sweep"},
      {scenarios, "scenarios"},
      {capacity, "capacity"},
      {testing::golden_capacity(), "capacity"},
      {ladder, "ladder"},
      {probe, "probe"},
      {LittleDocument{"n", 8, 4000, 2e6, "N = X * R", "Little"}, "model"},
      {Mm1Document{4268,
                   MuSource{"--mu", {}, {}, {}},
                   {Mm1Row{0.3, 1280, 3.3e5, 1, 1, 2, 3}},
                   {Mm1Peak{416.67, 0.098, 10.2, {}, "10 or more", "ample"}},
                   "GSTH"},
       "model"},
      {MmcDocument{2,
                   1000,
                   1500,
                   1.5,
                   0.75,
                   0.64,
                   1,
                   2,
                   3,
                   4,
                   {{"p99", 5e6}},
                   {{"p99", 4e6}},
                   0.31,
                   "GSTH"},
       "model"},
      {usl, "model"},
      {ComparisonDocument{}, "comparison"},
      {LatencyReportDocument{}, "latency"}};
  for (const auto& [doc, kind] : docs) {
    const json j = to_json(doc);
    EXPECT_EQ(j["schema_version"], kSchemaVersion) << kind;
    EXPECT_EQ(j["kind"], kind);
    auto back = from_json(j, "x.json");
    ASSERT_TRUE(back) << kind << ": " << back.status().message();
    EXPECT_TRUE(*back == doc) << kind;
    EXPECT_FALSE(render_text(*back).empty()) << kind;
  }
  EXPECT_EQ(to_json(uring)["params"]["io"], "uring");
  EXPECT_NE(render_text(uring).find("  requests written through io_uring (--io uring): many "
                                    "connections' writes per system call, a lone one by send(2)\n"),
            std::string::npos);
  EXPECT_EQ(to_json(capacity)["params"]["io"], "uring");
  EXPECT_NE(render_text(capacity).find("  requests written through io_uring (--io uring)"),
            std::string::npos);
  EXPECT_FALSE(to_json(testing::golden_run_report())["params"].contains("io"));
}

// Regression (schema 2): open-loop levels wrote the pool's cap into `concurrency`.
TEST(Document, OpenLoopLevelsNameThePoolCapMaxConnections) {
  const json j = to_json(testing::golden_open_run_report());
  EXPECT_FALSE(j.contains("concurrency"));
  EXPECT_EQ(j["max_connections"], 16);
  EXPECT_EQ(j["scheduled"], j["sent"]);
  EXPECT_EQ(j["never_sent"], 0);
  const json closed = to_json(testing::golden_run_report());
  EXPECT_EQ(closed["concurrency"], 10);
  EXPECT_FALSE(closed.contains("max_connections"));
}

// A version 2 file (knee before warm-up accounting and bytes) reads with the counts it knew.
TEST(Document, ASchemaVersion2ResultReadsWithTheCountsItKnew) {
  auto doc = parse_document(read_file(kFixtures + "/v2_open_run.json"), "v2_open_run.json");
  ASSERT_TRUE(doc) << doc.status().message();
  const RunFigures& r = std::get<RunDocument>(*doc).level.median;
  EXPECT_EQ(r.warmup.completed, 1000u);
  EXPECT_EQ(r.warmup.sent, 1000u);
  EXPECT_EQ(r.bytes.received, 0u);
  // The fixture's 3 eof_mid_response (hand-set in the v2 file) read as eof_mid_body: version 2
  // did not say where in the response the connection closed.
  EXPECT_EQ(r.errors.count("eof_mid_response"), 0u);
  EXPECT_EQ(r.errors.at("eof_mid_body"), 3u);
  EXPECT_EQ(r.errors.at("eof_mid_headers"), 0u);
  EXPECT_EQ(r.error_causes.at("eof_mid_body: EOF"), 3u);
  EXPECT_EQ(r.error_causes.count("eof_mid_response: EOF"), 0u);
  ASSERT_TRUE(r.open);
  EXPECT_EQ(r.open->pool_full_share, 0.0);
  EXPECT_TRUE(std::get<RunDocument>(*doc).level.notes.empty());
}

// An M/M/c model written before version 3 had no wait percentiles and no Erlang B.
TEST(Document, ASchemaVersion2MmcModelReadsWithoutTheFiguresItLacked) {
  auto mmc = mmc_document(2, 1000, 1500);
  ASSERT_TRUE(mmc) << mmc.status().message();
  json j = to_json(*mmc);
  j["schema_version"] = 2;
  j.erase("wait_ns");
  j.erase("p_block");
  auto doc = from_json(j, "mmc.json");
  ASSERT_TRUE(doc) << doc.status().message();
  const std::string text = render_text(*doc);
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  EXPECT_EQ(text.find("P(block)"), std::string::npos) << text;
  EXPECT_NE(text.find("P(wait)"), std::string::npos) << text;
}

TEST(Document, ASchemaVersion1OpenLoopResultIsMigrated) {
  json j = to_json(testing::golden_open_run_report());
  j["schema_version"] = 1;
  j["concurrency"] = j["max_connections"];
  for (const char* k : {"max_connections", "scheduled", "never_sent"}) j.erase(k);
  auto doc = from_json(j, "old.json");
  ASSERT_TRUE(doc) << doc.status().message();
  const RunFigures& r = std::get<RunDocument>(*doc).level.median;
  EXPECT_FALSE(r.concurrency);
  EXPECT_EQ(r.max_connections, 16);
  ASSERT_TRUE(r.open);
  EXPECT_EQ(r.open->scheduled, r.sent);
}

TEST(Document, WhatCannotBeReadIsRefusedInOneLineNamingTheFile) {
  const json doc = to_json(testing::golden_sweep_report());
  json no_version = doc;
  no_version.erase("schema_version");
  json newer = doc;
  newer["schema_version"] = kSchemaVersion + 1;
  json unknown = doc;
  unknown["kind"] = "histogram";
  json no_throughput = doc;
  no_throughput["levels"][1].erase("throughput_rps");
  // Regression: a field of the wrong type threw out of nlohmann::json and aborted knee.
  json mode_number = doc;
  mode_number["levels"][0]["mode"] = 1;
  json kind_array = doc;
  kind_array["kind"] = json::array();
  for (const auto& [bad, words] : std::vector<std::pair<json, std::string>>{
           {json::array(), "not a knee JSON"},
           {no_version, "no schema_version"},
           {newer, fmt::format("schema_version {}", kSchemaVersion + 1)},
           {unknown, "kind 'histogram'"},
           {no_throughput, "levels[1].throughput_rps is missing"},
           {mode_number, "levels[0].mode is not one of the accepted words"},
           {kind_array, "kind ''"}}) {
    auto s = from_json(bad, "x.json");
    ASSERT_FALSE(s) << words;
    EXPECT_EQ(s.status().code(), core::Status::Code::kInvalidArgument);
    EXPECT_NE(s.status().message().find(words), std::string::npos) << s.status().message();
    EXPECT_EQ(s.status().message().rfind("x.json: ", 0), 0u) << s.status().message();
  }
  auto broken = parse_document("{not json", "b.json");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.status().message().rfind("b.json: not valid JSON (parse error at line 1, ", 0),
            0u)
      << broken.status().message();
  // Regression (a new user's trial): valid JSON whose number overflows a double was "not valid
  // JSON"; it now says which number.
  auto huge = parse_document(R"({"throughput":1e400})", "h.json");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(huge.status().message().find("h.json: a number in it is beyond a double's range"),
            std::string::npos)
      << huge.status().message();
  EXPECT_NE(huge.status().message().find("'1e400'"), std::string::npos) << huge.status().message();
}

// Regression (issue 10): `model usl` fitted an open-loop sweep's pool sizes as if they were N.
TEST(Document, ModelUslRefusesAnOpenLoopSweepSayingWhatItIs) {
  SweepDocument open;
  open.levels.push_back(testing::golden_open_run_report().level);
  auto points = read_points("--points", "b.json", to_json(open).dump());
  ASSERT_FALSE(points);
  EXPECT_EQ(points.status().message(),
            "b.json is an open-loop sweep; `model usl` needs a closed-loop sweep or a CSV of "
            "concurrency,throughput");
  auto closed = read_points("--points", "a.json", to_json(testing::golden_sweep_report()).dump());
  ASSERT_TRUE(closed) << closed.status().message();
  EXPECT_EQ(closed->size(), 6u);
  EXPECT_EQ(closed->front().concurrency, 1);
  auto ladder = read_points("--points", "l.json", to_json(LadderDocument{}).dump());
  ASSERT_FALSE(ladder);
  EXPECT_NE(ladder.status().message().find("l.json is a latency ladder"), std::string::npos);
}

// Regression: a CSV without its header line was refused, though the help says only "a CSV of
// concurrency,throughput".
TEST(Document, ModelUslReadsACsvWithOrWithoutItsHeader) {
  for (const char* csv : {"concurrency,throughput\n1,100\n2,190\n", "1,100\n\n2, 190\n"}) {
    auto points = read_points("--points", "p.csv", csv);
    ASSERT_TRUE(points) << points.status().message();
    ASSERT_EQ(points->size(), 2u);
    EXPECT_EQ(points->back().concurrency, 2);
    EXPECT_EQ(points->back().throughput_rps, 190);
  }
  auto bad = read_points("--points", "p.csv", "n,x\n1,100\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("line 1: expected the header"), std::string::npos)
      << bad.status().message();
  auto late = read_points("--points", "p.csv", "1,100\nconcurrency,throughput\n");
  ASSERT_FALSE(late) << "a header after a point is not a point";
  EXPECT_NE(late.status().message().find("line 2"), std::string::npos);
}

// Regression: mu taken from a sweep that found no knee was called "the measured upper bound"
// although the server may never have saturated.
TEST(Document, MuFromASweepWithoutAKneeSaysItMayBeALowerBound) {
  SweepDocument sweep = testing::golden_sweep_report();
  ASSERT_TRUE(sweep.knee.index);
  for (bool knee : {true, false}) {
    if (!knee) sweep.knee.index.reset();
    auto mu = mu_from_sweep("s.json", to_json(sweep).dump());
    ASSERT_TRUE(mu) << mu.status().message();
    EXPECT_DOUBLE_EQ(mu->first, 4050);
    EXPECT_EQ(mu->second.concurrency, 32);
    auto doc = mm1_document(mu->first, mu->second, {});
    ASSERT_TRUE(doc);
    EXPECT_EQ(render_mm1_text(*doc).find("found no knee") != std::string::npos, !knee);
  }
}

}  // namespace
}  // namespace knee::report
