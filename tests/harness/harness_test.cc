// The harness (src/harness/): result files opened before a measurement and written whole after
// it, the --hlog file streamed as intervals complete, the target a measurement follows, and the
// report's record of the load.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/load_spec.h"
#include "harness/distributed.h"
#include "harness/load_params.h"
#include "harness/observer.h"
#include "harness/result_files.h"
#include "report/hlog.h"
#include "support/report_fixtures.h"
#include "support/temp_dir.h"

namespace knee::harness {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

OutputPaths paths(std::string json, std::string html, std::string hlog) {
  OutputPaths p;
  p.json = std::move(json);
  p.html = std::move(html);
  p.hlog = std::move(hlog);
  return p;
}

TEST(ResultFiles, TwoFlagsNamingOneFileAreRefusedBeforeAnythingIsWritten) {
  testing::TempDir dir;
  const std::string same = dir.path() + "/out";
  for (const OutputPaths& clash :
       {paths(same, same, ""), paths(same, "", same), paths("", same, same)}) {
    ResultFiles files;
    core::Status s = files.open(clash);
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("both name '" + same + "'"), std::string::npos) << s.message();
  }
  EXPECT_FALSE(std::filesystem::exists(same));
  ResultFiles files;
  EXPECT_TRUE(files.open(paths("-", "", ""))) << "stdout is no file: it cannot clash";
}

TEST(ResultFiles, TheJsonFileAppearsWholeOnlyWhenWritten) {
  testing::TempDir dir;
  const std::string json = dir.path() + "/run.json";
  const report::Document doc = knee::testing::golden_run_report();
  ResultFiles files;
  ASSERT_TRUE(files.open(paths(json, "", "")));
  EXPECT_FALSE(std::filesystem::exists(json)) << "written whole or not at all";
  ::testing::internal::CaptureStdout();
  ASSERT_TRUE(files.write(doc, "the text\n"));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "the text\n");
  EXPECT_EQ(slurp(json), json_text(doc));
  EXPECT_EQ(json_text(doc).back(), '\n');
}

TEST(ResultFiles, JsonOnStdoutReplacesTheText) {
  const report::Document doc = knee::testing::golden_run_report();
  ResultFiles files;
  ASSERT_TRUE(files.open(paths("-", "", "")));
  ::testing::internal::CaptureStdout();
  ASSERT_TRUE(files.write(doc, "the text\n"));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), json_text(doc));
}

TEST(HlogOutput, IsAFileNotStdout) {
  HlogOutput hlog;
  core::Status s = hlog.open("-");
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("--hlog: give a file name"), std::string::npos);
}

TEST(HlogOutput, EachIntervalIsALineOfItsRunsTagFromTheFirstRunsStart) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/run.hlog";
  HlogOutput hlog;
  ASSERT_TRUE(hlog.open(path));
  core::Histogram h(1, 3'600'000'000'000, 3);
  h.record(1'000'000);
  core::LatencyInterval first{0, 1, 1, 0, 0, 0, 0, 0};
  core::LatencyInterval second{1, 1, 1, 0, 0, 0, 0, 0};
  hlog.set_tag("c1");
  hlog.write({1.7e9, first, h});
  hlog.set_tag("c2");
  hlog.write({1.7e9 + 5, second, h});  // the second run started 5 s after the first
  EXPECT_FALSE(std::filesystem::exists(path)) << "renamed into place by finish()";
  ASSERT_TRUE(hlog.finish());
  std::ifstream in(path);
  auto intervals = report::read_hlog(in);
  ASSERT_TRUE(intervals) << intervals.status().message();
  ASSERT_EQ(intervals->size(), 2u);
  EXPECT_EQ((*intervals)[0].tag, "c1");
  EXPECT_DOUBLE_EQ((*intervals)[0].start_s, 0);
  EXPECT_EQ((*intervals)[1].tag, "c2");
  EXPECT_DOUBLE_EQ((*intervals)[1].start_s, 6) << "5 s later, its second interval";
  EXPECT_EQ((*intervals)[1].histogram.count(), 1);
}

TEST(HlogOutput, ARunWithNoIntervalStillLeavesAValidLog) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/empty.hlog";
  HlogOutput hlog;
  ASSERT_TRUE(hlog.open(path));
  ASSERT_TRUE(hlog.finish());
  std::ifstream in(path);
  auto intervals = report::read_hlog(in);
  ASSERT_TRUE(intervals) << intervals.status().message();
  EXPECT_TRUE(intervals->empty());
}

TEST(ResolveTarget, EachWrongCombinationNamesItsFlag) {
  testing::TempDir dir;
  const std::pair<TargetSpec, const char*> cases[] = {
      {{0, false, ""}, "--server-pid: no process 0"},
      {{std::nullopt, false, dir.path()}, "--lab-state: only with --stack"},
      {{1, true, ""}, "--server-pid and --stack"},
      {{std::nullopt, true, dir.path()}, "--stack"},  // no stack up in that folder
  };
  for (const auto& [spec, message] : cases) {
    auto t = resolve_target(spec, dir.path());
    ASSERT_FALSE(t) << message;
    EXPECT_TRUE(t.status().message().starts_with(message)) << t.status().message();
  }
  auto alone = resolve_target({}, dir.path());
  ASSERT_TRUE(alone) << alone.status().message();
  EXPECT_FALSE(alone->stack);
  EXPECT_FALSE(alone->processes.server);
}

TEST(LoadParams, RecordsOnlyWhatApplies) {
  engine::LoadSpec spec;
  spec.url = "https://127.0.0.1:8443/tracking/{shipment}";
  spec.h2 = true;
  spec.streams = 4;
  spec.insecure = true;
  spec.tls_version = "1.3";
  spec.zipf = 1.1;
  spec.zipf_given = true;
  auto o = spec.to_options();
  ASSERT_TRUE(o) << o.status().message();
  report::LoadParams p = load_params(*o, spec.url, 3);
  EXPECT_EQ(p.url, spec.url) << "as typed, placeholders unexpanded";
  EXPECT_EQ(p.repeats, 3);
  EXPECT_DOUBLE_EQ(p.duration_s, 2);
  EXPECT_EQ(p.protocol, "h2");
  EXPECT_EQ(p.per_connection, 4);
  ASSERT_TRUE(p.tls);
  EXPECT_FALSE(p.tls->verify);
  EXPECT_EQ(p.tls->version, "1.3");
  EXPECT_EQ(p.shipments, 100000);
  EXPECT_DOUBLE_EQ(p.zipf.value_or(0), 1.1);

  spec = engine::LoadSpec{};
  spec.url = "http://127.0.0.1/x";
  o = spec.to_options();
  ASSERT_TRUE(o) << o.status().message();
  p = load_params(*o, spec.url, 1);
  EXPECT_FALSE(p.tls);
  EXPECT_FALSE(p.protocol);
  EXPECT_FALSE(p.shipments) << "no {shipment} in the request";
  EXPECT_FALSE(p.per_connection);
  EXPECT_EQ(p.arrival, "uniform");
}

TEST(LoadParams, TheStartTimeIsIso8601Utc) {
  const std::string t = now_iso8601();
  ASSERT_EQ(t.size(), 20u) << t;
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}

// Alone (not under mpirun): no group, this process is the root, its plan is its --part.
TEST(Distributed, AloneThePlanIsThisProcesssPartAndItsFilesAreOpened) {
  testing::TempDir dir;
  engine::LoadSpec load;
  load.url = "http://127.0.0.1:8080/";
  load.connections = 8;
  load.part = "1/2";
  auto o = load.to_options();
  ASSERT_TRUE(o) << o.status().message();
  engine::Plan plan;
  plan.levels = {{*o}};
  const std::string json = dir.path() + "/part.json";
  Distributed group;
  ASSERT_TRUE(group.join(load, paths(json, "", "")));
  EXPECT_FALSE(group.active());
  EXPECT_TRUE(group.root());
  ResultFiles files;
  ASSERT_TRUE(group.prepare(load, plan, /*shared_target=*/true, files));
  EXPECT_EQ(plan.levels[0][0].connections, 4);
  EXPECT_TRUE(files.json.wanted()) << "alone, the files stay open for the result";
  auto mine = group.merge(report::Document(knee::testing::golden_run_report()));
  ASSERT_TRUE(mine && *mine);
  EXPECT_TRUE(std::holds_alternative<report::RunDocument>(**mine));
}

TEST(Distributed, APartOfATargetNotSharedIsRefused) {
  engine::LoadSpec load;
  load.url = "http://127.0.0.1:8080/";
  load.part = "0/2";
  auto o = load.to_options();
  ASSERT_TRUE(o) << o.status().message();
  engine::Plan plan;
  plan.levels = {{*o}};
  Distributed group;
  ASSERT_TRUE(group.join(load, {}));
  ResultFiles files;
  core::Status s = group.prepare(load, plan, /*shared_target=*/false, files);
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.message().starts_with("--part: give the URL of the target")) << s.message();
  EXPECT_EQ(plan.levels[0][0].connections, 10) << "nothing split";
}

TEST(Distributed, JsonPartsAreOnlyForMpirun) {
  engine::LoadSpec load;
  OutputPaths out;
  out.json_parts = "/tmp/never";
  Distributed group;
  core::Status s = group.join(load, out);
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.message().starts_with("--json-parts: only under mpirun")) << s.message();
}

}  // namespace
}  // namespace knee::harness
