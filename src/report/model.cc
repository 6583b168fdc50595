#include "report/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace knee::report {

Range range_of(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return Range{median, values.front(), values.back()};
}

Repeated repeated_of(std::vector<core::RunResult> runs) {
  Repeated r;
  r.runs = std::move(runs);
  auto figure = [&](auto get) {
    std::vector<double> v;
    for (const core::RunResult& run : r.runs) v.push_back(get(run));
    return range_of(std::move(v));
  };
  auto pct = [](double p) {
    return [p](const core::RunResult& run) {
      return static_cast<double>(run.stats.latency_ns.value_at_percentile(p));
    };
  };
  r.throughput_rps = figure([](const core::RunResult& run) { return run.throughput_rps(); });
  r.mean_ns = figure([](const core::RunResult& run) {
    return run.stats.latency_ns.count() > 0 ? run.stats.latency_ns.mean() : 0.0;
  });
  r.p50_ns = figure(pct(50));
  r.p90_ns = figure(pct(90));
  r.p99_ns = figure(pct(99));
  r.p999_ns = figure(pct(99.9));
  // The median run: sort indices by throughput, take the lower middle one.
  std::vector<size_t> order(r.runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r.runs[a].throughput_rps() < r.runs[b].throughput_rps();
  });
  r.median_index = order[(order.size() - 1) / 2];
  return r;
}

Verdicts verdicts_of(const core::RunResult& run, const core::ResourceUse* previous_use) {
  Verdicts v;
  const double mean_ns = run.stats.latency_ns.count() > 0 ? run.stats.latency_ns.mean() : 0.0;
  if (run.open_loop()) {
    v.little = analysis::check_little(run.mean_in_system(), run.throughput_rps(), mean_ns);
  } else {
    v.little = analysis::check_little(run.concurrency, run.throughput_rps(), mean_ns);
    v.little_flagged =
        run.stats.latency_ns.count() > 0 && std::isfinite(v.little.ratio) && v.little.ratio < 0.9;
  }
  if (run.use) {
    core::ClientUse client;
    client.max_thread_cpu_share = run.stats.max_thread_cpu_demand;
    v.saturation = analysis::name_saturated_resource(*run.use, client, {}, previous_use);
  }
  return v;
}

RunReport analyse_run(std::string target, std::string started_at, LoadParams params,
                      std::vector<core::RunResult> runs, probes::HostContext host) {
  RunReport r;
  r.target = std::move(target);
  r.started_at = std::move(started_at);
  r.params = std::move(params);
  r.result = repeated_of(std::move(runs));
  r.verdicts = verdicts_of(r.result.median_run(), nullptr);
  r.host = std::move(host);
  return r;
}

SweepReport analyse_sweep(std::string target, std::string started_at, LoadParams params,
                          std::vector<std::vector<core::RunResult>> levels,
                          probes::HostContext host) {
  SweepReport r;
  r.target = std::move(target);
  r.started_at = std::move(started_at);
  r.params = std::move(params);
  r.host = std::move(host);
  std::vector<analysis::LevelPoint> points;
  const core::ResourceUse* previous_use = nullptr;
  for (std::vector<core::RunResult>& runs : levels) {
    r.levels.push_back(repeated_of(std::move(runs)));
    const Repeated& level = r.levels.back();
    const core::RunResult& run = level.median_run();
    r.verdicts.push_back(verdicts_of(run, previous_use));
    if (run.use) previous_use = &*run.use;
    points.push_back({run.open_loop() ? run.target_rate_rps : static_cast<double>(run.concurrency),
                      level.throughput_rps.median, level.p99_ns.median});
    if (run.open_loop() && !run.kept_schedule()) {
      r.warnings.push_back(fmt::format(
          "rate {:.0f} req/s: achieved only {:.1f} req/s; the client could not keep the schedule "
          "(raise -c or -t), so this level did not offer its target rate",
          run.target_rate_rps, run.achieved_rate_rps()));
    }
    const Verdicts& v = r.verdicts.back();
    if (v.little_flagged) {
      r.warnings.push_back(fmt::format(
          "Little's law: at concurrency {} X * mean R = {:.2f} is below 0.9 N: the client did "
          "not keep N requests in flight (client-bound, connect failures, or errors)",
          run.concurrency, v.little.n_eff));
    } else if (!v.little.holds && run.stats.latency_ns.count() > 0 && run.open_loop()) {
      r.warnings.push_back(fmt::format(
          "at rate {:.0f} req/s the mean number in the system ({:.2f}) differs from X * mean R "
          "({:.2f}) by more than 5%: not a steady state, the queue grew during the level",
          run.target_rate_rps, run.mean_in_system(), v.little.n_eff));
    } else if (!v.little.holds && run.stats.latency_ns.count() > 0) {
      r.warnings.push_back(fmt::format(
          "Little's law: at concurrency {} X * mean R = {:.2f} differs from N by more than 5%",
          run.concurrency, v.little.n_eff));
    }
    if (v.saturation && v.saturation->resource == "client") {
      r.warnings.push_back(fmt::format(
          "client-bound at concurrency {}: these numbers measure knee, not the server ({})",
          run.concurrency, v.saturation->detail));
    }
    if (run.stats.completed == 0) {
      r.warnings.push_back(fmt::format(
          "no response at concurrency {}: nothing completed in its measured phase (see errors; "
          "connects that never finished count as connect errors)",
          run.concurrency));
    }
    if (run.stats.total_errors() > 0) {
      r.warnings.push_back(fmt::format("errors at concurrency {}: {} (see errors per level)",
                                       run.concurrency, run.stats.total_errors()));
    }
  }
  const bool open = !r.levels.empty() && r.levels.front().median_run().open_loop();
  r.knee = analysis::find_knee(points, 0.10, 1.5, open ? "rate" : "concurrency");
  std::vector<analysis::ThroughputPoint> xs;
  for (const analysis::LevelPoint& p : points) xs.push_back({p.concurrency, p.throughput_rps});
  if (xs.size() >= 3 && !open) {  // USL and Kneedle model throughput against concurrency
    auto fit = analysis::fit_usl(xs);
    if (fit) {
      r.usl = *fit;
    } else {
      r.usl_error = fit.status().message();
    }
    auto kn = analysis::find_kneedle(xs);
    if (kn && kn->index) r.kneedle = *kn;
  }
  // Service demand from the level with the busiest server (the last one sampled).
  for (auto it = r.levels.rbegin(); it != r.levels.rend(); ++it) {
    const core::RunResult& run = it->median_run();
    if (run.use && run.use->server && core::is_known(run.use->server->cpu_pct) &&
        run.throughput_rps() > 0) {
      double demand_ns = run.use->server->cpu_pct / 100.0 / run.throughput_rps() * 1e9;
      if (demand_ns > 0) {
        r.cpu_demand_ns = demand_ns;
        r.cpu_bound_rps = 1e9 / demand_ns;
      }
      break;
    }
  }
  return r;
}

}  // namespace knee::report
