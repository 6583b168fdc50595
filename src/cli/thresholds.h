// --threshold on `knee run` and `knee sweep`: k6-style pass/fail checks (analysis/threshold.h)
// parsed before anything runs and evaluated on the report's median run(s) after it is printed.
// Failing thresholds are printed to stderr, one line each; when all pass, one line
// "thresholds: all N passed". Nothing is printed when no threshold was given.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "analysis/threshold.h"
#include "core/run_stats.h"
#include "core/status.h"
#include "report/model.h"

namespace knee::cli {

// Declares the repeatable --threshold option on `app`, filling `texts`.
void add_threshold_option(CLI::App& app, std::vector<std::string>& texts);

// Parses every text. Errors: kInvalidArgument "--threshold: <what analysis says>" for the first
// bad one.
core::Result<std::vector<analysis::Threshold>> parse_thresholds(
    const std::vector<std::string>& texts);

// One run's figures for the thresholds: latency percentiles, mean and max of successful
// responses, throughput, errors = stats.total_errors(), sent = stats.sent.
analysis::ThresholdInput threshold_input(const core::RunResult& run);

// Run: checks every threshold against `run` and prints as above. True when all passed.
bool check_thresholds(const std::vector<analysis::Threshold>& thresholds,
                      const core::RunResult& run);

// Sweep: checks every threshold against each level's median run; a threshold fails when it fails
// at any level, and its line names the first such level (and how many others). True when all
// passed.
bool check_thresholds(const std::vector<analysis::Threshold>& thresholds,
                      const std::vector<report::Repeated>& levels);

}  // namespace knee::cli
