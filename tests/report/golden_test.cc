// Golden files for the renderers (report/render.h and report/compare.h): fixed result models
// (support/report_fixtures.h) rendered as the terminal text and as JSON, compared byte for byte
// with the files in tests/report/golden/. A mismatch fails with a line diff (- golden, + now).
//
// After an intended change of the output, regenerate the files and review the diff:
//   KNEE_UPDATE_GOLDEN=1 build/asan/report_test --gtest_filter='Golden.*'
//   git diff tests/report/golden/
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/units.h"
#include "report/analyse.h"
#include "report/compare.h"
#include "report/merge.h"
#include "report/queueing.h"
#include "report/render.h"
#include "support/report_fixtures.h"

namespace knee::report {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A line diff of `want` against `got` by longest common subsequence: changed lines with two
// lines of context, "-" for the golden file's lines, "+" for the output's, "@@ line N" where a
// hunk starts in the golden file.
std::string line_diff(const std::string& want, const std::string& got) {
  const std::vector<std::string> a = lines_of(want);
  const std::vector<std::string> b = lines_of(got);
  const size_t n = a.size();
  const size_t m = b.size();
  std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  struct Op {
    char kind;  // ' ', '-', '+'
    size_t line;
    std::string text;
  };
  std::vector<Op> ops;
  size_t i = 0;
  size_t j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ops.push_back({' ', i++, b[j++]});
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back({'-', i, a[i++]});
    } else {
      ops.push_back({'+', i, b[j++]});
    }
  }
  std::string out;
  size_t last_shown = 0;
  bool any = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    bool near_change = false;
    for (size_t d = (k >= 2 ? k - 2 : 0); d <= k + 2 && d < ops.size(); ++d) {
      near_change = near_change || ops[d].kind != ' ';
    }
    if (!near_change) continue;
    if (!any || k > last_shown + 1) out += "@@ line " + std::to_string(ops[k].line + 1) + "\n";
    out += std::string(1, ops[k].kind) + ops[k].text + "\n";
    last_shown = k;
    any = true;
  }
  if (!any && want != got) out = "(only the final newline differs)\n";
  return out;
}

// Compares `actual` with tests/report/golden/<name>, or rewrites it when KNEE_UPDATE_GOLDEN=1.
void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(KNEE_GOLDEN_DIR) + "/" + name;
  const char* update = std::getenv("KNEE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing; create it with KNEE_UPDATE_GOLDEN=1";
  std::stringstream want;
  want << in.rdbuf();
  if (want.str() == actual) return;
  ADD_FAILURE() << name << " differs from the golden file " << path
                << " (- golden, + now; if the change is intended, regenerate with "
                   "KNEE_UPDATE_GOLDEN=1 and review the diff):\n"
                << line_diff(want.str(), actual);
}

TEST(Golden, RunText) { expect_golden("run.txt", render_run_text(testing::golden_run_report())); }

// Regression (a new user's trial): with --server-pid the run's text named the server's CPU only
// inside the verdict; it now has its own line beside the client's, with the CPU per response.
TEST(RunText, NamesTheFollowedServersCpu) {
  core::RunResult r = testing::synthetic_closed_run(10, 2900, 3.45, 0, 87);
  const RunDocument d =
      analyse_run("http://127.0.0.1:8080/", "now", {}, {r}, testing::fixed_host());
  const std::string text = render_run_text(d);
  const double rps = d.level.median.throughput_rps;
  ASSERT_GT(rps, 0);
  EXPECT_NE(
      text.find(fmt::format(
          "  server CPU   pid 4242: 87% of a core; service demand D = U / X = {} per response\n",
          core::format_duration_ns(0.87 / rps * 1e9))),
      std::string::npos)
      << text;
  r.use.reset();  // no server followed: no line
  const RunDocument none =
      analyse_run("http://127.0.0.1:8080/", "now", {}, {r}, testing::fixed_host());
  EXPECT_EQ(render_run_text(none).find("server CPU"), std::string::npos);
}

// Regression (a new user's trial): a run without --spin printed "busy-polling before sends
// (--spin)", as if the flag had been given; the busy-polling is --spin's default, auto.
TEST(RunText, SaysTheSpinBeforeSendsIsAutoByDefault) {
  RunDocument d = testing::golden_open_run_report();
  d.level.median.client_spin_ns = 40'000'000;
  EXPECT_NE(render_run_text(d).find("  client spin  0.04 s of busy-polling before sends (--spin, "
                                    "auto by default)"),
            std::string::npos)
      << render_run_text(d);
  d.level.median.client_spin_ns = 0;  // no spinning: no line
  EXPECT_EQ(render_run_text(d).find("client spin"), std::string::npos);
}

// Regression (a new user's trial): a run whose every answer was a 404 printed "Little's law N =
// 1, X * mean R = 0.00 (differs by more than 5%)": with no successful response there is nothing
// to check.
TEST(RunText, ARunWithoutASuccessfulResponseChecksNoLittlesLaw) {
  const core::RunResult r = testing::synthetic_closed_run(1, 0, 3.0, 0, -1);
  const RunDocument d =
      analyse_run("http://127.0.0.1:8080/", "now", {}, {r}, testing::fixed_host());
  EXPECT_EQ(render_run_text(d).find("Little's law"), std::string::npos) << render_run_text(d);
  EXPECT_FALSE(d.level.little.ratio);
  const RunDocument ok =
      analyse_run("http://127.0.0.1:8080/", "now", {},
                  {testing::synthetic_closed_run(1, 300, 3.0, 0, -1)}, testing::fixed_host());
  EXPECT_NE(render_run_text(ok).find("Little's law N = 1"), std::string::npos);
}

// Regression (a new user's trial): a staged run printed "server CPU ... 48% of a core" beside
// "saturated cpu: server process at 100% of one core", the verdict's busiest sample unnamed.
TEST(RunText, AStagedRunsServerLineGivesItsBusiestSample) {
  RunDocument d =
      analyse_run("http://127.0.0.1:8080/", "now", {},
                  {testing::synthetic_closed_run(10, 2900, 3.45, 0, 48)}, testing::fixed_host());
  ASSERT_TRUE(d.level.median.resources && d.level.median.resources->server);
  ServerFigures& server = *d.level.median.resources->server;
  server.threads = 2;
  server.cpu_max_pct = 100;
  server.busiest_thread_cpu_max_pct = 99;
  const std::string text = render_run_text(d);
  EXPECT_NE(text.find(fmt::format("  server CPU   pid 4242: {:.0f}% of a core (100% in its busiest "
                                  "sample) over 2 threads, busiest {:.0f}% (99% in its busiest "
                                  "sample);",
                                  *server.cpu_pct, *server.busiest_thread_cpu_pct)),
            std::string::npos)
      << text;
}

// Regression (a trial): Ctrl-C in the warm-up printed "0.00 s measured after 3.00 s warm-up", as
// if a warm-up had run whole and nothing been measured after it.
TEST(RunText, ARunInterruptedInItsWarmupSaysNothingWasMeasured) {
  RunDocument d = testing::golden_open_run_report();
  d.params.warmup_s = 3;
  d.level.median.interrupted = true;
  d.level.median.duration_s = 0;
  EXPECT_NE(render_run_text(d).find(", interrupted in the 3.00 s warm-up: nothing measured\n"),
            std::string::npos)
      << render_run_text(d);
  // Nothing below contradicts it: no figures of the empty phase, no verdict.
  EXPECT_NE(render_run_text(d).find("  INTERRUPTED before measuring began: no figures, no "
                                    "verdict\n"),
            std::string::npos);
  EXPECT_EQ(render_run_text(d).find("latency"), std::string::npos) << render_run_text(d);
  EXPECT_EQ(render_run_text(d).find("saturated"), std::string::npos) << render_run_text(d);
  d.params.warmup_s = 0;  // -w 0 (review): no warm-up to be interrupted in
  EXPECT_NE(render_run_text(d).find(", interrupted before measuring began\n"), std::string::npos)
      << render_run_text(d);
  d.params.warmup_s = 3;
  d.level.median.duration_s = 1.5;  // interrupted while measuring: what was measured, as before
  EXPECT_NE(render_run_text(d).find(", 1.50 s measured after 3.00 s warm-up\n"), std::string::npos)
      << render_run_text(d);
}

// Regression (a new user's trial): a rate of 7.5 req/s (-w 0.5s into a ramp, or -r 7.5) was
// printed "7 req/s"; whole rates stay whole.
TEST(RunText, AFractionalRateKeepsItsDecimal) {
  RunDocument d = testing::golden_open_run_report();
  d.level.median.open->target_rate_rps = 7.4999;
  EXPECT_NE(render_run_text(d).find("  open loop: 7.5 req/s target"), std::string::npos)
      << render_run_text(d);
  d.level.median.open->target_rate_rps = 1000;
  EXPECT_NE(render_run_text(d).find("  open loop: 1000 req/s target"), std::string::npos);
}

TEST(RunText, PoissonArrivalsGiveTheirSeedWhenRecorded) {
  RunDocument d = testing::golden_open_run_report();
  ASSERT_EQ(d.params.arrival, "poisson");
  EXPECT_NE(render_run_text(d).find("target (poisson arrivals), "), std::string::npos)
      << "a file from before the seed was recorded";
  d.params.seed = 7;
  EXPECT_NE(render_run_text(d).find("target (poisson arrivals, seed 7), "), std::string::npos)
      << render_run_text(d);
  auto back = from_json(to_json(Document{d}), "run.json");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(std::get<RunDocument>(*back).params.seed, 7u);
}

// Regression (a new user's trial): `knee sweep --levels 1,4 -n 200` said "600.00 s measured",
// -d's bound on a count, where the levels lasted 0.2-0.7 s; the count is recorded and printed.
TEST(SweepText, ACountedSweepsHeadingGivesTheCountNotTheBound) {
  SweepDocument d = testing::golden_sweep_report();
  d.params.duration_s = 600;
  d.params.requests = 200;
  const std::string text = render_sweep_text(d);
  EXPECT_NE(text.find("closed loop, 200 requests measured (at most 600 s) after"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("600.00 s measured"), std::string::npos) << text;
  auto back = from_json(to_json(Document{d}), "sweep.json");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(std::get<SweepDocument>(*back).params.requests, 200u);
  d.params.requests.reset();
  EXPECT_NE(render_sweep_text(d).find("600.00 s measured after"), std::string::npos);
}

std::string json_of(const Document& doc) { return to_json(doc).dump(2) + "\n"; }

TEST(Golden, RunJson) { expect_golden("run.json", json_of(testing::golden_run_report())); }

TEST(Golden, H2RunText) {
  expect_golden("h2_run.txt", render_run_text(testing::golden_h2_run_report()));
}

TEST(Golden, H2RunJson) { expect_golden("h2_run.json", json_of(testing::golden_h2_run_report())); }

TEST(Golden, OpenLoopRunText) {
  expect_golden("open_run.txt", render_run_text(testing::golden_open_run_report()));
}

TEST(Golden, OpenLoopRunJson) {
  expect_golden("open_run.json", json_of(testing::golden_open_run_report()));
}

TEST(Golden, MixRunText) {
  expect_golden("mix_run.txt", render_run_text(testing::golden_mix_run_report()));
}

TEST(Golden, MixRunJson) {
  expect_golden("mix_run.json", json_of(testing::golden_mix_run_report()));
}

TEST(Golden, SweepText) {
  expect_golden("sweep.txt", render_sweep_text(testing::golden_sweep_report()));
}

// Regression (a new user's trial): a sweep whose slow levels put the table in milliseconds
// printed a 12 us median as 0.01; the decimals now keep two significant digits of the smallest.
TEST(SweepText, KeepsTwoSignificantDigitsOfTheFastestLevel) {
  SweepDocument d = testing::golden_sweep_report();
  ASSERT_GE(d.levels.front().median.latency_ns.count, 1u);
  d.levels.front().ranges.latency_ns.p50 = Range{12'300, 12'100, 12'600};  // 1 repeat: median
  const std::string text = render_sweep_text(d);
  EXPECT_NE(text.find("median(ms)"), std::string::npos) << text;
  EXPECT_NE(text.find(" 0.012 "), std::string::npos) << text;
  EXPECT_NE(text.find(" 7.066 "), std::string::npos) << "one precision for the column\n" << text;
  d.levels.front().ranges.latency_ns.p50 = Range{2'970'000, 2'970'000, 2'970'000};
  EXPECT_EQ(render_sweep_text(d), render_sweep_text(testing::golden_sweep_report()))
      << "medians of 1 ms and more keep two decimals";
}

// Regression (a trial): a sweep interrupted in its first level's warm-up printed an empty
// table, "no knee within the sweep" and a Little's law that held "at every level" of none.
TEST(SweepText, ASweepWithNoLevelMeasuredSaysSoAndNothingElse) {
  SweepDocument d = testing::golden_sweep_report();
  d.levels.clear();
  d.warnings = {"interrupted during concurrency 1: that level is left out"};
  const std::string text = render_sweep_text(d);
  EXPECT_NE(text.find("\nno level was measured: no table, no knee\nwarning: interrupted during "
                      "concurrency 1: that level is left out\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("knee:"), std::string::npos) << text;
  EXPECT_EQ(text.find("Little's law"), std::string::npos) << text;
  EXPECT_EQ(text.find("concurrency  requests"), std::string::npos) << text;
}

TEST(Golden, SweepJson) { expect_golden("sweep.json", json_of(testing::golden_sweep_report())); }

// The sweep merged from two parts (knee report merge, or rank 0 under mpirun with the clocks
// measured): the table of the whole load, then each part's own figures.
TEST(Golden, MergedSweepText) {
  const auto [a, b] = testing::golden_sweep_parts(0.0031, "loadgen-2");
  auto merged = merge_documents({{"rank 0", Document(a), 0.0}, {"rank 1", Document(b), 0.0012}});
  ASSERT_TRUE(merged) << merged.status().what();
  expect_golden("merged_sweep.txt", render_text(*merged));
}

// The golden sweep against a copy, both as if measured with 3 repeats (ranges +-3 % around
// each figure), where b's levels 16 and 32 are 10 % slower (ranges apart: "b lower"), its p99 at
// 8 is 2 % higher (ranges overlap: "within") and level 1 is missing; read back from JSON as
// `knee report a.json b.json` reads it.
ComparisonDocument golden_comparison() {
  SweepDocument a = testing::golden_sweep_report();
  a.params.repeats = 3;
  for (LevelFigures& level : a.levels) {
    level.repeats = 3;
    for (Range* r :
         {&level.ranges.throughput_rps, &level.ranges.latency_ns.p50, &level.ranges.latency_ns.p90,
          &level.ranges.latency_ns.p99, &level.ranges.latency_ns.p999}) {
      r->min = r->median * 0.97;
      r->max = r->median * 1.03;
    }
  }
  SweepDocument b = a;
  b.params.threads = 2;
  b.levels.erase(b.levels.begin());
  auto scale = [](Range& r, double f) {
    r.median *= f;
    r.min *= f;
    r.max *= f;
  };
  for (LevelFigures& level : b.levels) {
    const int n = level.median.concurrency.value_or(0);
    if (n >= 16) scale(level.ranges.throughput_rps, 0.9);
    if (n == 8) scale(level.ranges.latency_ns.p99, 1.02);
  }
  auto read_back = [](const SweepDocument& d, const std::string& label) {
    auto doc = from_json(to_json(d), label);
    EXPECT_TRUE(doc) << doc.status().message();
    auto side = compare_side(*doc, label);
    EXPECT_TRUE(side) << side.status().message();
    return std::move(side).value();
  };
  auto c = compare(read_back(a, "a.json"), read_back(b, "b.json"));
  EXPECT_TRUE(c) << c.status().message();
  return std::move(c).value();
}

TEST(Golden, CompareText) {
  expect_golden("compare.txt", render_compare_text(golden_comparison()));
}

TEST(Golden, CompareJson) { expect_golden("compare.json", json_of(golden_comparison())); }

// The renderers that moved out of cli/ (issue 10): each against a golden file of a fixed
// document, so a change of their text is seen in review.
TEST(Golden, QueueingModelsText) {
  // The seed's table: mu = 4268 req/s, peaks 416.67 and 833.33 req/s (seed 000).
  auto mm1 = mm1_document(4268, MuSource{"--mu", {}, {}, {}}, {416.67, 833.33});
  ASSERT_TRUE(mm1) << mm1.status().message();
  auto mmc = mmc_document(2, 1000, 1500);
  ASSERT_TRUE(mmc) << mmc.status().message();
  auto little = little_document(std::nullopt, 4268, 15e6);
  ASSERT_TRUE(little) << little.status().message();
  auto usl = usl_document({{1, 955.16},
                           {2, 1878.91},
                           {4, 3548.68},
                           {8, 6231.63},
                           {16, 9432.25},
                           {32, 11374.5},
                           {64, 10891.3}},
                          "points.csv");
  ASSERT_TRUE(usl) << usl.status().message();
  expect_golden("models.txt", render_text(*mm1) + "\n" + render_text(*mmc) + "\n" +
                                  render_text(*little) + "\n" + render_text(*usl));
}

TEST(Golden, LadderProbeAndCapacityText) {
  expect_golden("ladder.txt", render_text(testing::golden_ladder()));
  expect_golden("probe.txt", render_text(testing::golden_probe()));
  expect_golden("capacity.txt", render_text(testing::golden_capacity()));
}

TEST(GoldenDiff, ShowsChangedLinesWithContext) {
  std::string d = line_diff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nD\ne\nf\ng\n");
  EXPECT_EQ(d, "@@ line 2\n b\n c\n-d\n+D\n e\n f\n");
}

}  // namespace
}  // namespace knee::report
