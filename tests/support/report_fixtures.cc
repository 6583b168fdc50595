#include "support/report_fixtures.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace knee::testing {

namespace {

constexpr double kDurationS = 2.0;

// Records n samples around mean_ns in the fixed shape of synthetic_closed_run().
void record_spread(core::Histogram& h, int64_t n, double mean_ns) {
  const int64_t at_09 = n / 2;
  const int64_t at_10 = n * 4 / 10;
  const int64_t at_13 = n * 9 / 100;
  const int64_t at_20 = n - at_09 - at_10 - at_13;
  h.record(static_cast<int64_t>(0.9 * mean_ns), at_09);
  h.record(static_cast<int64_t>(mean_ns), at_10);
  h.record(static_cast<int64_t>(1.3 * mean_ns), at_13);
  h.record(static_cast<int64_t>(2.0 * mean_ns), at_20);
}

core::ResourceUse server_use(double server_cpu_pct) {
  core::ResourceUse u;
  u.window_s = kDurationS;
  u.intervals = 8;
  u.cpu_busy_pct = {server_cpu_pct * 0.98, 20.0};
  u.cpu_busy_max_pct = {std::min(100.0, server_cpu_pct), 25.0};
  u.cpu_busy_all_pct = (server_cpu_pct * 0.98 + 20.0) / 2;
  u.cpu_pressure_some_pct = 0.5;
  core::ProcessUse p;
  p.pid = 4242;
  p.cpu_pct = server_cpu_pct;
  p.cpu_max_pct = server_cpu_pct;
  p.busiest_thread_cpu_pct = server_cpu_pct;
  p.threads = 1;
  p.rss_bytes = 12.5e6;
  p.rss_max_bytes = 12.5e6;
  u.server = p;
  u.io_pressure_some_pct = 0;
  core::NetUse lo;
  lo.interface = "lo";
  lo.rx_bytes_per_s = 1.5e6;
  lo.tx_bytes_per_s = 1.5e6;
  u.nets.push_back(lo);
  u.tcp_retrans_per_s = 0;
  u.listen_overflows_per_s = 0;
  u.listen_drops_per_s = 0;
  u.mem_available_bytes = 3.2e9;
  u.mem_available_min_bytes = 3.1e9;
  u.memory_pressure_some_pct = 0;
  return u;
}

core::RunResult base_run(int concurrency, int64_t ok, double mean_ns) {
  core::RunResult r;
  r.connections = concurrency;
  r.threads = 1;
  r.duration_s = kDurationS;
  r.measure_start_epoch_s = 1'795'000'000.0;
  core::RunStats& s = r.stats;
  record_spread(s.latency_ns, ok, mean_ns);
  s.completed = static_cast<uint64_t>(ok);
  s.sent = s.completed;
  s.status[200] = s.completed;
  s.warmup_requests = s.completed / 2;
  s.loop_lag_ns.record(40'000, 90);
  s.loop_lag_ns.record(120'000, 10);
  s.client_wall_ns = 3'000'000'000;
  s.client_cpu_ns = 300'000'000;
  s.max_thread_cpu_share = 0.1;
  s.max_thread_cpu_demand = 0.12;
  return r;
}

}  // namespace

probes::HostContext fixed_host() {
  probes::HostContext h;
  h.hostname = "golden-host";
  h.cpu_model = "Synthetic CPU @ 2.00GHz";
  h.logical_cpus = 2;
  h.kernel = "6.1.0-golden-amd64";
  h.os = "Debian GNU/Linux 12 (bookworm)";
  h.governor = "performance";
  h.turbo = "off";
  h.compiler = "GCC 12.2.0";
  h.build_type = "Release";
  h.cxx_flags = "-O2";
  h.clock_resolution_ns = 1;
  h.load_avg_1m = 0.25;
  h.warnings = {"a synthetic host: these figures were made up for a golden file"};
  return h;
}

core::RunResult synthetic_closed_run(int concurrency, double throughput_rps, double mean_ms,
                                     uint64_t timeouts, double server_cpu_pct) {
  const auto ok = static_cast<int64_t>(std::llround(throughput_rps * kDurationS));
  core::RunResult r = base_run(concurrency, ok, mean_ms * 1e6);
  for (uint64_t i = 0; i < timeouts; ++i) r.stats.count_error(core::ErrorKind::kTimeout, "");
  r.stats.sent += timeouts;
  if (server_cpu_pct >= 0) r.use = server_use(server_cpu_pct);
  return r;
}

core::RunResult synthetic_open_run(double rate_rps, double mean_ms) {
  const auto ok = static_cast<int64_t>(std::llround(rate_rps * kDurationS));
  core::RunResult r = base_run(16, ok, mean_ms * 1e6);
  r.target_rate_rps = rate_rps;
  core::RunStats& s = r.stats;
  s.scheduled = s.sent;
  s.sent_in_phase = s.sent;
  s.ok_completed_in_phase = s.completed;
  record_spread(s.service_time_ns, ok, mean_ms * 0.8e6);
  record_spread(s.send_lag_ns, ok, 50'000);
  s.late = 3;
  s.max_backlog = 2;
  // Little's L = X * mean R over the phase: every request in the system for its latency.
  s.in_system_ns = static_cast<double>(ok) * s.latency_ns.mean();
  return r;
}

namespace {

// The load parameters every golden report shares: GET, the phases, one client thread.
report::LoadParams fixed_params(const std::string& url, int repeats) {
  report::LoadParams p;
  p.url = url;
  p.method = "GET";
  p.duration_s = kDurationS;
  p.warmup_s = 1;
  p.timeout_s = 10;
  p.grace_s = 10;
  p.threads = 1;
  p.repeats = repeats;
  return p;
}

}  // namespace

report::RunDocument golden_run_report() {
  report::LoadParams p = fixed_params("http://127.0.0.1:8080/tracking?no=G{conn}-{seq}", 3);
  std::vector<core::RunResult> runs = {synthetic_closed_run(10, 2900, 3.45, 0, -1),
                                       synthetic_closed_run(10, 2950, 3.39, 0, -1),
                                       synthetic_closed_run(10, 2800, 3.57, 1, -1)};
  return report::analyse_run(p.url, "2026-11-29T12:00:00Z", p, runs, fixed_host());
}

report::RunDocument golden_open_run_report() {
  report::LoadParams p = fixed_params("http://127.0.0.1:8080/fast", 1);
  p.arrival = "poisson";
  std::vector<core::RunResult> runs = {synthetic_open_run(1000, 0.4)};
  return report::analyse_run(p.url, "2026-11-29T12:05:00Z", p, runs, fixed_host());
}

report::SweepDocument golden_sweep_report() {
  report::LoadParams p = fixed_params("http://127.0.0.1:8080/tracking?no=G{conn}-{seq}", 1);
  // N, X (req/s), mean R (ms) with X * R ~= N, server CPU %.
  const struct {
    int n;
    double x;
    double mean_ms;
    uint64_t timeouts;
    double cpu;
  } levels[] = {{1, 300, 3.30, 0, 7.5},   {2, 590, 3.36, 0, 14.8},   {4, 1150, 3.45, 0, 28.8},
                {8, 2200, 3.60, 0, 55.0}, {16, 3900, 4.08, 0, 93.0}, {32, 4050, 7.85, 2, 99.0}};
  std::vector<std::vector<core::RunResult>> runs;
  for (const auto& l : levels) {
    runs.push_back({synthetic_closed_run(l.n, l.x, l.mean_ms, l.timeouts, l.cpu)});
  }
  return report::analyse_sweep(
      "built-in lab server (knee serve, pid 4242): 1 event-loop thread, each tracking request "
      "waits 3ms on a timer then burns 0.25ms of CPU",
      "2026-11-29T12:10:00Z", p, runs, fixed_host());
}

}  // namespace knee::testing
