#include "cli/thresholds.h"

#include <fmt/core.h>

#include <cstdio>

namespace knee::cli {

void add_threshold_option(CLI::App& app, std::vector<std::string>& texts) {
  app.add_option("--threshold", texts,
                 "Pass/fail check, repeatable: METRIC OP VALUE like 'p99<50ms', 'errors<0.1%', "
                 "'rps>=1000' (p50 p90 p99 p999 mean max with ns/us/ms/s; throughput or rps in "
                 "req/s; errors as a % of requests sent or a count; < <= > >=). Exit 3 when any "
                 "fails")
      ->allow_extra_args(false);
}

core::Result<std::vector<analysis::Threshold>> parse_thresholds(
    const std::vector<std::string>& texts) {
  std::vector<analysis::Threshold> out;
  for (const std::string& text : texts) {
    auto t = analysis::parse_threshold(text);
    if (!t) return core::Status::invalid_argument("--threshold: " + t.status().message());
    out.push_back(std::move(t).value());
  }
  return out;
}

bool print_threshold_check(const std::vector<report::ThresholdOutcome>& outcomes) {
  // The report first: stdout piped is block-buffered, and with 2>&1 the verdict on stderr came
  // out above the whole report (regression, a new user's trial).
  std::fflush(stdout);
  bool passed = true;
  for (const report::ThresholdOutcome& o : outcomes) {
    if (o.passed) continue;
    passed = false;
    fmt::print(stderr, "knee: threshold {}\n", o.line);
  }
  if (passed && !outcomes.empty()) {
    fmt::print(stderr, "thresholds: all {} passed\n", outcomes.size());
  }
  return passed;
}

bool went_away(const report::LevelFigures& level, const std::string& label) {
  const std::optional<report::UnreachableFigures>& u = level.median.unreachable;
  if (!u) return false;
  std::fflush(stdout);  // after the report, as print_threshold_check does
  fmt::print(stderr,
             "knee: {}target unreachable since {:.1f} s of the measured phase: {} connects failed "
             "after its last answer and it did not come back; exit 1\n",
             label.empty() ? "" : label + ": ", u->since_s, u->connect_failures);
  return true;
}

bool went_away(const std::vector<report::LevelFigures>& levels) {
  bool any = false;
  for (const report::LevelFigures& l : levels) {
    any |= went_away(l, l.median.open
                            ? fmt::format("rate {:.0f} req/s", l.median.open->target_rate_rps)
                            : fmt::format("concurrency {}", l.median.concurrency.value_or(0)));
  }
  return any;
}

}  // namespace knee::cli
