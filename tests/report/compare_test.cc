// Comparing two results (report/compare.h): levels matched by concurrency or rate, ratios b/a,
// "different" only when both sides have repeats and their ranges do not overlap.
#include "report/compare.h"

#include <gtest/gtest.h>

#include "report/render.h"
#include "support/report_fixtures.h"

namespace knee::report {
namespace {

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

const FigureFigures& figure(const CompareLevelFigures& l, const std::string& name) {
  auto it = l.figures.find(name);
  if (it != l.figures.end()) return it->second;
  ADD_FAILURE() << "no figure " << name;
  return l.figures.begin()->second;
}

double key_of(const CompareLevelFigures& l) { return l.concurrency.value_or(LevelKey{}).value; }

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
  EXPECT_EQ(c->key, "concurrency");
  ASSERT_EQ(c->levels.size(), 2u);
  EXPECT_EQ(key_of(c->levels[0]), 4);
  EXPECT_EQ(key_of(c->levels[1]), 16);
  EXPECT_EQ(c->only_in_a, std::vector<LevelKey>{LevelKey{1}});
  EXPECT_EQ(c->only_in_b, std::vector<LevelKey>{LevelKey{64}});
  const FigureFigures& x4 = figure(c->levels[0], "throughput_rps");
  ASSERT_TRUE(x4.ratio);
  EXPECT_DOUBLE_EQ(*x4.ratio, 1.5);
  EXPECT_EQ(x4.difference, "higher");
  EXPECT_EQ(figure(c->levels[0], "p99_ns").difference, "within");
  EXPECT_EQ(figure(c->levels[1], "throughput_rps").difference, "lower");
  EXPECT_EQ(figure(c->levels[1], "p99_ns").difference, "higher");
  ASSERT_EQ(c->levels[0].figures.size(), 5u);
}

TEST(Compare, ZeroBaselineHasNoRatio) {
  auto c = compare(side("a", {level(1, 1, {0, 0, 0}, {1e6, 1e6, 1e6})}),
                   side("b", {level(1, 1, {10, 10, 10}, {1e6, 1e6, 1e6})}));
  ASSERT_TRUE(c);
  EXPECT_FALSE(figure(c->levels[0], "throughput_rps").ratio);
  EXPECT_TRUE(to_json(*c)["levels"][0]["figures"]["throughput_rps"]["ratio"].is_null());
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

TEST(Compare, NotesEachConditionThatDiffersAndNoneWhenTheyMatch) {
  CompareSide a = side("a.json", {level(1, 2, {100, 90, 110}, {4e6, 3e6, 5e6})});
  a.target = "http://127.0.0.1:8080/";
  a.protocol = "http/1.1";
  a.duration_s = 10;
  CompareSide b = a;
  b.label = "b.json";
  auto same = compare(a, b);
  ASSERT_TRUE(same) << same.status().message();
  EXPECT_TRUE(same->notes.empty());
  EXPECT_FALSE(to_json(*same).contains("notes")) << "no notes, no member";
  EXPECT_EQ(render_compare_text(*same).find("note:"), std::string::npos);

  b.target = "http://127.0.0.1:9090/";
  b.threads = 2;
  b.duration_s = 10.4;  // within 5 %: the same measured time
  auto differ = compare(a, b);
  ASSERT_TRUE(differ);
  ASSERT_EQ(differ->notes.size(), 2u);
  EXPECT_NE(differ->notes[0].find("http://127.0.0.1:9090/"), std::string::npos);
  EXPECT_NE(differ->notes[1].find("1 client thread and b 2"), std::string::npos);
  b.duration_s = 20;
  auto longer = compare(a, b);
  ASSERT_TRUE(longer);
  ASSERT_EQ(longer->notes.size(), 3u);
  EXPECT_NE(longer->notes[2].find("10.00 s per level and b 20.00 s"), std::string::npos);
  EXPECT_NE(render_compare_text(*longer).find("  note: a measured 10.00 s"), std::string::npos);
  // Regression (a new user's trial): a staged run against a constant rate said nothing.
  b = a;
  b.label = "b.json";
  a.stages = "2s:200";
  auto staged = compare(a, b);
  ASSERT_TRUE(staged);
  ASSERT_EQ(staged->notes.size(), 1u);
  EXPECT_EQ(staged->notes[0].find("a ran in stages 2s:200 and b at a constant rate: "), 0u)
      << staged->notes[0];
  b.stages = "2s:200";
  EXPECT_TRUE(compare(a, b)->notes.empty()) << "the same stages";
  // Regression (a new user's trial): two mixes on one server were compared without a word, and
  // a mix against one URL of that server was called two servers.
  b.mix = "GET /fast=1,GET /tracking=5";
  b.target = "http://127.0.0.1:8080/fast";
  auto mixes = compare(a, b);
  ASSERT_TRUE(mixes);
  ASSERT_EQ(mixes->notes.size(), 1u) << "one server: no note on targets";
  EXPECT_EQ(mixes->notes[0],
            "a sent every request to http://127.0.0.1:8080/ and b the mix 'GET /fast=1,GET "
            "/tracking=5': each row compares two workloads, not one before and after a change");
  b.target = "http://127.0.0.1:9090/";
  EXPECT_EQ(compare(a, b)->notes.size(), 2u) << "another server too";
  // --io: the same load written another way moves the client's CPU, so a client-bound figure.
  b = a;
  b.label = "b.json";
  a.io = "epoll";
  b.io = "uring";
  auto ios = compare(a, b);
  ASSERT_TRUE(ios);
  ASSERT_EQ(ios->notes.size(), 1u);
  EXPECT_EQ(ios->notes[0].find("a wrote its requests through epoll and b through uring (--io)"), 0u)
      << ios->notes[0];
}

TEST(CompareDocument, ReadsARunAsOneLevelWithItsRanges) {
  auto s = compare_side(testing::golden_run_report(), "run.json");
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->kind, "run");
  EXPECT_FALSE(s->open);
  ASSERT_EQ(s->levels.size(), 1u);
  EXPECT_EQ(s->levels[0].key, 10);
  EXPECT_EQ(s->levels[0].repeats, 3);
  EXPECT_DOUBLE_EQ(s->levels[0].throughput_rps.min, 2800);
  EXPECT_DOUBLE_EQ(s->levels[0].throughput_rps.max, 2950);
}

TEST(CompareDocument, ReadsAnOpenLoopRunKeyedByRate) {
  auto s = compare_side(testing::golden_open_run_report(), "open.json");
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_TRUE(s->open);
  EXPECT_EQ(s->levels[0].key, 1000);
}

TEST(CompareDocument, RefusesWhatIsNotARunOrASweep) {
  auto s = compare_side(LatencyReportDocument{}, "x.json");
  ASSERT_FALSE(s);
  EXPECT_NE(s.status().message().find("x.json is a latency summary"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace knee::report
