// The result model every renderer draws from: what was measured (target, load parameters),
// what the measurement gave (core::RunResult per run, per repeat), what the analysis concluded
// (knee, Little's law, saturated resource) and where it ran (host context). Renderers are pure
// functions of it.
//
// Repeats (seed 002, principle 4: one run is not a measurement): every run or level holds its
// K runs; figures are reported as the median with the min-max range over them. The analysis
// (knee, Little's law, saturated resource) reads the median run: the repeat whose throughput
// is the median (the lower middle one for an even K).
//
// Shapes and units: durations in seconds (double) where named _s, latencies in ns, rates req/s.
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/knee.h"
#include "analysis/kneedle.h"
#include "analysis/little.h"
#include "analysis/saturation.h"
#include "analysis/usl.h"
#include "core/run_stats.h"
#include "probes/host_context.h"

namespace knee::report {

// The load that was applied, as the user asked for it.
struct LoadParams {
  std::string url;        // the URL template, placeholders unexpanded
  std::string method;     // "GET"
  double duration_s = 0;  // measured phase per run or level
  double warmup_s = 0;
  double timeout_s = 0;
  double grace_s = 0;
  int threads = 1;
  int repeats = 1;
  std::string arrival = "uniform";  // open loop only
};

// The median and the extremes of one figure over the repeats.
struct Range {
  double median = 0;
  double min = 0;
  double max = 0;
};
// Median (the mean of the two middle values for an even count), min and max; all 0 when empty.
Range range_of(std::vector<double> values);

// One run or sweep level over its repeats.
struct Repeated {
  std::vector<core::RunResult> runs;  // one per repeat, in the order they ran
  Range throughput_rps;
  Range mean_ns;
  Range p50_ns;
  Range p90_ns;
  Range p99_ns;
  Range p999_ns;
  size_t median_index = 0;  // index into runs of the median run

  const core::RunResult& median_run() const { return runs[median_index]; }
};
// Folds repeats into ranges. `runs` must not be empty.
Repeated repeated_of(std::vector<core::RunResult> runs);

// What one run or level says about itself and the host.
struct Verdicts {
  analysis::LittleCheck little{};  // N (closed loop) or mean in system (open) against X * mean R
  // Closed loop: X * mean R below 0.9 N means the client did not keep N requests in flight.
  bool little_flagged = false;
  std::optional<analysis::SaturationVerdict> saturation;  // when the host was sampled
};
Verdicts verdicts_of(const core::RunResult& run, const core::ResourceUse* previous_use);

struct RunReport {
  std::string target;      // what was measured, in words (e.g. the built-in server's parameters)
  std::string started_at;  // ISO 8601 UTC
  LoadParams params;
  Repeated result;
  Verdicts verdicts;  // of the median run
  probes::HostContext host;
};

struct SweepReport {
  std::string target;
  std::string started_at;
  LoadParams params;
  std::vector<Repeated> levels;    // in increasing concurrency
  std::vector<Verdicts> verdicts;  // one per level, of its median run
  analysis::KneeVerdict knee;
  // The Universal Scalability Law fitted to the median (N, X) points; empty with fewer than 3
  // levels or when the fit failed (usl_error says why).
  std::optional<analysis::UslFit> usl;
  std::string usl_error;
  // Kneedle's secondary knee ("diminishing returns from"), when it finds one.
  std::optional<analysis::Kneedle> kneedle;
  // Where the server's CPU was sampled: its CPU service demand per request D = U / X (ns of CPU
  // per request, U in cores) at the last level, and the throughput bound 1/D it implies (req/s),
  // beside the measured maximum (the utilisation law, Denning & Buzen 1978).
  std::optional<double> cpu_demand_ns;
  std::optional<double> cpu_bound_rps;
  probes::HostContext host;
  std::vector<std::string> warnings;  // about the measurement, in plain words
};

// Builds a run report's analysis from its repeats.
RunReport analyse_run(std::string target, std::string started_at, LoadParams params,
                      std::vector<core::RunResult> runs, probes::HostContext host);

// Builds the analysis parts (Little's law and saturated resource per level, the knee on the
// median throughput and median p99) from the measured levels, each a list of repeats.
SweepReport analyse_sweep(std::string target, std::string started_at, LoadParams params,
                          std::vector<std::vector<core::RunResult>> levels,
                          probes::HostContext host);

}  // namespace knee::report
