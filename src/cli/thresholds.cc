#include "cli/thresholds.h"

#include <fmt/core.h>

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

analysis::ThresholdInput threshold_input(const core::RunResult& run) {
  const core::Histogram& h = run.stats.latency_ns;
  analysis::ThresholdInput in;
  in.p50_ns = static_cast<double>(h.value_at_percentile(50));
  in.p90_ns = static_cast<double>(h.value_at_percentile(90));
  in.p99_ns = static_cast<double>(h.value_at_percentile(99));
  in.p999_ns = static_cast<double>(h.value_at_percentile(99.9));
  in.mean_ns = h.mean();
  in.max_ns = static_cast<double>(h.max());
  in.throughput_rps = run.throughput_rps();
  in.errors = run.stats.total_errors();
  in.sent = run.stats.sent;
  return in;
}

bool check_thresholds(const std::vector<analysis::Threshold>& thresholds,
                      const core::RunResult& run) {
  if (thresholds.empty()) return true;
  const analysis::ThresholdInput in = threshold_input(run);
  bool all = true;
  for (const analysis::Threshold& t : thresholds) {
    analysis::ThresholdResult r = analysis::evaluate(t, in);
    if (!r.passed) fmt::print(stderr, "knee: threshold {}\n", r.line);
    all = all && r.passed;
  }
  if (all) fmt::print(stderr, "thresholds: all {} passed\n", thresholds.size());
  return all;
}

bool check_thresholds(const std::vector<analysis::Threshold>& thresholds,
                      const std::vector<report::Repeated>& levels) {
  if (thresholds.empty()) return true;
  bool all = true;
  for (const analysis::Threshold& t : thresholds) {
    std::string first;
    size_t failed_levels = 0;
    for (const report::Repeated& level : levels) {
      const core::RunResult& run = level.median_run();
      analysis::ThresholdResult r = analysis::evaluate(t, threshold_input(run));
      if (r.passed) continue;
      if (failed_levels++ == 0)
        first = fmt::format("at concurrency {}: {}", run.concurrency, r.line);
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
