// From measurements to documents: what a run or a sweep measured (core::RunResult per repeat),
// what the analysis concludes about it (knee, Little's law, saturated resource, USL, Kneedle,
// service demand, warnings) and where it ran, folded into the result documents of document.h
// that every renderer draws from.
//
// Repeats (seed 002, principle 4: one run is not a measurement): every run or level holds its K
// runs; figures are reported as the median with the min-max range over them. The analysis
// (knee, Little's law, saturated resource) reads the median run: the repeat whose throughput is
// the median (the lower middle one for an even K).
//
// Pure functions of their inputs. Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "analysis/little.h"
#include "analysis/saturation.h"
#include "analysis/threshold.h"
#include "analysis/usl.h"
#include "core/histogram.h"
#include "core/run_stats.h"
#include "probes/host_context.h"
#include "report/document.h"

namespace knee::report {

// The index of the median run of `runs` by throughput (the lower middle one); `runs` not empty.
size_t median_index(const std::vector<core::RunResult>& runs);

// Summaries of histograms and host context as the documents hold them.
LatencySummary latency_summary(const core::Histogram& h);
HostFigures host_figures(const probes::HostContext& h);
// The host's figures over a window as written (unknown figures empty), and a Little's law check.
ResourceFigures resource_figures(const core::ResourceUse& u);
LittleFigures little_figures(const analysis::LittleCheck& l);
UslFigures usl_figures(const analysis::UslFit& fit);
// One run's figures (everything but the verdicts).
RunFigures run_figures(const core::RunResult& r);

// The saturation rule (analysis/saturation.h) on what knee saw of itself alone, no host figures:
// "unreachable", "client", "pool" or "none" (network when its own connections retransmitted).
// For a run whose host was not sampled (`knee capacity`'s steps): whose limit a failure was.
analysis::SaturationVerdict client_side_verdict(const core::RunResult& r);

// One run or level over its repeats, with its verdicts. previous_use: the resources of the level
// before (the disk's await-growth rule), nullptr for the first.
LevelFigures level_figures(const std::vector<core::RunResult>& runs,
                           const core::ResourceUse* previous_use);

// `knee run`: the repeats of one run.
RunDocument analyse_run(std::string target, std::string started_at, LoadParams params,
                        const std::vector<core::RunResult>& runs, const probes::HostContext& host);

// `knee sweep`: the levels, each a list of repeats, in increasing concurrency or rate.
SweepDocument analyse_sweep(std::string target, std::string started_at, LoadParams params,
                            const std::vector<std::vector<core::RunResult>>& levels,
                            const probes::HostContext& host);

// Plain-words notes on how to read a run: coordinated omission in a closed loop with a stall, an
// open-loop rate that was not achieved (and why: the level's saturated resource when it is the
// server's, else the pool or the client). Empty when there is nothing to say.
std::vector<std::string> run_notes(const RunFigures& r,
                                   const std::optional<SaturatedFigures>& saturated = {});

// A plain-http run that got no response at all, every error a close before one: the note that
// the port may speak TLS ("try https://"), the mirror of net's "plain HTTP? try http://" for
// the opposite mistake; empty otherwise. Regression (a new user's trial): http:// to
// `knee serve --tls` failed every request with closed_before_response: ECONNRESET, no word why.
std::optional<std::string> tls_port_note(const std::string& url, const RunFigures& r);

// --threshold checked on each level's printed figures (threshold_input(level): with repeats, the
// medians over them), one outcome per threshold in order (the documents' `thresholds`): a
// threshold fails when it fails at any level, and in a sweep (`name_levels`) its line names the
// first such level (and how many others); empty when no threshold was given.
std::vector<ThresholdOutcome> check_thresholds(const std::vector<analysis::Threshold>& thresholds,
                                               const std::vector<LevelFigures>& levels,
                                               bool name_levels);

// --strict: the open-loop repeats that sent fewer than 99 % of their schedule, one line each
// ("achieved 812.0 req/s, below 99% of the 1000.0 req/s scheduled"); empty when all kept it.
std::vector<std::string> schedule_shortfalls(const LevelFigures& level);

// The figures --threshold and --slo checks read (analysis/threshold.h): latency percentiles,
// mean and max of successful responses, throughput, every error, the requests sent.
analysis::ThresholdInput threshold_input(const RunFigures& r);
// The same for a level, as its text prints it: with two or more repeats the latency percentiles,
// mean and throughput are the medians over them (Ranges; the mean of the two middle runs for an
// even count, not the lower middle run), max the largest of every run; errors and sent are the
// median run's.
analysis::ThresholdInput threshold_input(const LevelFigures& level);

// The fastest and slowest successful response of a level, ns, over every repeat that had one
// (the median run's own max could lie below the median p99.9 printed beside it). Zeros when no
// run had a successful response.
struct LatencyExtremes {
  int64_t min_ns = 0;
  int64_t max_ns = 0;
};
LatencyExtremes latency_extremes(const LevelFigures& level);

}  // namespace knee::report
