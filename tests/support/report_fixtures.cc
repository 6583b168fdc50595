#include "support/report_fixtures.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <tuple>
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
  // Half a run's worth of warm-up, one of them in flight when measuring began and answered
  // after it.
  s.warmup.completed = s.completed / 2 + 1;
  s.warmup.sent = s.warmup.completed;
  s.warmup.carried_over = 1;
  s.bytes_sent = s.completed * 92;
  s.bytes_received = s.completed * 160;
  s.bytes_received_body = s.completed * 66;
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
  s.warmup.scheduled = s.warmup.sent;  // scheduled = sent + never_sent, warm-up likewise
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

report::RunDocument golden_h2_run_report() {
  report::LoadParams p = fixed_params("https://localhost:8443/fast", 1);
  p.protocol = "h2";
  p.per_connection = 10;
  p.tls = report::TlsParams{true, "ca.pem", "", std::nullopt, true};
  core::RunResult r = synthetic_closed_run(40, 20000, 2.0, 0, -1);
  r.connections = 4;
  r.per_connection = 10;
  r.h2 = true;
  core::ConnectStats& c = r.stats.connects;
  c.opened = 5;
  for (int i = 0; i < 5; ++i) {
    c.tcp_ns.record(80'000);
    c.tls_ns.record(900'000);
  }
  c.tls_full = 5;
  c.tls_version = "TLSv1.3";
  c.tls_cipher = "TLS_AES_256_GCM_SHA384";
  c.alpn = "h2";
  c.h2_goaways = 1;
  c.h2_goaway_error = "NO_ERROR";
  c.h2_server_max_streams = 8;
  r.stats.reconnects = 1;
  return report::analyse_run(p.url, "2026-12-01T12:00:00Z", p, {r}, fixed_host());
}

report::RunDocument golden_open_run_report() {
  report::LoadParams p = fixed_params("http://127.0.0.1:8080/fast", 1);
  p.arrival = "poisson";
  std::vector<core::RunResult> runs = {synthetic_open_run(1000, 0.4)};
  return report::analyse_run(p.url, "2026-11-29T12:05:00Z", p, runs, fixed_host());
}

report::RunDocument golden_mix_run_report() {
  report::LoadParams p = fixed_params("http://127.0.0.1:8080/", 1);
  p.warmup_s = 0;
  p.mix = "GET /tracking/{shipment}=416.67/s,POST /events @event.json=97.22/s";
  p.stages = "1s:600,1s:400";
  p.shipments = 100000;
  p.zipf = 1.0;
  core::RunResult r = synthetic_open_run(500, 0.4);
  core::RunStats& s = r.stats;
  s.max_thread_cpu_demand_1s = 0.21;  // its busiest second, above the phase's mean
  // The mix's two endpoints, in the weights' proportions, adding up to the run's books.
  const uint64_t reads = s.sent * 41667 / 51389;
  const uint64_t writes = s.sent - reads;
  s.endpoints.resize(2);
  s.endpoints[0].name = "GET /tracking/{shipment}";
  s.endpoints[0].share = 416.67 / 513.89;
  s.endpoints[1].name = "POST /events";
  s.endpoints[1].share = 97.22 / 513.89;
  for (auto [e, n, mean_ns] : {std::tuple{&s.endpoints[0], reads, 300'000.0},
                               std::tuple{&s.endpoints[1], writes, 830'000.0}}) {
    e->sent = n;
    e->completed = n;
    e->ok_completed_in_phase = n;
    e->status[e == &s.endpoints[0] ? 200 : 201] = n;
    record_spread(e->latency_ns, static_cast<int64_t>(n), mean_ns);
  }
  for (int i = 0; i < 2; ++i) {
    core::LatencyInterval in;
    in.start_s = i;
    in.length_s = 1;
    in.count = i == 0 ? 300 : 700;
    in.p50_ns = 380'000;
    in.p99_ns = i == 0 ? 900'000 : 1'400'000;
    in.max_ns = 2'000'000;
    in.target_rps = i == 0 ? 300 : 500;
    r.intervals.push_back(in);
  }
  // Through a lab stack (--stack): nginx in front of two replicas, each one's /health count.
  r.use = server_use(18);
  r.use->server->name = "nginx";
  for (int i = 0; i < 2; ++i) {
    core::ProcessUse b = *r.use->server;
    b.pid = 5001 + i;
    b.name = i == 0 ? "app1" : "app2";
    b.cpu_pct = b.busiest_thread_cpu_pct = i == 0 ? 22 : 61;
    b.requests = static_cast<double>(i == 0 ? s.sent / 2 : s.sent - s.sent / 2);
    r.use->backends.push_back(b);
  }
  return report::analyse_run(p.url, "2026-12-01T21:00:00Z", p, {r}, fixed_host());
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

report::LadderDocument golden_ladder() {
  report::LadderDocument d;
  d.started_at = "2026-11-29T12:20:00Z";
  d.duration_s = 2.3;
  d.only = {"inprocess", "sqlite", "disk", "network"};
  d.host = report::host_figures(fixed_host());
  d.clock = report::LadderClock{1, 20, 19.5, 2000};
  d.params = report::LadderParams{5, 200000, 200, 20, 5, 40, 600, 1 << 30, 16 << 10, 20000, "/tmp"};
  auto make_rung = [](std::string group, std::string id, std::string name, double median_ns,
                      std::string rung, std::optional<std::string> plan = std::nullopt) {
    return report::RungFigures{std::move(group),
                               std::move(id),
                               std::move(name),
                               "timed one at a time",
                               std::move(rung),
                               1,
                               1000,
                               1000,
                               5,
                               median_ns,
                               median_ns * 1.5,
                               median_ns * 0.9,
                               median_ns * 1.1,
                               1e9 / median_ns,
                               std::move(plan)};
  };
  d.rungs = {make_rung("inprocess", "syscall", "a trivial system call (getppid)", 186, "ns"),
             make_rung("sqlite", "sqlite_primary_key", "SQLite read by primary key", 716, "ns",
                       "SEARCH users USING INTEGER PRIMARY KEY (rowid=?)"),
             make_rung("sqlite", "sqlite_scan", "SQLite read by unindexed email (a scan)", 420e3,
                       "us", "SCAN users"),
             make_rung("disk", "write_fdatasync", "4 KiB write + fdatasync", 250e3, "us")};
  d.sqlite = report::LadderSqlite{
      "3.40.1",
      20000,
      {{"sqlite_primary_key", "SEARCH users USING INTEGER PRIMARY KEY (rowid=?)"},
       {"sqlite_scan", "SCAN users"}},
      586.6,
      420.0};
  d.disk = report::LadderDisk{"/tmp",
                              "/tmp",
                              "ext4",
                              "/",
                              "/dev/vda",
                              "vda",
                              "",
                              1,
                              false,
                              4096,
                              {"a virtual disk: the host's storage stands behind it"}};
  d.network = report::LadderNetwork{2.0 / 3,
                                    6371.0087714,
                                    299792.458,
                                    "computed, not measured",
                                    {report::RouteFigures{"London - New York",
                                                          {51.5085, -0.1257},
                                                          {40.7143, -74.006},
                                                          5570.2,
                                                          37.16,
                                                          55.74,
                                                          "tens_of_ms"},
                                     report::RouteFigures{"Mumbai - Delhi",
                                                          {19.0728, 72.8826},
                                                          {28.6519, 77.2315},
                                                          1153.2,
                                                          7.69,
                                                          11.54,
                                                          "tens_of_ms"}}};
  d.warnings = fixed_host().warnings;
  return d;
}

report::ProbeDocument golden_probe() {
  report::ProbeDocument d;
  d.target = "http://127.0.0.1:8080/tracking?no=G1";
  d.started_at = "2026-11-29T12:25:00Z";
  d.address = "127.0.0.1:8080";
  d.params = report::ProbeParams{"GET", 5, false, 5};
  d.times = "cumulative from each attempt's start, as curl --write-out";
  d.ok = 4;
  d.failed = 1;
  d.connections = 5;
  d.status = {{"200", 4}};
  d.errors = {{"closed_before_response: EOF", 1}};
  const char* keys[] = {"namelookup",   "connect",       "appconnect", "pretransfer",
                        "posttransfer", "starttransfer", "total"};
  const char* curl[] = {"time_namelookup",  "time_connect",      "time_appconnect",
                        "time_pretransfer", "time_posttransfer", "time_starttransfer",
                        "time_total"};
  const char* words[] = {"DNS lookup",   "TCP connect", "TLS handshake", "ready to send",
                         "request sent", "first byte",  "complete"};
  const int64_t at[] = {58'000, 118'000, 0, 120'000, 131'000, 3'555'000, 3'559'000};
  for (size_t i = 0; i < 7; ++i) {
    report::PhaseFigures f{curl[i], words[i], i == 2 ? 0 : 4, {}, {}, {}, {}, {}, {}, {}};
    if (i != 2) {
      f.min_ns = at[i] - 5'000;
      f.median_ns = at[i];
      f.p99_ns = at[i] + 40'000;
      f.max_ns = at[i] + 40'000;
      f.phase_min_ns = f.phase_median_ns = f.phase_p99_ns =
          i == 0 ? at[0] : at[i] - at[i - 1 - (i == 3)];
    }
    d.phases[keys[i]] = f;
  }
  for (int k = 0; k < 5; ++k) {
    report::AttemptFigures a;
    a.ok = k != 2;
    a.new_connection = true;
    if (a.ok) a.status = 200;
    a.body_bytes = a.ok ? 66 : 0;
    for (size_t i = 0; i < 7; ++i) {
      if (i != 2 && (a.ok || i < 4)) a.at_ns[keys[i]] = at[i];
      if (!a.at_ns.contains(keys[i])) a.at_ns[keys[i]] = std::nullopt;
    }
    if (!a.ok) a.error = "closed_before_response: EOF";
    d.attempts.push_back(std::move(a));
  }
  return d;
}

report::CapacityDocument golden_capacity() {
  report::CapacityDocument d;
  d.target = "http://127.0.0.1:8080/tracking?no={seq}";
  d.slos = {"p99<20ms"};
  d.params = report::CapacityParams{100, 1e6, 5, 1, 1, 2, 1, 10, report::PoolCap{}, std::nullopt};
  auto step = [](double rate, const char* phase, bool passed, double p99_ms) {
    report::CapacityRepeatFigures r{
        p99_ms * 0.4e6,
        p99_ms * 1e6,
        p99_ms * 1.2e6,
        p99_ms * 1.5e6,
        rate,
        rate,
        0,
        static_cast<uint64_t>(rate * 2),
        passed,
        {},
        report::CapacityLimit{"none", "no hardware resource saturated", rate / 4000}};
    if (!passed) r.failures = {fmt::format("p99 < 20ms: FAILED (measured {:.2f} ms)", p99_ms)};
    return report::CapacityStepFigures{rate, phase, passed, {r}};
  };
  d.steps = {step(100, "bracket", true, 3.4), step(200, "bracket", true, 3.6),
             step(400, "bracket", false, 412.5), step(300, "bisect", true, 8.2),
             step(300, "confirm", true, 9.1)};
  d.capacity_rps = 300;
  d.bracket = report::CapacityBracket{300, 400};
  d.confirmed = true;
  return d;
}

std::pair<report::SweepDocument, report::SweepDocument> golden_sweep_parts(double skew_s,
                                                                           std::string host) {
  report::SweepDocument a = golden_sweep_report();
  report::SweepDocument b = a;
  a.params.part = report::PartParams{0, 2};
  b.params.part = report::PartParams{1, 2};
  for (report::LevelFigures& l : b.levels) {
    for (report::RunRecord& r : l.records) {
      r.host = host;
      r.result.measure_start_epoch_s += skew_s;
    }
  }
  return {a, b};
}

}  // namespace knee::testing
