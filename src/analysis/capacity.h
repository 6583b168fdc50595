// Capacity for an SLO: the highest open-loop arrival rate (req/s) at which every SLO holds with
// no errors, found by a bracket-then-bisect search over measured steps (issue 4, `knee
// capacity`).
//
// Search:
//   1. Bracket: measure start_rate_rps, then double it (capped at max_rate_rps) until a rate
//      fails or max_rate_rps passes. Failing at the start rate ends the search with no passing
//      rate.
//   2. Bisect: between the highest pass and the lowest fail, measure the midpoint (rounded to
//      whole req/s) until lowest fail - highest pass <= precision * highest pass.
//   3. Confirm: measure the answer again, confirm_repeats more runs. While any of them fails, the
//      answer was a lucky pass near the edge: it becomes the lowest fail, and the next candidate
//      is confirmed instead: the highest other rate that passed everywhere when it lies within one
//      precision step below, else the rate one precision step below (rounded to whole req/s). A
//      max_rate_rps answer is confirmed the same way. The reported rate
//      has then passed every one of repeats + confirm_repeats runs (or confirm_repeats runs for a
//      stepped-down rate), so a later measurement at that rate meets the SLO far more often than
//      a rate that passed once. Why: near saturation p99 swings from run to run; the search alone
//      reported 4200 req/s for /tracking at p99<20ms, yet three later runs at 4200 gave p99
//      15.8 to 30.2 ms (issue 4, point 4).
// Each step is measured `repeats` times and passes only when every repeat passes: a
// conservative answer, one noisy failing repeat fails the step (the capacity is then under-,
// never over-stated).
// A repeat passes when every SLO (analysis/threshold.h) holds on its figures, its error count is
// 0 (core::RunStats::total_errors()) and its achieved arrival rate is at least 99 % of the
// target (the client kept up, so the schedule really was applied).
//
// Units: rates in req/s, latencies in ns, precision a fraction (0.05 = 5 %).
// Pure logic: the measurements come from a caller-supplied function (the engine in `knee
// capacity`, a fake in tests); no I/O, no clock. Not thread-safe beyond what `measure` is.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/threshold.h"
#include "core/status.h"

namespace knee::analysis {

struct CapacityOptions {
  std::vector<Threshold> slos;  // every one must hold; at least one
  double start_rate_rps = 100;  // first rate measured, > 0
  double max_rate_rps = 1e6;    // the bracket stops doubling here, >= start_rate_rps
  double precision = 0.05;      // stop bisecting when (fail - pass) <= precision * pass, > 0
  int repeats = 3;              // measurements per step, 1..100
  int confirm_repeats = 3;      // measurements of the answer in the confirm phase, 0..100 (0: off)
  int max_steps = 100;          // safety bound on the number of steps, >= 1
};

// One measurement at one rate, as the measure function returns it.
struct CapacityMeasurement {
  ThresholdInput figures;   // latency percentiles, throughput, errors, sent
  double achieved_rps = 0;  // requests actually sent per second of the measured phase
  // Requests per second the schedule asked for in the phase (0: the target rate); Poisson
  // arrivals vary around the target, so "kept up" compares with this.
  double scheduled_rps = 0;
  bool interrupted = false;  // the run was cut short (Ctrl-C): the search stops, unjudged
  // What limited the run as knee saw it from its own figures (saturation.h's rule without the
  // host's: "client", "unreachable", "pool" or "none"), in that rule's words; "" when not judged
  // (a fake in tests). It does not pass or fail a repeat: it says whose limit a failure is.
  std::string limit;
  std::string limit_detail;
  // The busiest client worker thread's CPU demand over the run, 0..1 (1 = a whole core); NaN
  // unknown.
  double client_thread_cpu_demand = std::numeric_limits<double>::quiet_NaN();
};

// One repeat of one step, judged.
struct CapacityRepeat {
  CapacityMeasurement measurement;
  bool passed = false;
  std::vector<std::string> failures;  // why it failed: threshold lines, errors, achieved rate
};

enum class CapacityPhase { kBracket, kBisect, kConfirm };
// "bracket", "bisect" or "confirm".
const char* phase_name(CapacityPhase phase);

struct CapacityStep {
  double rate_rps = 0;
  CapacityPhase phase = CapacityPhase::kBracket;
  bool passed = false;  // every repeat passed
  std::vector<CapacityRepeat> repeats;
};

struct CapacityResult {
  // The highest rate that passed every step measured at it (search and confirm); empty: no rate
  // passed (even the start failed).
  std::optional<double> capacity_rps;
  std::optional<double> lowest_fail_rps;  // empty: max_rate_rps passed (or interrupted early)
  bool reached_max = false;               // max_rate_rps itself passed
  // capacity_rps passed the confirm phase (false when confirm_repeats is 0, or the search ended
  // before it: interrupted, out of steps).
  bool confirmed = false;
  bool interrupted = false;         // the search stopped at an interrupted measurement
  std::vector<CapacityStep> steps;  // in the order measured
};

// Ok when `slo` is an upper bound (< or <=): the search assumes an objective that holds at a low
// rate and breaks as the rate grows. A lower bound ('rps>=1000', 'p50>1ms') fails at the start
// rate and would read as "no capacity". Errors: kInvalidArgument quoting the objective.
core::Status check_capacity_slo(const Threshold& slo);

// Measures one repeat at `rate_rps` (`repeat` counts from 0). An error aborts the search.
using CapacityMeasure =
    std::function<core::Result<CapacityMeasurement>(double rate_rps, int repeat)>;

// Judges one measurement at `rate_rps` against the SLOs, the zero-error and the 99 % achieved
// rate conditions.
CapacityRepeat judge_capacity_repeat(const std::vector<Threshold>& slos, double rate_rps,
                                     const CapacityMeasurement& m);

// Runs the search above. `on_step`, when set, is called after each completed step (for progress
// output). Errors: kInvalidArgument for bad options (the message names the field); any error
// `measure` returns, unchanged.
core::Result<CapacityResult> find_capacity(
    const CapacityOptions& options, const CapacityMeasure& measure,
    const std::function<void(const CapacityStep&)>& on_step = {});

}  // namespace knee::analysis
