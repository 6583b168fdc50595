// report::analyse_run / analyse_sweep / run_notes on hand-made results: what the verdicts and
// notes say for a target that went away, a run split by Nagle and delayed ACK, an open-loop
// level held back by its pool, and repeats that disagree.
#include "report/analyse.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/threshold.h"
#include "report/render.h"
#include "support/report_fixtures.h"

namespace knee::report {
namespace {

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const std::string& l : lines) {
    if (l.find(needle) != std::string::npos) return true;
  }
  return false;
}

// A closed-loop run of `seconds` at N = 4 with `ok` successful 1 ms responses.
core::RunResult closed_run(double seconds, uint64_t ok) {
  core::RunResult r;
  r.connections = 4;
  r.threads = 1;
  r.duration_s = seconds;
  r.stats.sent = ok;
  r.stats.completed = ok;
  r.stats.sent_in_phase = ok;
  for (uint64_t i = 0; i < ok; ++i) r.stats.latency_ns.record(1'000'000);
  return r;
}

// Regression (issue 11): the target stopped answering at 2.1 s of a 10 s run; that was reported
// as a client that could not keep its schedule. Named even without host figures.
TEST(Analyse, ATargetThatWentAwayIsUnreachableSinceItsLastAnswer) {
  core::RunResult r = closed_run(10, 2000);
  r.stats.last_ok_ns = 2'100'000'000;
  r.stats.connect_failures_after_ok = 147968;
  r.stats.count_error(core::ErrorKind::kConnect, "ECONNREFUSED");
  const RunDocument d = analyse_run("http://127.0.0.1:9/", "now", {}, {r}, {});
  ASSERT_TRUE(d.level.median.unreachable);
  EXPECT_DOUBLE_EQ(d.level.median.unreachable->since_s, 2.1);
  EXPECT_EQ(d.level.median.unreachable->connect_failures, 147968u);
  ASSERT_TRUE(d.level.saturated);
  EXPECT_EQ(d.level.saturated->resource, "unreachable");
  EXPECT_EQ(d.level.saturated->detail,
            "target unreachable since 2.1 s: 147968 connects failed after its last answer "
            "(ECONNREFUSED)");
}

// Regression (review): a run interrupted before measuring began got a verdict in its JSON and
// HTML ("client-bound") though nothing was measured; its text said no verdict.
TEST(Analyse, ARunInterruptedBeforeMeasuringGetsNoVerdict) {
  core::RunResult r = closed_run(10, 2000);
  r.interrupted = true;
  EXPECT_TRUE(analyse_run("http://127.0.0.1:9/", "now", {}, {r}, {}).level.saturated)
      << "interrupted while measuring: judged on what was measured";
  r.duration_s = 0;
  EXPECT_FALSE(analyse_run("http://127.0.0.1:9/", "now", {}, {r}, {}).level.saturated);
}

// Regression: with --repeat the thresholds were checked on the median run, whose figures the
// text does not print: its max below the printed max, and with an even count its throughput
// below the printed median.
TEST(Analyse, ThresholdsAreCheckedOnTheFiguresTheTextPrints) {
  const LevelFigures level = testing::golden_run_report().level;
  ASSERT_GE(level.runs.size(), 2u);
  const analysis::ThresholdInput in = threshold_input(level);
  EXPECT_EQ(in.p99_ns, level.ranges.latency_ns.p99.median);
  EXPECT_EQ(in.throughput_rps, level.ranges.throughput_rps.median);
  double largest = 0;
  for (const RunFigures& r : level.runs)
    largest = std::max(largest, static_cast<double>(r.latency_ns.max));
  EXPECT_EQ(in.max_ns, largest);
  ASSERT_GT(largest, static_cast<double>(level.median.latency_ns.max));
  // A limit between the median run's max and the largest fails, as the printed max says.
  const double between = (largest + static_cast<double>(level.median.latency_ns.max)) / 2;
  auto t = analysis::parse_threshold(fmt::format("max<{}us", between / 1000));
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_FALSE(check_thresholds({*t}, {level}, false).at(0).passed);
  EXPECT_TRUE(analysis::evaluate(*t, threshold_input(level.median)).passed);
}

// Regression (a new user's trial): 'rps>=150' on --stages 2s:200,1s:200 failed at 133.3 req/s,
// the ramp's mean, with no word of why; the line now says it is the stages' mean and gives the
// busiest second. A run at a constant rate gets no such note.
TEST(Analyse, AThroughputThresholdOnStagesSaysItReadTheirMeanAndTheBusiestSecond) {
  const LevelFigures staged = testing::golden_mix_run_report().level;
  double busiest = 0;
  for (const IntervalFigures& i : staged.median.intervals) {
    ASSERT_TRUE(i.target_rps);
    busiest = std::max(busiest, i.throughput_rps);
  }
  ASSERT_GT(busiest, staged.median.throughput_rps) << "the fixture ramps";
  auto t = analysis::parse_threshold(fmt::format("rps>={}", busiest));
  ASSERT_TRUE(t) << t.status().message();
  std::vector<ThresholdOutcome> check = check_thresholds({*t}, {staged}, false);
  ASSERT_EQ(check.size(), 1u);
  ASSERT_FALSE(check[0].passed);
  EXPECT_NE(check[0].line.find(fmt::format("the mean over the stages, whose rate moves: the "
                                           "busiest second completed {:.1f} req/s",
                                           busiest)),
            std::string::npos)
      << check[0].line;

  const LevelFigures constant = testing::golden_open_run_report().level;
  t = analysis::parse_threshold(fmt::format("rps>={}", constant.median.throughput_rps * 2));
  ASSERT_TRUE(t);
  check = check_thresholds({*t}, {constant}, false);
  ASSERT_FALSE(check.at(0).passed);
  EXPECT_EQ(check[0].line.find("stages"), std::string::npos) << check[0].line;
  t = analysis::parse_threshold("p99<1ns");
  check = check_thresholds({*t}, {staged}, false);
  ASSERT_FALSE(check.at(0).passed);
  EXPECT_EQ(check[0].line.find("stages"), std::string::npos) << "throughput only";
}

// Regression (a new user's trial): http:// to a TLS port (knee serve --tls) failed every request
// with closed_before_response: ECONNRESET and gave no hint, as https:// to a plain port does.
TEST(Analyse, AnHttpRunThatEveryConnectionClosedOnNotesTls) {
  RunFigures r = testing::golden_run_report().level.median;
  r.requests = r.ok = 0;
  r.error_causes = {{"closed_before_response: ECONNRESET", r.sent}};
  const std::string url = "http://127.0.0.1:8443/";
  auto note = tls_port_note(url, r);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("if it speaks TLS on this port, try https://"), std::string::npos);
  EXPECT_FALSE(tls_port_note("https://127.0.0.1:8443/", r)) << "already TLS";
  r.error_causes["timeout"] = 1;
  EXPECT_FALSE(tls_port_note(url, r)) << "other errors: no guess";
  r.error_causes.erase("timeout");
  r.requests = 1;
  EXPECT_FALSE(tls_port_note(url, r)) << "a response came";
}

// Regression (a new user's trial): a run's thresholds decided its exit code but were in no
// result file; each threshold's outcome is kept, in order, for the documents.
TEST(Analyse, EveryThresholdsOutcomeIsKeptInOrder) {
  const SweepDocument sweep = testing::golden_sweep_report();
  ASSERT_GE(sweep.levels.size(), 3u);
  std::vector<analysis::Threshold> ts;
  for (const char* text : {"errors<=1000000", "p50<1ns"})
    ts.push_back(*analysis::parse_threshold(text));
  std::vector<ThresholdOutcome> check = check_thresholds(ts, sweep.levels, /*name_levels=*/true);
  ASSERT_EQ(check.size(), 2u);
  EXPECT_EQ(check[0].threshold, "errors <= 1000000");
  EXPECT_TRUE(check[0].passed);
  EXPECT_EQ(check[0].line, "errors <= 1000000: passed at every level");
  EXPECT_FALSE(check[1].passed);
  EXPECT_TRUE(check[1].line.starts_with("at concurrency 1: p50 < 1ns: FAILED")) << check[1].line;
  EXPECT_NE(check[1].line.find(" more level"), std::string::npos) << "it fails at every level";
  EXPECT_TRUE(check_thresholds({}, sweep.levels, true).empty()) << "none given";

  SweepDocument with = sweep;
  with.thresholds = check;
  auto back = from_json(to_json(Document{with}), "sweep.json");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(std::get<SweepDocument>(*back), with);
  EXPECT_FALSE(to_json(Document{sweep}).contains("thresholds")) << "left out without any";

  RunDocument run = testing::golden_run_report();
  check = check_thresholds({ts[0]}, {run.level}, /*name_levels=*/false);
  ASSERT_EQ(check.size(), 1u);
  EXPECT_TRUE(check[0].line.starts_with("errors <= 1000000: passed (measured ")) << check[0].line;
  run.thresholds = check;
  back = from_json(to_json(Document{run}), "run.json");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(std::get<RunDocument>(*back), run);
}

// The printed min and max and the max threshold read one fold over the repeats: a repeat
// without a successful response (whose summary is all zeros) moves neither.
TEST(Analyse, LatencyExtremesSpanTheRepeatsThatAnswered) {
  LevelFigures level;
  auto run = [](int64_t count, int64_t min, int64_t max) {
    RunFigures r;
    r.latency_ns.count = count;
    r.latency_ns.min = min;
    r.latency_ns.max = max;
    return r;
  };
  level.median = run(10, 2000, 9000);
  level.runs = {run(10, 3000, 12000), level.median, run(0, 0, 0)};
  const LatencyExtremes e = latency_extremes(level);
  EXPECT_EQ(e.min_ns, 2000);
  EXPECT_EQ(e.max_ns, 12000);
  EXPECT_EQ(threshold_input(level).max_ns, 12000.0);
  EXPECT_EQ(latency_extremes(LevelFigures{}).max_ns, 0);
}

// A restart that came back, or a refused connect near the end, is not a target gone away.
TEST(Analyse, ABriefOutageIsNotUnreachable) {
  core::RunResult r = closed_run(10, 2000);
  r.stats.last_ok_ns = 9'500'000'000;  // 0.5 s before the end: under 1 s
  r.stats.connect_failures_after_ok = 3;
  const RunDocument d = analyse_run("http://127.0.0.1:9/", "now", {}, {r}, {});
  EXPECT_FALSE(d.level.median.unreachable);
  ASSERT_TRUE(d.level.saturated);  // named from knee's own figures even without the host's
  EXPECT_NE(d.level.saturated->resource, "unreachable");
}

TEST(Analyse, ResponsesSplitByNagleAndDelayedAckGetANote) {
  RunFigures r;
  r.ok = 1000;
  r.split_responses = 950;
  r.split_gap_mean_ns = 40.2e6;
  const std::vector<std::string> notes = run_notes(r);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("950 of 1000 responses (95%) arrived in two parts 40.2 ms apart on "
                           "average, the signature of Nagle's algorithm meeting delayed ACK",
                           0),
            0u)
      << notes[0];
  r.split_responses = 50;  // 5 %: a few slow bodies, not the pattern
  EXPECT_TRUE(run_notes(r).empty());
}

// Regression (a new user's trial): bytes after a complete response closed connections without a
// word.
TEST(Analyse, BytesNoRequestAskedForGetANoteAndAFigure) {
  core::RunResult run = closed_run(10, 2000);
  run.stats.unsolicited_bytes = 24;
  run.stats.unsolicited_closes = 12;
  const RunFigures r = run_figures(run);
  ASSERT_TRUE(r.unsolicited);
  EXPECT_EQ(*r.unsolicited, (UnsolicitedFigures{24, 12}));
  const std::vector<std::string> notes = run_notes(r);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("the server sent 24 bytes that no request asked for, after a complete "
                           "response",
                           0),
            0u)
      << notes[0];
  EXPECT_NE(notes[0].find("on 12 connections: knee closed them"), std::string::npos) << notes[0];
  EXPECT_FALSE(run_figures(closed_run(10, 2000)).unsolicited);  // none: no member, no note
}

// Regression (a new user's trial): D = U / X came from the last level sampled, and a collapsed
// last level (its server at 100% for a few answers and many timeouts) put the bound 1/D below
// the throughput the sweep had measured.
TEST(Analyse, ServiceDemandComesFromTheLevelThatDidTheMostWorkWithoutErrors) {
  using testing::synthetic_closed_run;
  const std::vector<std::vector<core::RunResult>> levels = {
      {synthetic_closed_run(4, 2000, 2.0, 0, 50.0)},      // D = 0.25 ms
      {synthetic_closed_run(8, 4000, 2.0, 0, 98.0)},      // D = 0.245 ms: the most work
      {synthetic_closed_run(16, 1000, 16.0, 0, 99.0)},    // collapsed: D = 0.99 ms
      {synthetic_closed_run(32, 4400, 7.0, 900, 99.0)}};  // more answers, and 10% timeouts
  const SweepDocument d = analyse_sweep("u", "now", {}, levels, {});
  ASSERT_TRUE(d.service_demand);
  EXPECT_EQ(d.service_demand->level_index, 1u);
  EXPECT_NEAR(d.service_demand->cpu_demand_ns, 0.98 / 4000 * 1e9, 1);
  EXPECT_GE(d.service_demand->cpu_bound_rps, 4000);
  EXPECT_NE(render_sweep_text(d).find("0.245 ms per request at concurrency 8: bound 1/D = 4082"),
            std::string::npos)
      << render_sweep_text(d);
  // With errors at every level, the most work is still where D comes from.
  const SweepDocument all_failing = analyse_sweep("u", "now", {},
                                                  {{synthetic_closed_run(4, 2000, 2.0, 100, 50.0)},
                                                   {synthetic_closed_run(8, 1000, 8.0, 100, 99.0)}},
                                                  {});
  ASSERT_TRUE(all_failing.service_demand);
  EXPECT_EQ(all_failing.service_demand->level_index, 0u);
}

// Regression (a new user's trial): a --stages ramp to an overload averaged the server's CPU over
// the whole phase (half of it at rates far below the peak) and named nothing; the host's figures
// are read at their busiest sample for a staged run.
// `r` as a --stages run: two 1 s intervals of 1000 responses, their stages asking 500 req/s.
core::RunResult staged_over_two_seconds(core::RunResult r) {
  core::LatencyInterval ramp;
  ramp.length_s = 1;
  ramp.count = 1000;
  ramp.target_rps = 500;
  r.intervals = {ramp, ramp};
  return r;
}

TEST(Analyse, AStagedRunIsJudgedAtItsBusiestSampleNotItsMean) {
  core::RunResult r = testing::synthetic_open_run(1000, 2.0);
  r.use = testing::synthetic_closed_run(4, 100, 1.0, 0, 50.0).use;  // a sampled host
  r.use->cpu_busy_pct = {49.0, 20.0};
  r.use->cpu_busy_max_pct = {100.0, 25.0};
  r.use->server->cpu_pct = 50;  // the mean over a ramp from 0 to 1000 req/s
  r.use->server->cpu_max_pct = 99;
  r.use->server->busiest_thread_cpu_pct = 50;
  const RunDocument flat = analyse_run("u", "now", {}, {r}, {});
  ASSERT_TRUE(flat.level.saturated);
  EXPECT_NE(flat.level.saturated->resource, "cpu");  // a constant rate: the mean is the figure
  const RunDocument staged = analyse_run("u", "now", {}, {staged_over_two_seconds(r)}, {});
  ASSERT_TRUE(staged.level.saturated);
  EXPECT_EQ(staged.level.saturated->resource, "cpu") << staged.level.saturated->detail;
  EXPECT_NE(staged.level.saturated->rule.find("--stages: each host figure is its busiest sample"),
            std::string::npos);
  // The figures printed stay the phase's means.
  ASSERT_TRUE(staged.level.median.resources);
}

// Regression (a new user's trial): a staged run that saturated a one-thread server's event loop
// at the top of its ramp read the busiest thread at the phase's mean, and named nothing.
TEST(Analyse, AStagedRunReadsTheServersBusiestThreadAtItsBusiestSample) {
  core::RunResult r = testing::synthetic_open_run(1000, 2.0);
  r.use = testing::synthetic_closed_run(4, 100, 1.0, 0, 50.0).use;
  r.use->cpu_busy_pct = {40.0, 20.0};
  r.use->cpu_busy_max_pct = {70.0, 30.0};
  r.use->server->threads = 4;  // its process is far from 90% x min(4 threads, 2 CPUs)
  r.use->server->cpu_pct = 55;
  r.use->server->cpu_max_pct = 110;
  r.use->server->busiest_thread_cpu_pct = 50;
  r.use->server->busiest_thread_cpu_max_pct = 98;  // its event loop, at the ramp's top
  const RunDocument flat = analyse_run("u", "now", {}, {r}, {});
  ASSERT_TRUE(flat.level.saturated);
  EXPECT_NE(flat.level.saturated->resource, "cpu");
  const RunDocument staged = analyse_run("u", "now", {}, {staged_over_two_seconds(r)}, {});
  ASSERT_TRUE(staged.level.saturated);
  EXPECT_EQ(staged.level.saturated->resource, "cpu") << staged.level.saturated->detail;
  EXPECT_NE(staged.level.saturated->detail.find("busiest thread"), std::string::npos)
      << staged.level.saturated->detail;
}

// Regression (a new user's trial): with --stages the host-contention warning took the host's
// busiest samples less the server's and the client's means, and said other processes used a
// third of a core on an idle host. Over the phase's means nothing else ran.
TEST(Analyse, AStagedRunsHostContentionComesFromThePhasesMeans) {
  core::RunResult r = testing::synthetic_open_run(1000, 2.0);
  r.stats.client_wall_ns = 2'000'000'000;
  r.stats.client_cpu_ns = 400'000'000;  // 0.2 cores over the phase
  r.use = testing::synthetic_closed_run(4, 100, 1.0, 0, 50.0).use;
  r.use->cpu_busy_pct = {45.0, 25.0};       // 0.7 cores: the server's 0.5 and the client's 0.2
  r.use->cpu_busy_max_pct = {100.0, 60.0};  // at different instants, 1.6 cores summed
  r.use->server->cpu_pct = 50;
  r.use->server->cpu_max_pct = 80;
  const auto warned = [](const RunDocument& d) {
    for (const std::string& w : d.level.saturated->warnings) {
      if (w.find("host contention") != std::string::npos) return true;
    }
    return false;
  };
  const RunDocument staged = analyse_run("u", "now", {}, {staged_over_two_seconds(r)}, {});
  ASSERT_TRUE(staged.level.saturated);
  EXPECT_FALSE(warned(staged));
  r.use->cpu_busy_pct = {70.0, 40.0};  // 1.1 cores: 0.4 of them another process's
  const RunDocument busy = analyse_run("u", "now", {}, {staged_over_two_seconds(r)}, {});
  ASSERT_TRUE(busy.level.saturated);
  EXPECT_TRUE(warned(busy));
}

// Regression: the host's figures were read at their busiest sample for --stages, the client's at
// the phase's mean, so a ramp past what the client's one thread could send (quiet for half the
// phase, a full core at its top) showed a client at half a core, and the rule named nothing.
TEST(Analyse, AStagedRunJudgesTheClientAtItsBusiestSecond) {
  core::RunResult r = testing::synthetic_open_run(1000, 2.0);
  r.stats.max_thread_cpu_demand = 0.5;
  r.stats.max_thread_cpu_demand_1s = 0.97;
  const RunDocument flat = analyse_run("u", "now", {}, {r}, {});
  ASSERT_TRUE(flat.level.saturated);
  EXPECT_NE(flat.level.saturated->resource, "client");  // a constant rate: the mean is the figure
  EXPECT_FALSE(flat.level.median.client_max_thread_cpu_demand_1s);
  const RunDocument staged = analyse_run("u", "now", {}, {staged_over_two_seconds(r)}, {});
  ASSERT_TRUE(staged.level.saturated);
  EXPECT_EQ(staged.level.saturated->resource, "client") << staged.level.saturated->detail;
  EXPECT_NE(staged.level.saturated->rule.find("the client's busiest thread is read at its busiest "
                                              "second"),
            std::string::npos);
  EXPECT_EQ(staged.level.median.client_max_thread_cpu_demand_1s, 0.97);
  EXPECT_EQ(staged.level.median.client_max_thread_cpu_demand, 0.5);  // printed as measured
}

// Regression (a new user's trial): a ramp whose last stage exhausted the pool read the phase's
// share, 30 % here, below the pool rule's half, and named nothing; the busiest second's 95 %
// names the pool.
TEST(Analyse, AStagedRunJudgesThePoolAtItsBusiestSecond) {
  core::RunResult r = testing::synthetic_open_run(1000, 2.0);
  r.stats.send_lag_ns.reset();
  for (int i = 0; i < 100; ++i) r.stats.send_lag_ns.record(i < 90 ? 50'000 : 8'000'000);
  r.stats.pool_full_ns = static_cast<int64_t>(0.3 * r.duration_s * 1e9);
  r.stats.max_pool_full_share_1s = 0.95;
  r.stats.max_thread_cpu_demand = 0.2;
  const RunDocument flat = analyse_run("u", "now", {}, {r}, {});
  ASSERT_TRUE(flat.level.saturated);
  EXPECT_NE(flat.level.saturated->resource, "pool") << "a constant rate reads the phase's share";
  const RunDocument staged = analyse_run("u", "now", {}, {staged_over_two_seconds(r)}, {});
  ASSERT_TRUE(staged.level.saturated);
  EXPECT_EQ(staged.level.saturated->resource, "pool") << staged.level.saturated->detail;
  EXPECT_NE(staged.level.saturated->detail.find("busy 95% of the time in the busiest second"),
            std::string::npos)
      << staged.level.saturated->detail;
  EXPECT_NE(staged.level.saturated->rule.find("the pool's exhaustion at its busiest second"),
            std::string::npos);
  ASSERT_TRUE(staged.level.median.open);
  EXPECT_NEAR(staged.level.median.open->pool_full_share, 0.3, 1e-9);  // printed as measured
}

// Regression (issue 11): an open-loop level held back by a slow server said "raise -c or -t".
TEST(Analyse, AnOpenLoopLevelHeldBackByItsPoolSaysSo) {
  core::RunResult r;
  r.target_rate_rps = 1000;
  r.connections = 8;
  r.threads = 1;
  r.duration_s = 2;
  r.stats.scheduled = 2000;
  r.stats.sent = 800;
  r.stats.sent_in_phase = 800;
  r.stats.never_sent = 1200;
  r.stats.late = 790;
  r.stats.pool_full_ns = 1'900'000'000;  // 95 % of the phase
  for (int i = 0; i < 800; ++i) {
    r.stats.service_time_ns.record(10'000'000);
    r.stats.send_lag_ns.record(900'000'000);
    r.stats.latency_ns.record(910'000'000);
  }
  r.stats.completed = 800;
  r.stats.ok_completed_in_phase = 800;
  const SweepDocument d = analyse_sweep("u", "now", {}, {{r}}, {});
  EXPECT_TRUE(any_contains(d.warnings,
                           "the pool of 8 connections was exhausted (95% of the time "
                           "every one was busy) because responses took 10.0"))
      << (d.warnings.empty() ? "no warnings" : d.warnings.front());
  EXPECT_FALSE(any_contains(d.warnings, "raise -c or -t"));
  EXPECT_TRUE(any_contains(d.levels[0].notes, "the pool of 8 connections was exhausted"));
}

// An open-loop run of `duration_s` behind its schedule: `achieved` of `target` req/s, a pool of
// `max_connections`, the client's busiest thread asking for `client_demand` of a core.
RunFigures open_run_behind(double duration_s, int max_connections, double target, double achieved,
                           double client_demand) {
  RunFigures r;
  r.duration_s = duration_s;
  r.max_connections = max_connections;
  r.client_max_thread_cpu_demand = client_demand;
  r.open = OpenLoopFigures{};
  r.open->target_rate_rps = target;
  r.open->achieved_rate_rps = achieved;
  r.open->scheduled = static_cast<uint64_t>(target * duration_s);
  return r;
}

// run_notes' note on the rate not achieved, or "no shortfall note".
std::string shortfall_note(const RunFigures& r, const std::optional<SaturatedFigures>& saturated) {
  for (const std::string& n : run_notes(r, saturated)) {
    if (n.starts_with("the achieved rate")) return n;
  }
  return "no shortfall note";
}

// Regression (a new user's trial): a staged run whose one-thread server saturated at the top of
// its ramp said neither the pool nor the client was at its limit (the pool full 5% of the phase),
// or, with the pool full, to give more connections: the server's saturated resource comes first.
TEST(Analyse, AnOpenLoopShortfallAtASaturatedServerNamesItsResource) {
  RunFigures r = open_run_behind(6, 16, 2500, 2341, 0.1);
  r.open->pool_full_share = 0.05;
  SaturatedFigures cpu;
  cpu.resource = "cpu";
  cpu.detail = "server process at 100% of one core (CPU 0 100% busy)";
  const auto note = [&](const std::optional<SaturatedFigures>& saturated) {
    return shortfall_note(r, saturated);
  };
  EXPECT_NE(note(cpu).find("the server's cpu saturated (server process at 100% of one core (CPU 0 "
                           "100% busy)), so it answered more slowly than the schedule offered"),
            std::string::npos)
      << note(cpu);
  r.open->pool_full_share = 0.9;
  EXPECT_EQ(note(cpu).find("-c"), std::string::npos) << note(cpu);
  SaturatedFigures none;
  none.resource = "none";
  EXPECT_NE(note(none).find("the pool of 16 connections was exhausted"), std::string::npos)
      << note(none);
}

// Regression (a new user's trial): a run behind its schedule was blamed on the client ("give
// more threads with -t") at 3-7 % of a core, with the target gone or the pool full for the last
// stages only. The cause named is the one the figures show.
TEST(Analyse, AnOpenLoopShortfallNamesTheCauseItsFiguresShow) {
  RunFigures r = open_run_behind(4, 250, 1000, 500, 0.03);
  r.open->service_time_ns.count = 2000;
  r.open->service_time_ns.p50 = 505'000'000;
  r.open->pool_full_share = 0.3;  // the last stages only
  auto note = [&] { return shortfall_note(r, std::nullopt); };
  EXPECT_NE(note().find("the pool of 250 connections was exhausted (30% of the time every one "
                        "was busy) because responses took 505.00 ms"),
            std::string::npos)
      << note();
  r.open->service_time_ns = LatencySummary{};  // nothing completed: no "nan" or "0.00 ms"
  EXPECT_NE(note().find("because no response completed (every request failed or timed out)"),
            std::string::npos)
      << note();
  r.client_max_thread_cpu_demand = 0.97;  // a busy client with the pool full a third of the time
  EXPECT_NE(note().find("its busiest thread demanded 97% of a core: give more threads with -t"),
            std::string::npos)
      << note();
  r.open->pool_full_share = 0.6;  // full most of the time: the pool, whatever the client did
  EXPECT_NE(note().find("the pool of 250 connections was exhausted"), std::string::npos) << note();
  r.open->pool_full_share = 0.02;
  r.client_max_thread_cpu_demand = 0.07;
  EXPECT_NE(note().find("neither the pool (full 2% of the time) nor the client (its busiest "
                        "thread at 7% of a core)"),
            std::string::npos)
      << note();
  EXPECT_EQ(note().find("-t"), std::string::npos) << note();
  EXPECT_NE(note().find("its CPU is unknown without --server-pid PID"), std::string::npos)
      << note();
  r.resources = ResourceFigures{};
  r.resources->server = ServerFigures{};  // followed: its CPU is in the verdict
  EXPECT_EQ(note().find("--server-pid"), std::string::npos) << note();
  r.resources.reset();
  r.unreachable = UnreachableFigures{1.5, 2388};  // the server was killed
  EXPECT_NE(note().find("the target stopped answering 1.5 s into the measured phase (2388 "
                        "connects failed after it)"),
            std::string::npos)
      << note();
}

// An open-loop level at `rate` req/s for 2 s: `ok` responses completed in the phase, of
// `latency_ms`, with the server's one thread at `server_cpu_pct` of a core.
core::RunResult open_run(double rate, uint64_t ok, double latency_ms, double server_cpu_pct) {
  core::RunResult r;
  r.target_rate_rps = rate;
  r.connections = 2000;
  r.threads = 1;
  r.duration_s = 2;
  r.stats.scheduled = r.stats.sent = r.stats.sent_in_phase = static_cast<uint64_t>(2 * rate);
  r.stats.completed = r.stats.sent;
  r.stats.ok_completed_in_phase = ok;
  for (uint64_t i = 0; i < ok; ++i) {
    r.stats.latency_ns.record(static_cast<int64_t>(latency_ms * 1e6));
    r.stats.service_time_ns.record(static_cast<int64_t>(latency_ms * 1e6));
    r.stats.send_lag_ns.record(1000);
  }
  core::ResourceUse use;
  use.intervals = 8;
  use.window_s = 2;
  use.cpu_busy_pct = {server_cpu_pct, 10};
  use.cpu_busy_all_pct = (server_cpu_pct + 10) / 2;
  core::ProcessUse server;
  server.pid = 42;
  server.cpu_pct = server.busiest_thread_cpu_pct = server_cpu_pct;
  server.threads = 1;
  use.server = server;
  r.use = use;
  return r;
}

// Regression (issue 11): a rate sweep whose knee the per-doubling rule found named the knee
// level's own resource ("none" at 89 %) instead of the server's CPU at the rate where it fell
// behind. In open loop the knee is the last rate kept, so the verdict is the next level's.
TEST(Analyse, AnOpenLoopKneeNamesWhatSaturatedAtTheRatePastIt) {
  const std::vector<std::vector<core::RunResult>> levels = {{open_run(1000, 1996, 3.4, 25)},
                                                            {open_run(2000, 3994, 3.4, 50)},
                                                            {open_run(4000, 7986, 3.7, 89)},
                                                            {open_run(8000, 7148, 1500, 100)}};
  const SweepDocument d = analyse_sweep("u", "now", {}, levels, {});
  ASSERT_TRUE(d.knee.index.has_value());
  EXPECT_EQ(*d.knee.index, 2u);
  ASSERT_TRUE(d.knee.saturated_index.has_value());
  EXPECT_EQ(*d.knee.saturated_index, 3u);
  EXPECT_EQ(d.knee.saturated, "cpu");
}

// -n that the -d bound cut short says so; one that was met says nothing.
TEST(Analyse, ACountCutShortByTheDurationBoundGetsANote) {
  RunFigures f;
  f.concurrency = 2;
  f.requests_asked = 1'000'000;
  f.sent = 25789;
  f.duration_s = 1;
  const std::vector<std::string> notes = run_notes(f);
  EXPECT_TRUE(any_contains(notes,
                           "-n 1000000: the -d bound of 1.00 s ended the measured phase "
                           "after 25789 of them"));
  f.sent = 1'000'000;
  EXPECT_FALSE(any_contains(run_notes(f), "-n 1000000"));
}

// From a new user's trial: against a server that closes every connection, X * mean R is far
// below N because reconnecting is outside latency; the warning said the client did not keep N
// in flight. It names the reconnects now.
TEST(Analyse, ALowLittleProductFromReconnectsNamesThem) {
  core::RunResult r = closed_run(1, 1000);
  r.stats.reconnects = 1000;  // X * R = 1000 req/s * 1 ms = 1, of N = 4
  const SweepDocument d = analyse_sweep("u", "now", {}, {{r}, {closed_run(1, 1000)}}, {});
  EXPECT_TRUE(any_contains(d.warnings,
                           "connections were reopened 1000 times (the server closes "
                           "them), and the time spent connecting is outside latency"))
      << (d.warnings.empty() ? "no warnings" : d.warnings.front());
}

// Repeats that disagree by more than 1.25x weaken their level, and the sweep says so.
TEST(Analyse, RepeatsThatSpreadMoreThanAQuarterAreWarnedAbout) {
  const std::vector<std::vector<core::RunResult>> levels = {
      {closed_run(1, 1000), closed_run(1, 1300), closed_run(1, 1100)},
      {closed_run(1, 2000), closed_run(1, 2100), closed_run(1, 2050)}};
  const SweepDocument d = analyse_sweep("u", "now", {}, levels, {});
  EXPECT_TRUE(any_contains(d.warnings,
                           "at concurrency 4 the 3 repeats' throughput spread 1.30x "
                           "(1000-1300 req/s), more than 1.25x"))
      << (d.warnings.empty() ? "" : d.warnings.front());
  int spread_warnings = 0;
  for (const std::string& w : d.warnings) spread_warnings += w.find("spread") != std::string::npos;
  EXPECT_EQ(spread_warnings, 1);
}

}  // namespace
}  // namespace knee::report
