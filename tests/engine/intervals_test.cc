// engine/intervals.h: per-interval latency folded across workers as the run goes on, so memory
// stays flat with run length; and the run itself hands each interval over as it completes.
#include "engine/intervals.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "engine/load.h"
#include "http/url.h"
#include "support/scripted_server.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;

// A worker's counts of one interval, as LoadWorker::flush_interval makes them.
IntervalCounts counts_of(size_t index, const core::Histogram& h) {
  IntervalCounts c;
  c.index = index;
  h.for_each_recorded(
      [&](int64_t lowest, int64_t, int64_t count) { c.counts.emplace_back(lowest, count); });
  return c;
}

TEST(IntervalFolder, FoldsAnIntervalOnceEveryWorkerHasHandedItOver) {
  // Values at their bucket's lowest, as compact counts carry them (3 significant digits).
  core::Histogram a = core::Histogram::for_latency(), b = core::Histogram::for_latency();
  for (int64_t v : {1'000, 250'000, 3'500'000}) a.record(a.lowest_equivalent_value(v), 3);
  for (int64_t v : {2'000, 900'000'000}) b.record(b.lowest_equivalent_value(v), 2);
  core::Histogram both = core::Histogram::for_latency();
  both.merge(a);
  both.merge(b);

  std::vector<core::LatencyInterval> seen;
  std::vector<int64_t> seen_counts;
  IntervalFolder folder(2, 1.0, 2.5, 1'800'000'000.0, [&](const IntervalRecord& r) {
    seen.push_back(r.summary);
    seen_counts.push_back(r.latency_ns.count());
    EXPECT_EQ(r.measure_start_epoch_s, 1'800'000'000.0);
    if (r.summary.start_s == 0) {  // the folded histogram is the merge of both workers'
      for (double p : {0.0, 50.0, 99.0, 100.0}) {
        EXPECT_EQ(r.latency_ns.value_at_percentile(p), both.value_at_percentile(p)) << p;
      }
    }
  });
  folder.add(0, {counts_of(0, a), counts_of(1, a)});
  folder.fold_ready(false);
  EXPECT_TRUE(seen.empty());  // worker 1 has not finished interval 0
  folder.add(1, {counts_of(0, b)});
  folder.fold_ready(false);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].count, 13);  // 3 values x 3 + 2 values x 2
  EXPECT_EQ(seen[0].p50_ns, both.value_at_percentile(50));
  EXPECT_EQ(seen[0].p99_ns, both.value_at_percentile(99));
  EXPECT_EQ(seen[0].max_ns, both.max());
  // At the end, what only some workers reached is folded too; the last interval ends with the
  // phase (2.5 s: interval 2 would be 0.5 s long).
  folder.add(1, {counts_of(1, b), counts_of(2, b)});
  folder.fold_ready(true);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen_counts[1], 9 + 4);
  EXPECT_EQ(seen_counts[2], 4);
  EXPECT_DOUBLE_EQ(seen[2].start_s, 2.0);
  EXPECT_DOUBLE_EQ(seen[2].length_s, 0.5);
  const std::vector<core::LatencyInterval> summaries = folder.take_summaries();
  ASSERT_EQ(summaries.size(), 3u);
  EXPECT_EQ(summaries[1].count, 13);
}

// Regression: the last interval holds the grace period's responses but stayed one second long,
// so an overloaded open-loop run's drain showed as a last second at 2.5 times the server's
// throughput. It now lasts until its last response; the others keep their length.
TEST(IntervalFolder, TheLastIntervalLastsUntilItsLastResponse) {
  core::Histogram h = core::Histogram::for_latency();
  h.record(h.lowest_equivalent_value(1'000'000), 10);
  std::vector<core::LatencyInterval> seen;
  IntervalFolder folder(2, 1.0, 2.0, 0.0,
                        [&](const IntervalRecord& r) { seen.push_back(r.summary); });
  IntervalCounts first = counts_of(0, h), last = counts_of(1, h), other = counts_of(1, h);
  first.last_s = 0.98;
  last.last_s = 3.5;   // worker 0's last response came 1.5 s into the grace period
  other.last_s = 2.2;  // worker 1's earlier
  folder.add(0, {first, last});
  folder.add(1, {counts_of(0, h), other});
  folder.fold_ready(true);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_DOUBLE_EQ(seen[0].length_s, 1.0);
  EXPECT_DOUBLE_EQ(seen[1].length_s, 2.5);
  EXPECT_EQ(seen[1].count, 20);
}

TEST(IntervalFolder, TheGracePeriodsResponsesLengthenTheLastIntervalOfARun) {
  // Every answer comes 50 ms after its request: of 200 req/s offered for 1 s, those of the last
  // 50 ms are answered in the grace period.
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response(), 50ms);
  });
  LoadOptions o;
  o.request.url = *http::parse_url(server.url("/"));
  o.rate_rps = 200;
  o.connections = 50;  // 1,000 req/s at most through 50 ms answers: every request is sent
  o.warmup = 0ms;
  o.duration = 1s;
  o.timeout = 5s;
  o.interval = 500ms;
  auto result = run_load(o);
  ASSERT_TRUE(result) << result.status().message();
  ASSERT_EQ(result->intervals.size(), 2u);
  const core::LatencyInterval& last = result->intervals.back();
  EXPECT_GT(last.length_s, 0.5) << "the responses of the last 50 ms came after the phase";
  EXPECT_LT(last.length_s, 1.0);
  int64_t responses = 0;
  for (const core::LatencyInterval& i : result->intervals) responses += i.count;
  EXPECT_EQ(responses, static_cast<int64_t>(result->stats.ok())) << "every response in one";
}

// Regression (issue 11): a run kept every interval's histogram to the end (RSS grew 0.13 MB a
// second at 27,000 req/s with --json). Intervals now go out as they complete, while the run is
// still going, and the result keeps only their summaries.
TEST(IntervalFolder, ARunHandsEachIntervalOverWhileItIsStillGoing) {
  testing::ScriptedServer server([](int, int, const std::string&) {
    return testing::Action::respond(testing::ok_response());
  });
  LoadOptions o;
  o.request.url = *http::parse_url(server.url("/"));
  o.connections = 2;
  o.threads = 2;
  o.warmup = 0ms;
  o.duration = 1200ms;
  o.interval = 300ms;
  RunControl control;
  std::vector<size_t> served_at;  // requests the server had seen when each interval came
  std::vector<int64_t> counts;
  control.on_interval = [&](const IntervalRecord& r) {
    served_at.push_back(server.targets().size());
    counts.push_back(r.latency_ns.count());
    EXPECT_EQ(r.latency_ns.count(), r.summary.count);
  };
  auto result = run_load(o, control);
  ASSERT_TRUE(result) << result.status().message();
  ASSERT_EQ(served_at.size(), 4u);
  // The server went on serving after the first interval came out: it came during the run.
  EXPECT_LT(served_at.front(), server.targets().size());
  ASSERT_EQ(result->intervals.size(), 4u);
  int64_t total = 0;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(result->intervals[i].count, counts[i]);
    total += counts[i];
  }
  EXPECT_EQ(total, static_cast<int64_t>(result->stats.ok()));
}

// Each interval carries the errors counted in it, so a burst (a deploy's 502s) shows in its
// second; across intervals they add up to the run's.
TEST(IntervalFolder, ErrorsLandInTheIntervalTheyHappenedIn) {
  IntervalFolder folder(2, 1.0, 3.0, 0, {});
  core::Histogram h = core::Histogram::for_latency();
  h.record(1'000);
  IntervalCounts a0 = counts_of(0, h), a1 = counts_of(1, h), b0 = counts_of(0, h);
  a0.errors = 0;
  a1.errors = 5;
  b0.errors = 2;
  folder.add(0, {a0, a1});
  folder.add(1, {b0});
  folder.fold_ready(true);
  const std::vector<core::LatencyInterval> s = folder.take_summaries();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].errors, 2);
  EXPECT_EQ(s[1].errors, 5);
}

TEST(IntervalFolder, ARunsIntervalErrorsAddUpToItsErrors) {
  // Every fourth request is a 503.
  testing::ScriptedServer server([](int, int n, const std::string&) {
    return testing::Action::respond(n % 4 == 3
                                        ? "HTTP/1.1 503 Unavailable\r\nContent-Length: 0\r\n\r\n"
                                        : testing::ok_response());
  });
  LoadOptions o;
  o.request.url = *http::parse_url(server.url("/"));
  o.connections = 2;
  o.warmup = 0ms;
  o.duration = 900ms;
  o.interval = 300ms;
  auto result = run_load(o);
  ASSERT_TRUE(result) << result.status().message();
  int64_t errors = 0;
  for (const core::LatencyInterval& i : result->intervals) errors += i.errors;
  EXPECT_GT(errors, 0);
  EXPECT_EQ(errors, static_cast<int64_t>(result->stats.total_errors()));
}

}  // namespace
}  // namespace knee::engine
