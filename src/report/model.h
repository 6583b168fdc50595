// The result model every renderer draws from: what was measured (target, load parameters),
// what the measurement gave (core::RunResult per run or level), what the analysis concluded
// (knee, Little's law) and where it ran (host context). Renderers are pure functions of it.
//
// Shapes and units: durations in seconds (double) where named _s, latencies in ns, rates req/s.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "analysis/knee.h"
#include "analysis/little.h"
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
  std::string arrival = "uniform";  // open loop only
};

struct RunReport {
  std::string target;      // what was measured, in words (e.g. the built-in server's parameters)
  std::string started_at;  // ISO 8601 UTC
  LoadParams params;
  core::RunResult result;
  analysis::LittleCheck little{};  // closed loop: N against X * mean R
  probes::HostContext host;
};

struct SweepReport {
  std::string target;
  std::string started_at;
  LoadParams params;
  std::vector<core::RunResult> levels;        // in increasing concurrency
  std::vector<analysis::LittleCheck> little;  // one per level
  analysis::KneeVerdict knee;
  probes::HostContext host;
  std::vector<std::string> warnings;  // about the measurement, in plain words
};

// Builds the analysis parts (Little's law per level, the knee) from the measured levels.
SweepReport analyse_sweep(std::string target, std::string started_at, LoadParams params,
                          std::vector<core::RunResult> levels, probes::HostContext host);

// Little's law check of one closed-loop run, with the 5% tolerance the sweep uses.
analysis::LittleCheck little_of(const core::RunResult& run);

}  // namespace knee::report
