#include "report/render.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "core/units.h"

namespace knee::report {

using nlohmann::json;

namespace {

constexpr int kSchemaVersion = 1;

double ms(double ns) { return ns / 1e6; }

std::string errors_text(const core::RunStats& s) {
  if (s.total_errors() == 0) return "none";
  std::string out;
  for (const auto& [cause, count] : s.causes) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} x{}", cause, count);
  }
  return out;
}

json host_json(const probes::HostContext& h) {
  return json{{"hostname", h.hostname},
              {"cpu_model", h.cpu_model},
              {"logical_cpus", h.logical_cpus},
              {"kernel", h.kernel},
              {"os", h.os},
              {"governor", h.governor},
              {"turbo", h.turbo},
              {"compiler", h.compiler},
              {"build_type", h.build_type},
              {"cxx_flags", h.cxx_flags},
              {"clock_resolution_ns", h.clock_resolution_ns},
              {"load_avg_1m", std::isfinite(h.load_avg_1m) ? json(h.load_avg_1m) : json()},
              {"warnings", h.warnings}};
}

json params_json(const LoadParams& p) {
  return json{{"url", p.url},           {"method", p.method},       {"duration_s", p.duration_s},
              {"warmup_s", p.warmup_s}, {"timeout_s", p.timeout_s}, {"grace_s", p.grace_s},
              {"threads", p.threads},   {"repeats", p.repeats},     {"arrival", p.arrival}};
}

json num(double v) { return std::isfinite(v) ? json(v) : json(); }

json range_json(const Range& r) {
  return json{{"median", r.median}, {"min", r.min}, {"max", r.max}};
}

json use_json(const core::ResourceUse& u) {
  json cpus = json::array();
  for (double b : u.cpu_busy_pct) cpus.push_back(num(b));
  json disks = json::array();
  for (const core::DiskUse& d : u.disks) {
    disks.push_back(json{{"device", d.device},
                         {"r_per_s", num(d.reads_per_s)},
                         {"w_per_s", num(d.writes_per_s)},
                         {"rkb_per_s", num(d.read_kb_per_s)},
                         {"wkb_per_s", num(d.write_kb_per_s)},
                         {"r_await_ms", num(d.read_await_ms)},
                         {"w_await_ms", num(d.write_await_ms)},
                         {"aqu_sz", num(d.queue_size)},
                         {"util_pct", num(d.util_pct)}});
  }
  json nets = json::array();
  for (const core::NetUse& n : u.nets) {
    nets.push_back(json{{"interface", n.interface},
                        {"rx_bytes_per_s", num(n.rx_bytes_per_s)},
                        {"tx_bytes_per_s", num(n.tx_bytes_per_s)},
                        {"speed_mbit", n.speed_mbit},
                        {"util_pct", num(n.util_pct)},
                        {"drops_per_s", num(n.drops_per_s)}});
  }
  json j{{"window_s", u.window_s},
         {"samples", u.intervals},
         {"cpu_busy_pct", cpus},
         {"cpu_busy_all_pct", num(u.cpu_busy_all_pct)},
         {"cpu_pressure_some_pct", num(u.cpu_pressure_some_pct)},
         {"disks", disks},
         {"io_pressure_some_pct", num(u.io_pressure_some_pct)},
         {"nets", nets},
         {"tcp_retrans_per_s", num(u.tcp_retrans_per_s)},
         {"listen_overflows_per_s", num(u.listen_overflows_per_s)},
         {"listen_drops_per_s", num(u.listen_drops_per_s)},
         {"mem_available_bytes", num(u.mem_available_bytes)},
         {"memory_pressure_some_pct", num(u.memory_pressure_some_pct)}};
  if (u.server) {
    j["server"] = json{{"pid", u.server->pid},
                       {"cpu_pct", num(u.server->cpu_pct)},
                       {"busiest_thread_cpu_pct", num(u.server->busiest_thread_cpu_pct)},
                       {"threads", u.server->threads},
                       {"rss_bytes", num(u.server->rss_bytes)}};
  }
  return j;
}

json little_json(const analysis::LittleCheck& l) {
  return json{{"n", l.n_expected},
              {"x_times_mean_r", num(l.n_eff)},
              {"ratio", num(l.ratio)},
              {"holds", l.holds}};
}

// The latency spectrum (HdrHistogram's percentile distribution) at fixed percentiles, for the
// HTML report's latency-by-percentile chart: [{percentile, value_ns}], empty without responses.
json spectrum_json(const core::Histogram& h) {
  static constexpr double kPercentiles[] = {0,    25,   50,    75,    90,     95,    99,
                                            99.5, 99.9, 99.95, 99.99, 99.995, 99.999};
  json out = json::array();
  if (h.count() == 0) return out;
  for (double p : kPercentiles) {
    out.push_back(json{{"percentile", p}, {"value_ns", h.value_at_percentile(p)}});
  }
  return out;
}

// One entry per interval of the measured phase (per second when intervals were recorded):
// successful responses completed in it, their rate and latency percentiles.
json intervals_json(const std::vector<core::LatencyInterval>& intervals) {
  json out = json::array();
  for (const core::LatencyInterval& i : intervals) {
    const core::Histogram h = i.latency_ns();
    out.push_back(
        json{{"start_s", i.start_s},
             {"length_s", i.length_s},
             {"responses", h.count()},
             {"throughput_rps", i.length_s > 0 ? static_cast<double>(h.count()) / i.length_s : 0.0},
             {"p50_ns", h.value_at_percentile(50)},
             {"p99_ns", h.value_at_percentile(99)},
             {"max_ns", h.max()}});
  }
  return out;
}

// The measured figures of one run or level.
json run_fields(const core::RunResult& r) {
  const core::RunStats& s = r.stats;
  json errors = json::object();
  for (size_t i = 0; i < s.errors.size(); ++i) {
    errors[std::string(core::error_kind_name(static_cast<core::ErrorKind>(i)))] = s.errors[i];
  }
  json status = json::object();
  for (size_t code = 0; code < s.status.size(); ++code) {
    if (s.status[code] > 0) status[std::to_string(code)] = s.status[code];
  }
  return json{{"concurrency", r.concurrency},
              {"threads", r.threads},
              {"requests", s.completed},
              {"ok", s.ok()},
              {"sent", s.sent},
              {"aborted", s.aborted},
              {"reconnects", s.reconnects},
              {"warmup_requests", s.warmup_requests},
              {"duration_s", r.duration_s},
              {"throughput_rps", r.throughput_rps()},
              {"latency_ns", latency_json(s.latency_ns)},
              {"errors", errors},
              {"error_causes", s.causes},
              {"status", status},
              {"client_cpu_cores", r.client_cpu_cores()},
              {"client_max_thread_cpu", s.max_thread_cpu_share},
              {"client_max_thread_cpu_demand", s.max_thread_cpu_demand},
              {"client_spin_ns", s.client_spin_ns},
              {"loop_lag_ns", latency_json(s.loop_lag_ns)},
              {"interrupted", r.interrupted},
              {"resources", r.use ? use_json(*r.use) : json()},
              {"measure_start_epoch_s", r.measure_start_epoch_s},
              {"spectrum", spectrum_json(s.latency_ns)},
              {"intervals", intervals_json(r.intervals)}};
}

// Open-loop figures, added to run_fields() when the run had a target rate.
void add_open_loop_fields(const core::RunResult& r, json& j) {
  const core::RunStats& s = r.stats;
  j["mode"] = "open";
  j["target_rate_rps"] = r.target_rate_rps;
  j["achieved_rate_rps"] = r.achieved_rate_rps();
  j["service_time_ns"] = latency_json(s.service_time_ns);
  j["send_lag_ns"] = latency_json(s.send_lag_ns);
  j["late"] = s.late;
  j["max_backlog"] = s.max_backlog;
  j["mean_in_system"] = r.mean_in_system();
}

std::string percentiles_ms(const core::Histogram& h) {
  if (h.count() == 0) return "none";
  return fmt::format("p50 {:.3f}  p99 {:.3f}  p99.9 {:.3f}  max {:.3f}",
                     ms(static_cast<double>(h.value_at_percentile(50))),
                     ms(static_cast<double>(h.value_at_percentile(99))),
                     ms(static_cast<double>(h.value_at_percentile(99.9))),
                     ms(static_cast<double>(h.max())));
}

std::string open_loop_text(const core::RunResult& r) {
  const core::RunStats& s = r.stats;
  std::string out;
  out += fmt::format(
      "  rate         {:.1f} req/s achieved of {:.1f} target; {} sent over 1 ms late; "
      "largest backlog {}\n",
      r.achieved_rate_rps(), r.target_rate_rps, s.late, s.max_backlog);
  if (!r.kept_schedule()) {
    out += "  WARNING: RATE NOT ACHIEVED (see the note below)\n";
  }
  out += fmt::format("  service (ms) {}   (from the actual send)\n",
                     percentiles_ms(s.service_time_ns));
  out +=
      fmt::format("  send lag(ms) {}   (actual - intended send)\n", percentiles_ms(s.send_lag_ns));
  return out;
}

// The figures of one run or level over its repeats: the median run's fields, the ranges, every
// repeat when there were several, and the verdicts.
json repeated_json(const Repeated& rep, const Verdicts& v) {
  const core::RunResult& run = rep.median_run();
  json j = run_fields(run);
  j["mode"] = run.open_loop() ? "open" : "closed";
  if (run.open_loop()) add_open_loop_fields(run, j);
  j["repeats"] = rep.runs.size();
  j["ranges"] = json{{"throughput_rps", range_json(rep.throughput_rps)},
                     {"latency_ns",
                      {{"mean", range_json(rep.mean_ns)},
                       {"p50", range_json(rep.p50_ns)},
                       {"p90", range_json(rep.p90_ns)},
                       {"p99", range_json(rep.p99_ns)},
                       {"p999", range_json(rep.p999_ns)}}}};
  if (rep.runs.size() > 1) {
    json runs = json::array();
    for (const core::RunResult& r : rep.runs) runs.push_back(run_fields(r));
    j["runs"] = runs;
  }
  j["little"] = little_json(v.little);
  j["little_flagged"] = v.little_flagged;
  if (v.saturation) {
    j["saturated"] = json{{"resource", v.saturation->resource},
                          {"detail", v.saturation->detail},
                          {"evidence", v.saturation->evidence},
                          {"rule", v.saturation->rule}};
  } else {
    j["saturated"] = json();
  }
  return j;
}

// "4251" or, over repeats, "4251 (4100-4300)".
std::string ranged(const Range& r, size_t repeats, double scale, int decimals) {
  if (repeats <= 1) return fmt::format("{:.{}f}", r.median * scale, decimals);
  return fmt::format("{:.{}f} ({:.{}f}-{:.{}f})", r.median * scale, decimals, r.min * scale,
                     decimals, r.max * scale, decimals);
}

std::string pct_text(double v) { return std::isfinite(v) ? fmt::format("{:.0f}%", v) : "-"; }

}  // namespace

std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& left) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      std::string pad(width[c] - row[c].size(), ' ');
      line += c < left.size() && left[c] ? row[c] + pad : pad + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::vector<std::string> run_notes(const core::RunResult& r) {
  std::vector<std::string> notes;
  const core::Histogram& h = r.stats.latency_ns;
  if (!r.open_loop() && h.count() > 0 && h.max() >= 10 * h.value_at_percentile(99) &&
      h.max() > 10'000'000) {
    notes.push_back(
        "the slowest response took over 10x the p99. In a closed loop a connection sends nothing "
        "while it waits, so a server stall delays the requests that would have been sent "
        "meanwhile and they never measure it (coordinated omission). To see what users arriving "
        "at a steady rate would see, run with -r RATE (open loop).");
  }
  if (r.open_loop() && !r.kept_schedule()) {
    notes.push_back(fmt::format(
        "the achieved rate {:.1f} req/s is below 99% of the {:.1f} req/s the schedule asked for "
        "(target {:.1f}): the client could not keep the schedule (connection pool exhausted, or "
        "the client is overloaded); latencies include that wait, but the server was not offered "
        "the target rate.",
        r.achieved_rate_rps(), r.scheduled_rate_rps(), r.target_rate_rps));
  }
  return notes;
}

json latency_json(const core::Histogram& h) {
  return json{{"min", h.min()},
              {"mean", h.count() > 0 ? h.mean() : 0.0},
              {"p50", h.value_at_percentile(50)},
              {"p90", h.value_at_percentile(90)},
              {"p99", h.value_at_percentile(99)},
              {"p999", h.value_at_percentile(99.9)},
              {"max", h.max()},
              {"count", h.count()}};
}

std::string render_run_text(const RunReport& report) {
  const Repeated& rep = report.result;
  const core::RunResult& r = rep.median_run();
  const core::RunStats& s = r.stats;
  const core::Histogram& h = s.latency_ns;
  const size_t k = rep.runs.size();
  const char* threads = r.threads == 1 ? "thread" : "threads";
  std::string out;
  out += fmt::format("knee run {} {}\n", report.params.method, report.params.url);
  if (r.open_loop()) {
    out += fmt::format(
        "  open loop: {:.0f} req/s target ({} arrivals), up to {} connections, {} "
        "{}, {:.2f} s measured after {:.2f} s warm-up\n",
        r.target_rate_rps, report.params.arrival, r.concurrency, r.threads, threads, r.duration_s,
        report.params.warmup_s);
  } else {
    out += fmt::format(
        "  closed loop: {} connection{}, {} {}, {:.2f} s measured after {:.2f} s "
        "warm-up\n",
        r.concurrency, r.concurrency == 1 ? "" : "s", r.threads, threads, r.duration_s,
        report.params.warmup_s);
  }
  if (k > 1) {
    out += fmt::format(
        "  {} repeats: figures are the median (min-max); details of the median "
        "run\n",
        k);
  }
  if (r.interrupted) out += "  INTERRUPTED: the run was stopped early; figures cover part of it\n";
  out += fmt::format("  requests     {} completed ({} ok), {} failed, {} aborted, {} reconnects\n",
                     s.completed, s.ok(), s.request_failures(), s.aborted, s.reconnects);
  out += fmt::format("  throughput   {} req/s\n", ranged(rep.throughput_rps, k, 1, 1));
  if (h.count() > 0) {
    out += fmt::format("  latency (ms) {}min {:.3f}  max {:.3f}\n",
                       r.open_loop() ? "from intended send: " : "",
                       ms(static_cast<double>(h.min())), ms(static_cast<double>(h.max())));
    out += fmt::format("    mean {}  p50 {}  p90 {}\n", ranged(rep.mean_ns, k, 1e-6, 3),
                       ranged(rep.p50_ns, k, 1e-6, 3), ranged(rep.p90_ns, k, 1e-6, 3));
    out += fmt::format("    p99 {}  p99.9 {}\n", ranged(rep.p99_ns, k, 1e-6, 3),
                       ranged(rep.p999_ns, k, 1e-6, 3));
  } else {
    out += "  latency      no successful response\n";
  }
  out += fmt::format("  errors       {}\n", errors_text(s));
  if (r.open_loop()) out += open_loop_text(r);
  const Verdicts& v = report.verdicts;
  if (r.open_loop()) {
    out += fmt::format("  Little's law mean in system L = {:.2f}, X * mean R = {:.2f}\n",
                       r.mean_in_system(), r.littles_n());
  } else if (std::isfinite(v.little.ratio)) {
    out += fmt::format(
        "  Little's law N = {}, X * mean R = {:.2f} ({})\n", r.concurrency, v.little.n_eff,
        v.little.holds ? "holds within 5%"
        : v.little_flagged
            ? "below 0.9 N: fewer than N requests were in flight, or many failed or timed out"
            : "differs by more than 5%");
  }
  out += fmt::format(
      "  client CPU   {:.2f} cores; busiest thread used {:.0f}% of a core and "
      "asked for {:.0f}%; event loop woke {} late at p99\n",
      r.client_cpu_cores(), 100 * s.max_thread_cpu_share, 100 * s.max_thread_cpu_demand,
      core::format_duration_ns(static_cast<double>(s.loop_lag_ns.value_at_percentile(99))));
  if (s.client_spin_ns > 0) {
    out += fmt::format(
        "  client spin  {:.2f} s of busy-polling before sends (--spin), counted in client CPU "
        "cores but not in the busiest thread's share\n",
        static_cast<double>(s.client_spin_ns) / 1e9);
  }
  if (v.saturation) {
    out += fmt::format("  saturated    {}: {}\n", v.saturation->resource, v.saturation->detail);
  }
  for (const std::string& note : run_notes(r)) out += fmt::format("  note: {}\n", note);
  return out;
}

json run_to_json(const RunReport& report) {
  json j = repeated_json(report.result, report.verdicts);
  j["schema_version"] = kSchemaVersion;
  j["kind"] = "run";
  j["target"] = report.target;
  j["started_at"] = report.started_at;
  j["params"] = params_json(report.params);
  j["notes"] = run_notes(report.result.median_run());
  j["host"] = host_json(report.host);
  return j;
}

std::string render_sweep_text(const SweepReport& report) {
  std::string out;
  out += fmt::format("knee sweep: {} {}\n", report.params.method, report.params.url);
  if (report.target != report.params.url) out += fmt::format("  target: {}\n", report.target);
  const bool open = !report.levels.empty() && report.levels.front().median_run().open_loop();
  out += fmt::format(
      "  {} levels, {}, {:.2f} s measured after {:.2f} s warm-up each, {} "
      "client thread{}{}\n\n",
      report.levels.size(), open ? "open loop (latency from the intended send)" : "closed loop",
      report.params.duration_s, report.params.warmup_s, report.params.threads,
      report.params.threads == 1 ? "" : "s",
      report.params.repeats > 1
          ? fmt::format(", {} repeats per level: median (min-max)", report.params.repeats)
          : "");
  std::vector<std::vector<std::string>> rows;
  if (open) {
    rows.push_back({"rate(req/s)", "achieved", "requests", "throughput(req/s)", "median(ms)",
                    "p99(ms)", "L in system", "X*meanR", "errors", "server CPU", "client CPU",
                    "saturated"});
  } else {
    rows.push_back({"concurrency", "requests", "throughput(req/s)", "median(ms)", "p99(ms)",
                    "X*meanR (=N?)", "errors", "server CPU", "client CPU", "saturated"});
  }
  for (size_t i = 0; i < report.levels.size(); ++i) {
    const Repeated& level = report.levels[i];
    const core::RunResult& r = level.median_run();
    const Verdicts& v = report.verdicts[i];
    const size_t k = level.runs.size();
    std::string server_cpu = "-";
    if (r.use && r.use->server) server_cpu = pct_text(r.use->server->cpu_pct);
    std::string saturated = v.saturation ? v.saturation->resource : "-";
    bool knee = report.knee.index && *report.knee.index == i;
    if (open) {
      rows.push_back(
          {fmt::format("{:.0f}", r.target_rate_rps), fmt::format("{:.0f}", r.achieved_rate_rps()),
           std::to_string(r.stats.completed), ranged(level.throughput_rps, k, 1, 0),
           ranged(level.p50_ns, k, 1e-6, 2), ranged(level.p99_ns, k, 1e-6, 2),
           fmt::format("{:.2f}", r.mean_in_system()), fmt::format("{:.2f}", r.littles_n()),
           std::to_string(r.stats.total_errors()), server_cpu,
           pct_text(100 * r.stats.max_thread_cpu_demand), saturated + (knee ? "  <- knee" : "")});
      continue;
    }
    rows.push_back({std::to_string(r.concurrency), std::to_string(r.stats.completed),
                    ranged(level.throughput_rps, k, 1, 0), ranged(level.p50_ns, k, 1e-6, 2),
                    ranged(level.p99_ns, k, 1e-6, 2), fmt::format("{:.2f}", v.little.n_eff),
                    std::to_string(r.stats.total_errors()), server_cpu,
                    pct_text(100 * r.stats.max_thread_cpu_demand),
                    saturated + (knee ? "  <- knee" : "")});
  }
  out += render_table(rows);
  out += "\n";
  out += fmt::format("knee: {}\n", report.knee.summary);
  out += fmt::format("  rule: {}\n", report.knee.rule);
  if (!report.levels.empty()) {
    size_t at = report.knee.index ? *report.knee.index : report.levels.size() - 1;
    const Verdicts& v = report.verdicts[at];
    if (v.saturation) {
      const core::RunResult& run = report.levels[at].median_run();
      out += fmt::format("saturated resource {} ({}): {}: {}\n",
                         report.knee.index ? "at the knee" : "at the last level",
                         open ? fmt::format("rate {:.0f} req/s", run.target_rate_rps)
                              : fmt::format("concurrency {}", run.concurrency),
                         v.saturation->resource, v.saturation->detail);
      out += fmt::format("  {}\n", v.saturation->rule);
    }
  }
  if (report.usl) {
    const analysis::UslFit& u = *report.usl;
    out += fmt::format("USL fit: sigma {:.4f}, kappa {:.6f}, lambda {:.1f} req/s, R^2 {:.3f}",
                       u.sigma, u.kappa, u.lambda_rps, u.r_squared);
    if (u.peak_concurrency && u.peak_throughput_rps) {
      out += fmt::format("; peak N* = {:.1f} at X(N*) = {:.0f} req/s", *u.peak_concurrency,
                         *u.peak_throughput_rps);
    }
    out += "\n";
    for (const std::string& f : u.flags) out += fmt::format("  USL: {}\n", f);
  } else if (!report.usl_error.empty()) {
    out += fmt::format("USL fit: none ({})\n", report.usl_error);
  }
  if (report.kneedle) out += fmt::format("Kneedle: {}\n", report.kneedle->summary);
  if (report.cpu_demand_ns && report.cpu_bound_rps) {
    double best = 0;
    for (const Repeated& level : report.levels) best = std::max(best, level.throughput_rps.median);
    out += fmt::format(
        "server CPU service demand D = U / X = {:.3f} ms per request: bound 1/D = {:.0f} req/s "
        "(measured maximum {:.0f} req/s)\n",
        *report.cpu_demand_ns / 1e6, *report.cpu_bound_rps, best);
  }
  bool all_hold = true;
  for (const Verdicts& v : report.verdicts) all_hold = all_hold && v.little.holds;
  out +=
      fmt::format("Little's law {} (R = mean latency): {}\n", open ? "L = X * R" : "N = X * R",
                  all_hold ? (open ? "X * mean R is within 5% of the mean in system at every level"
                                   : "X * mean R is within 5% of N at every level")
                           : "does NOT hold at every level; see warnings");
  for (const std::string& w : report.warnings) out += fmt::format("warning: {}\n", w);
  for (const std::string& w : report.host.warnings) out += fmt::format("host: {}\n", w);
  return out;
}

json sweep_to_json(const SweepReport& report) {
  json levels = json::array();
  for (size_t i = 0; i < report.levels.size(); ++i) {
    levels.push_back(repeated_json(report.levels[i], report.verdicts[i]));
  }
  json gains = json::array();
  for (double g : report.knee.gain_per_doubling) gains.push_back(num(g));
  json knee{{"index", report.knee.index ? json(*report.knee.index) : json()},
            {"rate_rps", report.knee.index
                             ? json(report.levels[*report.knee.index].median_run().target_rate_rps)
                             : json()},
            {"concurrency", report.knee.index
                                ? json(report.levels[*report.knee.index].median_run().concurrency)
                                : json()},
            {"summary", report.knee.summary},
            {"rule", report.knee.rule},
            {"gain_per_doubling", gains}};
  if (report.knee.index && report.verdicts[*report.knee.index].saturation) {
    knee["saturated"] = report.verdicts[*report.knee.index].saturation->resource;
  } else {
    knee["saturated"] = json();
  }
  json usl;
  if (report.usl) {
    const analysis::UslFit& u = *report.usl;
    usl =
        json{{"sigma", u.sigma},
             {"kappa", u.kappa},
             {"lambda_rps", u.lambda_rps},
             {"r_squared", num(u.r_squared)},
             {"peak_concurrency", u.peak_concurrency ? json(*u.peak_concurrency) : json()},
             {"peak_throughput_rps", u.peak_throughput_rps ? json(*u.peak_throughput_rps) : json()},
             {"flags", u.flags}};
  }
  json kneedle;
  if (report.kneedle) {
    kneedle = json{{"concurrency", report.kneedle->knee_concurrency},
                   {"x_scale", analysis::x_scale_name(report.kneedle->x_scale)},
                   {"summary", report.kneedle->summary}};
  }
  json demand;
  if (report.cpu_demand_ns) {
    demand =
        json{{"cpu_demand_ns", *report.cpu_demand_ns}, {"cpu_bound_rps", *report.cpu_bound_rps}};
  }
  return json{{"schema_version", kSchemaVersion},
              {"kind", "sweep"},
              {"usl", usl},
              {"kneedle", kneedle},
              {"service_demand", demand},
              {"target", report.target},
              {"started_at", report.started_at},
              {"params", params_json(report.params)},
              {"levels", levels},
              {"knee", knee},
              {"warnings", report.warnings},
              {"host", host_json(report.host)}};
}

json host_to_json(const probes::HostContext& h) { return host_json(h); }

}  // namespace knee::report
