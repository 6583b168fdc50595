// --threshold on `knee run` and `knee sweep`: k6-style pass/fail checks (analysis/threshold.h)
// parsed before anything runs and evaluated on the result's median run(s) after it is printed
// (report::check_thresholds); its lines go to stderr. And the other check on a result that sets
// an exit code: a target that went away (exit 1).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "analysis/threshold.h"
#include "core/status.h"
#include "report/document.h"

namespace knee::cli {

// Declares the repeatable --threshold option on `app`, filling `texts`.
void add_threshold_option(CLI::App& app, std::vector<std::string>& texts);

// Parses every text. Errors: kInvalidArgument "--threshold: <what analysis says>" for the first
// bad one.
core::Result<std::vector<analysis::Threshold>> parse_thresholds(
    const std::vector<std::string>& texts);

// Prints the outcomes of report::check_thresholds on stderr, after flushing the report on stdout:
// "knee: threshold <line>" per failed one, or "thresholds: all N passed"; nothing for none.
// True when all passed.
bool print_threshold_check(const std::vector<report::ThresholdOutcome>& outcomes);

// True when the level's target stopped answering and never came back in the measured phase
// (RunFigures::unreachable); then prints "knee: <label>: target unreachable since ..." on
// stderr. `label` names the level or scenario; empty for a single run.
bool went_away(const report::LevelFigures& level, const std::string& label);
// went_away() for every level of a sweep, each named by its concurrency or rate; true when any.
bool went_away(const std::vector<report::LevelFigures>& levels);

}  // namespace knee::cli
