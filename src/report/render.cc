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
              {"threads", p.threads}};
}

json little_json(const analysis::LittleCheck& l) {
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(); };
  return json{{"n", l.n_expected},
              {"x_times_mean_r", num(l.n_eff)},
              {"ratio", num(l.ratio)},
              {"holds", l.holds}};
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
              {"loop_lag_ns", latency_json(s.loop_lag_ns)},
              {"interrupted", r.interrupted}};
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
  if (r.achieved_rate_rps() < 0.99 * r.target_rate_rps) {
    out += "  WARNING: RATE NOT ACHIEVED (see the note below)\n";
  }
  out += fmt::format("  service (ms) {}   (from the actual send)\n",
                     percentiles_ms(s.service_time_ns));
  out +=
      fmt::format("  send lag(ms) {}   (actual - intended send)\n", percentiles_ms(s.send_lag_ns));
  return out;
}

}  // namespace

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
  if (r.open_loop() && r.achieved_rate_rps() < 0.99 * r.target_rate_rps) {
    notes.push_back(fmt::format(
        "the achieved rate {:.1f} req/s is below 99% of the target {:.1f}: the client could not "
        "keep the schedule (connection pool exhausted, or the client is overloaded); latencies "
        "include that wait, but the server was not offered the target rate.",
        r.achieved_rate_rps(), r.target_rate_rps));
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
  const core::RunResult& r = report.result;
  const core::RunStats& s = r.stats;
  const core::Histogram& h = s.latency_ns;
  std::string out;
  out += fmt::format("knee run {} {}\n", report.params.method, report.params.url);
  if (r.open_loop()) {
    out += fmt::format(
        "  open loop: {:.0f} req/s target ({} arrivals), up to {} connections, {} "
        "thread{}, {:.2f} s measured after {:.2f} s warm-up\n",
        r.target_rate_rps, report.params.arrival, r.concurrency, r.threads,
        r.threads == 1 ? "" : "s", r.duration_s, report.params.warmup_s);
  } else {
    out += fmt::format(
        "  closed loop: {} connections, {} thread{}, {:.2f} s measured after "
        "{:.2f} s warm-up\n",
        r.concurrency, r.threads, r.threads == 1 ? "" : "s", r.duration_s, report.params.warmup_s);
  }
  if (r.interrupted) out += "  INTERRUPTED: the run was stopped early; figures cover part of it\n";
  out += fmt::format("  requests     {} completed ({} ok), {} failed, {} aborted, {} reconnects\n",
                     s.completed, s.ok(), s.request_failures(), s.aborted, s.reconnects);
  out += fmt::format("  throughput   {:.1f} req/s\n", r.throughput_rps());
  if (h.count() > 0) {
    out += fmt::format(
        "  latency (ms) {}min {:.3f}  mean {:.3f}  p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  p99.9 "
        "{:.3f}  "
        "max {:.3f}\n",
        r.open_loop() ? "from intended send: " : "", ms(static_cast<double>(h.min())), ms(h.mean()),
        ms(static_cast<double>(h.value_at_percentile(50))),
        ms(static_cast<double>(h.value_at_percentile(90))),
        ms(static_cast<double>(h.value_at_percentile(99))),
        ms(static_cast<double>(h.value_at_percentile(99.9))), ms(static_cast<double>(h.max())));
  } else {
    out += "  latency      no successful response\n";
  }
  out += fmt::format("  errors       {}\n", errors_text(s));
  if (r.open_loop()) out += open_loop_text(r);
  const analysis::LittleCheck& l = report.little;
  if (r.open_loop()) {
    out += fmt::format("  Little's law mean in system L = {:.2f}, X * mean R = {:.2f}\n",
                       r.mean_in_system(), r.littles_n());
  } else if (std::isfinite(l.ratio)) {
    out += fmt::format("  Little's law N = {}, X * mean R = {:.2f} ({})\n", r.concurrency, l.n_eff,
                       l.holds ? "holds within 5%"
                               : "differs by more than 5%: fewer requests were in flight than N");
  }
  out += fmt::format("  client CPU   {:.2f} cores (busiest thread {:.0f}% of a core)\n",
                     r.client_cpu_cores(), 100 * s.max_thread_cpu_share);
  for (const std::string& note : run_notes(r)) out += fmt::format("  note: {}\n", note);
  return out;
}

json run_to_json(const RunReport& report) {
  json j = run_fields(report.result);
  j["mode"] = "closed";
  j["notes"] = run_notes(report.result);
  if (report.result.open_loop()) add_open_loop_fields(report.result, j);
  j["schema_version"] = kSchemaVersion;
  j["kind"] = "run";
  j["target"] = report.target;
  j["started_at"] = report.started_at;
  j["params"] = params_json(report.params);
  j["little"] = little_json(report.little);
  j["host"] = host_json(report.host);
  return j;
}

std::string render_sweep_text(const SweepReport& report) {
  std::string out;
  out += fmt::format("knee sweep: {} {}\n", report.params.method, report.params.url);
  if (!report.target.empty()) out += fmt::format("  target: {}\n", report.target);
  out += fmt::format(
      "  {} levels, closed loop, {:.2f} s measured after {:.2f} s warm-up each, {} "
      "client thread{}\n\n",
      report.levels.size(), report.params.duration_s, report.params.warmup_s, report.params.threads,
      report.params.threads == 1 ? "" : "s");
  out += fmt::format("{:>11}  {:>8}  {:>17}  {:>10}  {:>8}  {:>13}  {:>6}\n", "concurrency",
                     "requests", "throughput(req/s)", "median(ms)", "p99(ms)", "X*meanR (=N?)",
                     "errors");
  for (size_t i = 0; i < report.levels.size(); ++i) {
    const core::RunResult& r = report.levels[i];
    const core::Histogram& h = r.stats.latency_ns;
    bool knee = report.knee.index && *report.knee.index == i;
    out += fmt::format("{:>11}  {:>8}  {:>17.0f}  {:>10.2f}  {:>8.2f}  {:>13.2f}  {:>6}{}\n",
                       r.concurrency, r.stats.completed, r.throughput_rps(),
                       ms(static_cast<double>(h.value_at_percentile(50))),
                       ms(static_cast<double>(h.value_at_percentile(99))), report.little[i].n_eff,
                       r.stats.total_errors(), knee ? "  <- knee" : "");
  }
  out += "\n";
  out += fmt::format("knee: {}\n", report.knee.summary);
  out += fmt::format("  rule: {}\n", report.knee.rule);
  bool all_hold = true;
  for (const analysis::LittleCheck& l : report.little) all_hold = all_hold && l.holds;
  out += fmt::format("Little's law N = X * R (R = mean latency): {}\n",
                     all_hold ? "X * mean R is within 5% of N at every level"
                              : "does NOT hold at every level; see warnings");
  for (const std::string& w : report.warnings) out += fmt::format("warning: {}\n", w);
  for (const std::string& w : report.host.warnings) out += fmt::format("host: {}\n", w);
  return out;
}

json sweep_to_json(const SweepReport& report) {
  json levels = json::array();
  for (size_t i = 0; i < report.levels.size(); ++i) {
    json level = run_fields(report.levels[i]);
    level["little"] = little_json(report.little[i]);
    levels.push_back(std::move(level));
  }
  json gains = json::array();
  for (double g : report.knee.gain_per_doubling)
    gains.push_back(std::isfinite(g) ? json(g) : json());
  json knee{{"index", report.knee.index ? json(*report.knee.index) : json()},
            {"concurrency",
             report.knee.index ? json(report.levels[*report.knee.index].concurrency) : json()},
            {"summary", report.knee.summary},
            {"rule", report.knee.rule},
            {"gain_per_doubling", gains}};
  return json{{"schema_version", kSchemaVersion},
              {"kind", "sweep"},
              {"target", report.target},
              {"started_at", report.started_at},
              {"params", params_json(report.params)},
              {"levels", levels},
              {"knee", knee},
              {"warnings", report.warnings},
              {"host", host_json(report.host)}};
}

}  // namespace knee::report
