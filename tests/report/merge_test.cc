// `knee report merge` (report/merge.h): parts of one load merge into what one process would
// have measured, and a merge that would not be whole is refused.
#include "report/merge.h"

#include <gtest/gtest.h>

#include "report/render.h"
#include "support/report_fixtures.h"

namespace knee::report {
namespace {

// Part `index` of `count`: the synthetic server's run at `connections`, with its own latency.
RunDocument part_doc(int index, int count, int connections, double mean_ms, double start) {
  core::RunResult r =
      testing::synthetic_closed_run(connections, 1000.0 * connections, mean_ms, 0, 40.0);
  r.measure_start_epoch_s = start;
  LoadParams params;
  params.url = "http://10.0.0.1:8080/";
  params.part = PartParams{index, count};
  probes::HostContext host = testing::fixed_host();
  host.hostname = "load" + std::to_string(index);
  return analyse_run("http://10.0.0.1:8080/", "2026-12-02T12:00:00Z", params, {r}, host);
}

std::vector<MergePart> parts_of(std::vector<RunDocument> docs) {
  std::vector<MergePart> parts;
  for (size_t i = 0; i < docs.size(); ++i) {
    parts.push_back({"part" + std::to_string(i) + ".json", Document(docs[i])});
  }
  return parts;
}

TEST(Merge, RunsMergeExactlyIntoTheWholeLoad) {
  const RunDocument a = part_doc(0, 2, 3, 3.0, 1000.0);
  const RunDocument b = part_doc(1, 2, 2, 5.0, 1000.002);
  auto merged = merge_documents(parts_of({a, b}));
  ASSERT_TRUE(merged) << merged.status().what();
  const auto& m = std::get<RunDocument>(*merged);
  core::Histogram both = a.level.records[0].result.stats.latency_ns;
  both.merge(b.level.records[0].result.stats.latency_ns);
  EXPECT_EQ(m.level.records.at(0).result.stats.latency_ns, both);
  EXPECT_EQ(m.level.median.latency_ns.p99, both.value_at_percentile(99));
  EXPECT_EQ(m.level.median.concurrency, 5);  // Little's law with the total N
  EXPECT_EQ(m.level.median.requests, a.level.median.requests + b.level.median.requests);
  ASSERT_EQ(m.level.parts.size(), 2u);
  EXPECT_EQ(m.level.parts[1].host, "load1");
  EXPECT_EQ(m.level.parts[1].connections, 2);
  EXPECT_NEAR(m.level.parts[1].start_offset_ms, 2.0, 1e-3);
  EXPECT_FALSE(m.params.part);
  EXPECT_EQ(m.params.merged_from, (std::vector<std::string>{"part0.json", "part1.json"}));
  const std::string text = render_text(*merged);
  EXPECT_NE(text.find("merged from 2 parts"), std::string::npos) << text;
  EXPECT_NE(text.find("load1"), std::string::npos) << text;
  // The merged document reads back as it was written.
  auto again = from_json(to_json(*merged), "m.json");
  ASSERT_TRUE(again) << again.status().what();
  EXPECT_EQ(std::get<RunDocument>(*again), m);
}

TEST(Merge, SweepsMergeLevelByLevel) {
  const auto [a, b] = testing::golden_sweep_parts(0.5, "loadgen-2");
  auto merged = merge_documents({{"a.json", Document(a)}, {"b.json", Document(b)}});
  ASSERT_TRUE(merged) << merged.status().what();
  const auto& m = std::get<SweepDocument>(*merged);
  ASSERT_EQ(m.levels.size(), a.levels.size());
  for (size_t l = 0; l < m.levels.size(); ++l) {
    EXPECT_EQ(m.levels[l].median.requests, 2 * a.levels[l].median.requests) << l;
    EXPECT_EQ(m.levels[l].median.concurrency.value_or(0),
              2 * a.levels[l].median.concurrency.value_or(0))
        << l;
    EXPECT_EQ(m.levels[l].parts.size(), 2u);
  }
  bool skew = false;
  for (const std::string& w : m.warnings)
    skew = skew || w.find("500.0 ms apart") != std::string::npos;
  EXPECT_TRUE(skew) << "a 0.5 s start skew is warned about";
}

TEST(Merge, RefusesWhatWouldNotBeTheWholeLoad) {
  const RunDocument a = part_doc(0, 3, 3, 3.0, 1000.0);
  const RunDocument b = part_doc(1, 3, 3, 3.0, 1000.0);
  auto missing = merge_documents(parts_of({a, b}));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("part 2 of 3 is missing"), std::string::npos)
      << missing.status().what();

  auto twice = merge_documents(parts_of({a, a}));
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.status().message().find("again"), std::string::npos) << twice.status().what();

  RunDocument plain_a = a, plain_b = a;
  plain_a.params.part.reset();
  plain_b.params.part.reset();
  auto same = merge_documents(parts_of({plain_a, plain_b}));
  ASSERT_FALSE(same);
  EXPECT_NE(same.status().message().find("same measurement"), std::string::npos);

  RunDocument other = part_doc(1, 2, 3, 3.0, 1000.0);
  RunDocument first = part_doc(0, 2, 3, 3.0, 1000.0);
  other.params.url = "http://10.0.0.2:8080/";
  auto url = merge_documents(parts_of({first, other}));
  ASSERT_FALSE(url);
  EXPECT_NE(url.status().message().find("measured"), std::string::npos);

  RunDocument old = part_doc(1, 2, 3, 3.0, 1000.0);
  old.level.records.clear();  // a file of knee before records
  auto no_records = merge_documents(parts_of({first, old}));
  ASSERT_FALSE(no_records);
  EXPECT_NE(no_records.status().message().find("no run records"), std::string::npos);

  auto kinds = merge_documents(
      {{"a.json", Document(first)}, {"s.json", Document(testing::golden_sweep_report())}});
  EXPECT_FALSE(kinds);
  EXPECT_FALSE(merge_documents(parts_of({first})));
}

}  // namespace
}  // namespace knee::report

namespace knee::report {
namespace {

TEST(Merge, MeasuredClockOffsetsPutStartsOnOneClock) {
  const auto [a, b] = testing::golden_sweep_parts(0.5, "loadgen-2");  // its clock is 0.5 s ahead
  auto merged = merge_documents({{"rank 0", Document(a), 0.0}, {"rank 1", Document(b), 0.5}});
  ASSERT_TRUE(merged) << merged.status().what();
  const auto& m = std::get<SweepDocument>(*merged);
  for (const std::string& w : m.warnings) EXPECT_EQ(w.find("apart"), std::string::npos) << w;
  EXPECT_NEAR(m.levels[0].parts[1].start_offset_ms, 0.0, 1e-6);
  EXPECT_NEAR(m.levels[0].parts[1].clock_offset_ms.value_or(-1), 500.0, 1e-6);
  EXPECT_NEAR(m.levels[0].median.duration_s, a.levels[0].median.duration_s, 1e-9);
}

}  // namespace
}  // namespace knee::report
