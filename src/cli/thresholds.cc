#include "cli/thresholds.h"

#include <fmt/core.h>

#include "report/analyse.h"

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

bool check_thresholds(const std::vector<analysis::Threshold>& thresholds,
                      const std::vector<report::LevelFigures>& levels, bool name_levels) {
  if (thresholds.empty()) return true;
  bool all = true;
  for (const analysis::Threshold& t : thresholds) {
    std::string first;
    size_t failed_levels = 0;
    for (const report::LevelFigures& level : levels) {
      const analysis::ThresholdResult r =
          analysis::evaluate(t, report::threshold_input(level.median));
      if (r.passed) continue;
      if (failed_levels++ == 0) {
        first = name_levels
                    ? fmt::format("at {} {:g}: {}", level.median.open ? "rate" : "concurrency",
                                  level.median.level_key(), r.line)
                    : r.line;
      }
    }
    if (failed_levels == 0) continue;
    all = false;
    fmt::print(stderr, "knee: threshold {}{}\n", first,
               failed_levels > 1 ? fmt::format(" (and at {} more level{})", failed_levels - 1,
                                               failed_levels > 2 ? "s" : "")
                                 : "");
  }
  if (all) fmt::print(stderr, "thresholds: all {} passed\n", thresholds.size());
  return all;
}

}  // namespace knee::cli
