// Comparing two results (report/compare.h): levels matched by concurrency or rate, ratios b/a,
// "different" only when both sides have repeats and their ranges do not overlap.
#include "report/compare.h"

#include <gtest/gtest.h>

#include "report/render.h"
#include "support/report_fixtures.h"

namespace knee::report {
namespace {

using nlohmann::json;

CompareLevel level(double key, int repeats, Range throughput, Range p99) {
  CompareLevel l;
  l.key = key;
  l.repeats = repeats;
  l.throughput_rps = throughput;
  l.p50_ns = l.p90_ns = l.p999_ns = Range{1e6, 1e6, 1e6};
  l.p99_ns = p99;
  return l;
}

CompareSide side(std::string label, std::vector<CompareLevel> levels) {
  CompareSide s;
  s.label = std::move(label);
  s.kind = "sweep";
  s.threads = 1;
  s.levels = std::move(levels);
  return s;
}

const FigureComparison& figure(const LevelComparison& l, const std::string& name) {
  for (const FigureComparison& f : l.figures) {
    if (f.name == name) return f;
  }
  ADD_FAILURE() << "no figure " << name;
  return l.figures.front();
}

TEST(Compare, DifferentOnlyWhenBothHaveRepeatsAndRangesDoNotOverlap) {
  const Range a{100, 95, 105};
  EXPECT_EQ(classify(a, 3, Range{120, 110, 130}, 3), Difference::kHigher);
  EXPECT_EQ(classify(a, 3, Range{80, 70, 90}, 3), Difference::kLower);
  EXPECT_EQ(classify(a, 3, Range{110, 104, 115}, 3), Difference::kWithin);
  EXPECT_EQ(classify(a, 3, Range{110, 105, 115}, 3), Difference::kWithin) << "touching overlaps";
  EXPECT_EQ(classify(a, 1, Range{200, 200, 200}, 3), Difference::kCannotTell);
  EXPECT_EQ(classify(a, 3, Range{200, 200, 200}, 1), Difference::kCannotTell);
  EXPECT_EQ(difference_text(Difference::kCannotTell), "cannot tell (no repeats)");
}

TEST(Compare, MatchesLevelsByKeyAndListsTheOthers) {
  CompareSide a = side("a.json", {level(1, 2, {100, 90, 110}, {4e6, 3e6, 5e6}),
                                  level(4, 2, {400, 390, 410}, {5e6, 4e6, 6e6}),
                                  level(16, 2, {900, 880, 920}, {9e6, 8e6, 10e6})});
  CompareSide b = side("b.json", {level(4, 2, {600, 590, 610}, {5e6, 4.5e6, 5.5e6}),
                                  level(16, 2, {450, 440, 460}, {20e6, 19e6, 21e6}),
                                  level(64, 2, {500, 500, 500}, {40e6, 40e6, 40e6})});
  auto c = compare(a, b);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->key_name, "concurrency");
  ASSERT_EQ(c->levels.size(), 2u);
  EXPECT_EQ(c->levels[0].key, 4);
  EXPECT_EQ(c->levels[1].key, 16);
  EXPECT_EQ(c->only_in_a, std::vector<double>{1});
  EXPECT_EQ(c->only_in_b, std::vector<double>{64});
  const FigureComparison& x4 = figure(c->levels[0], "throughput_rps");
  ASSERT_TRUE(x4.ratio);
  EXPECT_DOUBLE_EQ(*x4.ratio, 1.5);
  EXPECT_EQ(x4.difference, Difference::kHigher);
  EXPECT_EQ(figure(c->levels[0], "p99_ns").difference, Difference::kWithin);
  EXPECT_EQ(figure(c->levels[1], "throughput_rps").difference, Difference::kLower);
  EXPECT_EQ(figure(c->levels[1], "p99_ns").difference, Difference::kHigher);
  ASSERT_EQ(c->levels[0].figures.size(), 5u);
}

TEST(Compare, ZeroBaselineHasNoRatio) {
  auto c = compare(side("a", {level(1, 1, {0, 0, 0}, {1e6, 1e6, 1e6})}),
                   side("b", {level(1, 1, {10, 10, 10}, {1e6, 1e6, 1e6})}));
  ASSERT_TRUE(c);
  EXPECT_FALSE(figure(c->levels[0], "throughput_rps").ratio);
  EXPECT_TRUE(compare_to_json(*c)["levels"][0]["figures"]["throughput_rps"]["ratio"].is_null());
}

TEST(Compare, RefusesClosedAgainstOpenLoop) {
  CompareSide a = side("a.json", {level(1, 1, {1, 1, 1}, {1, 1, 1})});
  CompareSide b = a;
  b.label = "b.json";
  b.open = true;
  auto c = compare(a, b);
  ASSERT_FALSE(c);
  EXPECT_NE(c.status().message().find("open loop"), std::string::npos) << c.status().message();
}

TEST(CompareJson, ReadsARunFileAsOneLevelWithItsRanges) {
  json doc = run_to_json(testing::golden_run_report());
  auto s = compare_side_from_json(doc, "run.json");
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->kind, "run");
  EXPECT_FALSE(s->open);
  ASSERT_EQ(s->levels.size(), 1u);
  EXPECT_EQ(s->levels[0].key, 10);
  EXPECT_EQ(s->levels[0].repeats, 3);
  EXPECT_DOUBLE_EQ(s->levels[0].throughput_rps.min, 2800);
  EXPECT_DOUBLE_EQ(s->levels[0].throughput_rps.max, 2950);
}

TEST(CompareJson, ReadsAnOpenLoopRunKeyedByRate) {
  auto s = compare_side_from_json(run_to_json(testing::golden_open_run_report()), "open.json");
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_TRUE(s->open);
  EXPECT_EQ(s->levels[0].key, 1000);
}

TEST(CompareJson, FallsBackToSingleFiguresWithoutRanges) {
  json doc = sweep_to_json(testing::golden_sweep_report());
  for (auto& l : doc["levels"]) l.erase("ranges");
  auto s = compare_side_from_json(doc, "old.json");
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_EQ(s->levels.size(), 6u);
  const CompareLevel& l = s->levels[2];
  EXPECT_EQ(l.key, 4);
  EXPECT_EQ(l.p99_ns.min, l.p99_ns.max);
  EXPECT_EQ(l.p99_ns.median, doc["levels"][2]["latency_ns"]["p99"].get<double>());
}

TEST(CompareJson, RejectsWhatItCannotRead) {
  json doc = sweep_to_json(testing::golden_sweep_report());
  json no_version = doc;
  no_version.erase("schema_version");
  json newer = doc;
  newer["schema_version"] = 2;
  json capacity = doc;
  capacity["kind"] = "capacity";
  json no_throughput = doc;
  no_throughput["levels"][1].erase("throughput_rps");
  no_throughput["levels"][1].erase("ranges");
  // Regression: a field of the wrong type threw out of nlohmann::json and aborted knee.
  json mode_number = doc;
  mode_number["levels"][0]["mode"] = 1;
  json kind_array = doc;
  kind_array["kind"] = json::array();
  for (const auto& [bad, words] :
       std::vector<std::pair<json, std::string>>{{json::array(), "not a knee JSON"},
                                                 {no_version, "no schema_version"},
                                                 {newer, "schema_version 2"},
                                                 {capacity, "kind 'capacity'"},
                                                 {no_throughput, "levels[1] has no throughput"},
                                                 {mode_number, "wrong type"},
                                                 {kind_array, "wrong type"}}) {
    auto s = compare_side_from_json(bad, "x.json");
    ASSERT_FALSE(s) << words;
    EXPECT_NE(s.status().message().find(words), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().find("x.json"), std::string::npos) << s.status().message();
  }
}

}  // namespace
}  // namespace knee::report
