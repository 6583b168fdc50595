// The result files (harness/result_files.h): opened before a measurement, each refused when it
// clashes with another, written whole after it; the --hlog file streamed as intervals complete.
#include "harness/result_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/histogram.h"
#include "report/hlog.h"
#include "support/report_fixtures.h"
#include "support/temp_dir.h"

namespace knee::harness {
namespace {

OutputPaths paths(std::string json, std::string html, std::string hlog) {
  OutputPaths p;
  p.json = std::move(json);
  p.html = std::move(html);
  p.hlog = std::move(hlog);
  return p;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ResultFiles, TwoFlagsNamingOneFileAreRefusedBeforeAnythingIsWritten) {
  testing::TempDir dir;
  const std::string same = dir.path() + "/out";
  const std::pair<OutputPaths, const char*> clashes[] = {
      {paths(same, same, ""), "--json and --html: both name '"},
      {paths(same, "", same), "--json and --hlog: both name '"},
      {paths("", same, same), "--html and --hlog: both name '"},
  };
  for (const auto& [clash, message] : clashes) {
    ResultFiles files;
    core::Status s = files.open(clash);
    ASSERT_FALSE(s) << message;
    EXPECT_TRUE(s.message().starts_with(message)) << s.message();
  }
  EXPECT_FALSE(std::filesystem::exists(same));
}

// Regression (a new user's trial): only identical spellings were compared, so
// --json a.json --html ./a.json, a path through "..", or a link to the other file let both
// through and the HTML replaced the JSON.
TEST(ResultFiles, TwoSpellingsOrALinkOfOneFileAreRefusedToo) {
  testing::TempDir dir;
  const std::string out = dir.path() + "/out.json";
  const std::string target = dir.path() + "/body.json";
  { std::ofstream(target) << "x"; }
  const std::string link = dir.path() + "/link.json";
  std::filesystem::create_symlink(target, link);
  std::filesystem::create_directory(dir.path() + "/sub");
  const std::pair<OutputPaths, const char*> clashes[] = {
      {paths(out, dir.path() + "/./out.json", ""), "--json and --html: both name one file ("},
      {paths(out, "", dir.path() + "/sub/../out.json"), "--json and --hlog: both name one file ("},
      {paths("", link, target), "--html and --hlog: both name one file ("},
  };
  for (const auto& [clash, message] : clashes) {
    ResultFiles files;
    core::Status s = files.open(clash);
    ASSERT_FALSE(s) << message;
    EXPECT_TRUE(s.message().starts_with(message)) << s.message();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(slurp(target), "x");
  ResultFiles files;  // different files in one folder are fine
  EXPECT_TRUE(files.open(paths(out, dir.path() + "/out.html", dir.path() + "/out.hlog")));
}

// Regression: --json b.json with --body-file b.json replaced the body with the result.
TEST(ResultFiles, AnOutputThatIsAnInputIsRefusedBeforeAnythingIsWritten) {
  testing::TempDir dir;
  const std::string body = dir.path() + "/body";
  { std::ofstream(body) << "x"; }
  for (OutputPaths p : {paths(body, "", ""), paths("", body, ""), paths("", "", body)}) {
    p.inputs = {"other", body};
    ResultFiles files;
    core::Status s = files.open(p);
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("is also an input"), std::string::npos) << s.message();
  }
  EXPECT_EQ(slurp(body), "x");
  OutputPaths fine = paths(dir.path() + "/out.json", "", "");
  fine.inputs = {body};
  ResultFiles files;
  EXPECT_TRUE(files.open(fine));
}

// Regression: --json - --html - passed open() and wrote both documents, one after the other, on
// stdout.
TEST(ResultFiles, OnlyOneDocumentGoesToStdout) {
  ResultFiles files;
  core::Status s = files.open(paths("-", "-", ""));
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.message().starts_with("--json - and --html -")) << s.message();
  ResultFiles one;
  EXPECT_TRUE(one.open(paths("-", "", "")));
}

TEST(ResultFiles, EachFileAppearsWholeOnlyWhenWrittenAndReadsBackAsTheDocument) {
  testing::TempDir dir;
  const std::string json = dir.path() + "/run.json";
  const std::string html = dir.path() + "/run.html";
  const report::Document doc = knee::testing::golden_run_report();
  ResultFiles files;
  ASSERT_TRUE(files.open(paths(json, html, "")));
  EXPECT_TRUE(files.per_second());
  EXPECT_FALSE(std::filesystem::exists(json)) << "written whole or not at all";
  EXPECT_FALSE(std::filesystem::exists(html));
  ::testing::internal::CaptureStdout();
  ASSERT_TRUE(files.write(doc, "the text\n"));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "the text\n");
  const std::string text = slurp(json);
  auto back = report::parse_document(text, json);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(*back, doc);
  EXPECT_TRUE(text.ends_with("}\n")) << "one newline after the document";
  EXPECT_TRUE(slurp(html).starts_with("<!DOCTYPE html>")) << slurp(html).substr(0, 40);
}

TEST(ResultFiles, JsonOnStdoutReplacesTheText) {
  const report::Document doc = knee::testing::golden_run_report();
  ResultFiles files;
  ASSERT_TRUE(files.open(paths("-", "", "")));
  ::testing::internal::CaptureStdout();
  ASSERT_TRUE(files.write(doc, "the text\n"));
  const std::string out = ::testing::internal::GetCapturedStdout();
  auto back = report::parse_document(out, "stdout");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(*back, doc);
}

// Regression (a new user's trial): `knee run URL --html - > r.html` saved the text table and then
// the page; the page on stdout replaces the text as the JSON does.
TEST(ResultFiles, HtmlOnStdoutReplacesTheText) {
  const report::Document doc = knee::testing::golden_run_report();
  ResultFiles files;
  ASSERT_TRUE(files.open(paths("", "-", "")));
  ::testing::internal::CaptureStdout();
  ASSERT_TRUE(files.write(doc, "the text\n"));
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(out.starts_with("<!DOCTYPE html>")) << out.substr(0, 80);
  EXPECT_EQ(out.find("the text"), std::string::npos);
}

TEST(HlogOutput, IsAFileNotStdout) {
  HlogOutput hlog;
  core::Status s = hlog.open("-");
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.message().starts_with("--hlog: give a file name")) << s.message();
}

TEST(HlogOutput, EachIntervalIsALineOfItsRunsTagFromTheFirstRunsStart) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/run.hlog";
  HlogOutput hlog;
  ASSERT_TRUE(hlog.open(path));
  core::Histogram h(1, 3'600'000'000'000, 3);
  h.record(1'000'000);
  const core::LatencyInterval first{0, 1, 1, 0, 0, 0, 0, 0};
  const core::LatencyInterval second{1, 1, 1, 0, 0, 0, 0, 0};
  hlog.set_tag("c1");
  hlog.write({1.7e9, first, h});
  hlog.set_tag("c2");
  hlog.write({1.7e9 + 5, second, h});  // the second run started 5 s after the first
  EXPECT_FALSE(std::filesystem::exists(path)) << "renamed into place by finish()";
  ASSERT_TRUE(hlog.finish());
  EXPECT_NE(slurp(path).find("#[StartTime: 1700000000.000"), std::string::npos) << slurp(path);
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

}  // namespace
}  // namespace knee::harness
