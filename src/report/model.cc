#include "report/model.h"

#include <utility>

namespace knee::report {

analysis::LittleCheck little_of(const core::RunResult& run) {
  return analysis::check_little(run.concurrency, run.throughput_rps(),
                                run.stats.latency_ns.count() > 0 ? run.stats.latency_ns.mean() : 0);
}

SweepReport analyse_sweep(std::string target, std::string started_at, LoadParams params,
                          std::vector<core::RunResult> levels, probes::HostContext host) {
  SweepReport r;
  r.target = std::move(target);
  r.started_at = std::move(started_at);
  r.params = std::move(params);
  r.levels = std::move(levels);
  r.host = std::move(host);
  std::vector<analysis::LevelPoint> points;
  for (const core::RunResult& level : r.levels) {
    r.little.push_back(little_of(level));
    points.push_back({static_cast<double>(level.concurrency), level.throughput_rps(),
                      static_cast<double>(level.stats.latency_ns.value_at_percentile(99.0))});
    if (!r.little.back().holds && level.stats.latency_ns.count() > 0) {
      r.warnings.push_back(
          "Little's law: at concurrency " + std::to_string(level.concurrency) +
          " X * mean R differs from N by more than 5%: the client did not keep N requests in "
          "flight, or requests failed");
    }
    if (level.stats.total_errors() > 0) {
      r.warnings.push_back("errors at concurrency " + std::to_string(level.concurrency) +
                           ": the server failed requests; see errors per level");
    }
  }
  r.knee = analysis::find_knee(points);
  return r;
}

}  // namespace knee::report
