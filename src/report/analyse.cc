#include "report/analyse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "analysis/knee.h"
#include "analysis/kneedle.h"
#include "analysis/little.h"
#include "analysis/saturation.h"
#include "analysis/usl.h"

namespace knee::report {

namespace {

// An open-loop run kept its schedule when it sent this share of what it scheduled (--strict).
constexpr double kKeptScheduleShare = 0.99;
// A run behind its schedule whose pool was full for this share of the phase, with the client's
// CPU to spare, is named pool-bound (a tenth: a pool full for the last stages of --stages).
constexpr double kPoolShortfallShare = 0.1;
// The Nagle / delayed-ACK note: at least this many split responses, and this share of the ok.
constexpr uint64_t kSplitNoteMinResponses = 10;
constexpr double kSplitNoteMinShare = 0.1;
// Repeats whose throughput spreads wider than this ratio (max / min) weaken their level.
constexpr double kRepeatSpreadLimit = 1.25;

std::optional<double> known(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

ServerFigures process_figures(const core::ProcessUse& p) {
  ServerFigures f;
  f.pid = p.pid;
  f.cpu_pct = known(p.cpu_pct);
  f.busiest_thread_cpu_pct = known(p.busiest_thread_cpu_pct);
  f.threads = p.threads;
  f.rss_bytes = known(p.rss_bytes);
  if (!p.name.empty()) f.name = p.name;
  f.requests = known(p.requests);
  return f;
}

// D = U / X of the server and each process behind it; the largest is the bottleneck.
std::optional<DemandFigures> service_demand(const core::ResourceUse& u, double throughput_rps) {
  std::vector<const core::ProcessUse*> processes = {&*u.server};
  for (const core::ProcessUse& b : u.backends) processes.push_back(&b);
  const core::ProcessUse* bottleneck = nullptr;
  double max_ns = 0, total_ns = 0;
  for (const core::ProcessUse* p : processes) {
    if (!core::is_known(p->cpu_pct)) continue;
    const double ns = p->cpu_pct / 100.0 / throughput_rps * 1e9;
    total_ns += ns;
    if (bottleneck == nullptr || ns > max_ns) {
      bottleneck = p;
      max_ns = ns;
    }
  }
  if (bottleneck == nullptr || !(max_ns > 0)) return std::nullopt;
  DemandFigures d;
  d.cpu_demand_ns = max_ns;
  d.cpu_bound_rps = 1e9 / max_ns;
  if (!u.backends.empty()) {
    d.process = bottleneck->name.empty() ? "server" : bottleneck->name;
    d.total_cpu_demand_ns = total_ns;
    d.total_cpu_bound_rps = static_cast<double>(u.cpu_busy_pct.size()) * 1e9 / total_ns;
  }
  return d;
}

}  // namespace

ResourceFigures resource_figures(const core::ResourceUse& u) {
  ResourceFigures f;
  f.window_s = u.window_s;
  f.samples = u.intervals;
  for (double b : u.cpu_busy_pct) f.cpu_busy_pct.push_back(known(b));
  f.cpu_busy_all_pct = known(u.cpu_busy_all_pct);
  f.cpu_pressure_some_pct = known(u.cpu_pressure_some_pct);
  for (const core::DiskUse& d : u.disks) {
    f.disks.push_back(DiskFigures{d.device, known(d.reads_per_s), known(d.writes_per_s),
                                  known(d.read_kb_per_s), known(d.write_kb_per_s),
                                  known(d.read_await_ms), known(d.write_await_ms),
                                  known(d.queue_size), known(d.util_pct)});
  }
  f.io_pressure_some_pct = known(u.io_pressure_some_pct);
  for (const core::NetUse& n : u.nets) {
    f.nets.push_back(NetFigures{n.interface, known(n.rx_bytes_per_s), known(n.tx_bytes_per_s),
                                n.speed_mbit, known(n.util_pct), known(n.drops_per_s)});
  }
  f.tcp_retrans_per_s = known(u.tcp_retrans_per_s);
  f.listen_overflows_per_s = known(u.listen_overflows_per_s);
  f.listen_drops_per_s = known(u.listen_drops_per_s);
  f.mem_available_bytes = known(u.mem_available_bytes);
  f.memory_pressure_some_pct = known(u.memory_pressure_some_pct);
  if (u.server) f.server = process_figures(*u.server);
  for (const core::ProcessUse& b : u.backends) f.backends.push_back(process_figures(b));
  return f;
}

namespace {

// The latency spectrum (HdrHistogram's percentile distribution) at fixed percentiles, for the
// HTML report's latency-by-percentile chart; empty without responses.
std::vector<SpectrumPoint> spectrum_of(const core::Histogram& h) {
  static constexpr double kPercentiles[] = {0,    25,   50,    75,    90,     95,    99,
                                            99.5, 99.9, 99.95, 99.99, 99.995, 99.999};
  std::vector<SpectrumPoint> out;
  if (h.count() == 0) return out;
  for (double p : kPercentiles) out.push_back({p, h.value_at_percentile(p)});
  return out;
}

std::vector<EndpointFigures> endpoints_of(const core::RunResult& r) {
  std::vector<EndpointFigures> out;
  for (const core::EndpointStats& e : r.stats.endpoints) {
    EndpointFigures f;
    f.name = e.name;
    f.share = e.share;
    f.sent = e.sent;
    f.requests = e.completed;
    f.ok = e.ok();
    f.aborted = e.aborted;
    if (r.duration_s > 0) {
      // The run's own rule (core::RunResult::throughput_rps): open loop counts what completed
      // inside the phase, closed loop the answers to what was sent in it.
      f.throughput_rps =
          static_cast<double>(r.open_loop() ? e.ok_completed_in_phase : e.ok()) / r.duration_s;
    }
    f.latency_ns = latency_summary(e.latency_ns);
    for (size_t i = 0; i < e.errors.size(); ++i) {
      if (e.errors[i] > 0) {
        f.errors[std::string(core::error_kind_name(static_cast<core::ErrorKind>(i)))] = e.errors[i];
      }
    }
    for (const auto& [code, n] : e.status) f.status[std::to_string(code)] = n;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<IntervalFigures> intervals_of(const std::vector<core::LatencyInterval>& intervals) {
  std::vector<IntervalFigures> out;
  for (const core::LatencyInterval& i : intervals) {
    out.push_back(IntervalFigures{i.start_s, i.length_s, i.count,
                                  i.length_s > 0 ? static_cast<double>(i.count) / i.length_s : 0.0,
                                  i.p50_ns, i.p99_ns, i.max_ns,
                                  i.target_rps > 0 ? std::optional(i.target_rps) : std::nullopt,
                                  i.errors > 0 ? std::optional(i.errors) : std::nullopt});
  }
  return out;
}

}  // namespace

UslFigures usl_figures(const analysis::UslFit& fit) {
  return UslFigures{fit.sigma,
                    fit.kappa,
                    fit.lambda_rps,
                    known(fit.r_squared),
                    fit.peak_concurrency,
                    fit.peak_throughput_rps,
                    fit.flags,
                    fit.sigma_se,
                    fit.kappa_se,
                    fit.lambda_se};
}

LittleFigures little_figures(const analysis::LittleCheck& l) {
  return LittleFigures{l.n_expected, known(l.n_eff), known(l.ratio), l.holds};
}

namespace {

bool kept_schedule(const RunFigures& r) {
  if (!r.open || r.duration_s <= 0) return true;
  return r.open->achieved_rate_rps * r.duration_s >=
         kKeptScheduleShare * static_cast<double>(r.open->scheduled);
}

// A --stages run: its arrival rate changes over the phase, so its means dilute the busiest stretch.
bool staged(const core::RunResult& r) {
  return std::any_of(r.intervals.begin(), r.intervals.end(),
                     [](const core::LatencyInterval& i) { return i.target_rps > 0; });
}

// The client's busiest second (RunStats::max_thread_cpu_demand_1s) where the rules read it: a
// --stages run that measured one.
std::optional<double> demand_1s_of(const core::RunResult& r) {
  if (!staged(r) || r.stats.max_thread_cpu_demand_1s <= 0) return std::nullopt;
  return r.stats.max_thread_cpu_demand_1s;
}

// The pool's exhaustion in its busiest second (RunStats::max_pool_full_share_1s) where the rules
// read it: a --stages run that measured one. Regression (a new user's trial): a ramp whose last
// stage filled the pool read the phase's share, diluted below the pool rule's half by the quiet
// stages before it.
std::optional<double> pool_full_1s_of(const core::RunResult& r) {
  if (!staged(r) || r.stats.max_pool_full_share_1s <= 0) return std::nullopt;
  return r.stats.max_pool_full_share_1s;
}

// The busiest client thread's demand for a core that the rules read, 0..1: the phase's mean, or
// its busiest second when there is one (--stages) and it is higher; `busiest_second` says which.
// Regression: a --stages ramp past what one thread can send averaged the client down with its
// quiet stages and named nothing.
struct ClientDemand {
  double share = 0;
  bool busiest_second = false;
};
ClientDemand client_demand(double mean, std::optional<double> busiest_second) {
  if (busiest_second && *busiest_second > mean) return {*busiest_second, true};
  return {mean, false};
}

// Why an open-loop level fell behind its schedule, from the evidence, first match wins: the
// target stopped answering; the pool was exhausted for a tenth of the phase or more while the
// client had CPU to spare (the server's latency, analysis/saturation.h "pool"), or for half of
// it whatever the client did; the client's busiest thread demanded a core; else the figures
// that rule each out. Regression (a new user's trial): everything that was not a pool full half
// the phase was blamed on the client, at 3-7 % of a core, with the target gone or the pool full
// in the last stages of --stages.
std::string shortfall_cause(const RunFigures& r, const std::optional<SaturatedFigures>& saturated) {
  const OpenLoopFigures& o = *r.open;
  const analysis::SaturationThresholds t{};
  if (r.unreachable) {
    return fmt::format(
        "the target stopped answering {:.1f} s into the measured phase ({} connects failed "
        "after it), so the schedule's requests had nowhere to go",
        r.unreachable->since_s, r.unreachable->connect_failures);
  }
  // A saturated server resource comes before the pool it filled: more connections would only
  // lengthen the server's queue (regression: a staged run at a saturated one-thread server
  // said neither the pool nor the client was at its limit, or to give more connections).
  if (saturated && (saturated->resource == "cpu" || saturated->resource == "disk" ||
                    saturated->resource == "network")) {
    return fmt::format(
        "the server's {} saturated ({}), so it answered more slowly than the schedule offered "
        "and requests waited for its connections (the pool full {:.0f}% of the time); more "
        "connections would only lengthen its queue",
        saturated->resource, saturated->detail, o.pool_full_share * 100);
  }
  const ClientDemand busiest =
      client_demand(r.client_max_thread_cpu_demand, r.client_max_thread_cpu_demand_1s);
  const double demand = busiest.share;
  const char* when = busiest.busiest_second ? " in its busiest second" : "";
  const bool client_busy = demand >= t.client_thread_cpu_share;
  if (o.pool_full_share >= t.pool_full_share ||
      (o.pool_full_share >= kPoolShortfallShare && !client_busy)) {
    const std::string why =
        o.service_time_ns.count > 0
            ? fmt::format("responses took {:.2f} ms (median service time)",
                          static_cast<double>(o.service_time_ns.p50) / 1e6)
            : std::string("no response completed (every request failed or timed out)");
    return fmt::format(
        "the pool of {} connections was exhausted ({:.0f}% of the time every one was busy) "
        "because {}: the server's latency held requests back (give more connections with -c to "
        "offer the rate anyway)",
        r.max_connections.value_or(0), o.pool_full_share * 100, why);
  }
  if (client_busy) {
    return fmt::format(
        "the client could not keep its schedule with connections free (its busiest thread "
        "demanded {:.0f}% of a core{}: give more threads with -t)",
        demand * 100, when);
  }
  // Regression (a new user's trial): a staged run at a one-thread server, its CPU unknown
  // without --server-pid, read "neither ... was at its limit" beside a CPU 100% busy.
  const bool server_unknown = !r.resources || !r.resources->server;
  return fmt::format(
      "neither the pool (full {:.0f}% of the time) nor the client (its busiest thread at {:.0f}% "
      "of a core{}) was at its limit over the phase{}: see the timeline (--html, --json "
      "intervals) for when the rate fell",
      o.pool_full_share * 100, demand * 100, when,
      server_unknown ? "; a server at its limit looks like this, and its CPU is unknown without "
                       "--server-pid PID"
                     : "");
}

}  // namespace

size_t median_index(const std::vector<core::RunResult>& runs) {
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return runs[a].throughput_rps() < runs[b].throughput_rps();
  });
  return order[(order.size() - 1) / 2];
}

LatencySummary latency_summary(const core::Histogram& h) {
  return LatencySummary{h.min(),
                        h.count() > 0 ? h.mean() : 0.0,
                        h.value_at_percentile(50),
                        h.value_at_percentile(90),
                        h.value_at_percentile(99),
                        h.value_at_percentile(99.9),
                        h.max(),
                        h.count()};
}

ConnectFigures connect_figures(const core::ConnectStats& c, bool h2) {
  ConnectFigures f;
  f.opened = c.opened;
  f.tcp_ns = latency_summary(c.tcp_ns);
  if (!c.tls_version.empty() || c.tls_full + c.tls_resumed > 0) {
    f.tls = TlsFigures{c.tls_version, c.tls_cipher,  c.alpn,
                       c.tls_full,    c.tls_resumed, latency_summary(c.tls_ns)};
  }
  if (c.h2_goaways > 0 || c.h2_server_max_streams > 0 || c.alpn == "h2" || h2) {
    H2Figures h;
    h.goaways = c.h2_goaways;
    h.resent = c.h2_resent;
    h.goaway_error = c.h2_goaway_error;
    if (c.h2_server_max_streams > 0) h.server_max_streams = c.h2_server_max_streams;
    f.h2 = h;
  }
  return f;
}

HostFigures host_figures(const probes::HostContext& h) {
  return HostFigures{
      h.hostname,
      h.cpu_model,
      h.logical_cpus,
      h.kernel,
      h.os,
      h.governor,
      h.turbo,
      h.compiler,
      h.build_type,
      h.cxx_flags,
      h.clock_resolution_ns,
      known(h.load_avg_1m),
      h.warnings,
      h.knee_version.empty() ? std::nullopt : std::optional<std::string>(h.knee_version)};
}

namespace {

// Connect failures from the target's last answer to the end of the measured phase: the target
// went away (analysis::unreachable_since).
std::optional<UnreachableFigures> unreachable_of(const core::RunResult& r) {
  const core::RunStats& s = r.stats;
  const double last_ok_s = s.last_ok_ns < 0 ? -1.0 : static_cast<double>(s.last_ok_ns) / 1e9;
  const std::optional<double> since =
      analysis::unreachable_since(r.duration_s, last_ok_s, s.connect_failures_after_ok);
  if (!since) return std::nullopt;
  return UnreachableFigures{*since, s.connect_failures_after_ok};
}

// Share of the measured phase every connection of the (per-worker) pools was busy or
// connecting, 0..1.
double pool_full_share(const core::RunResult& r) {
  const double window_ns = static_cast<double>(std::max(1, r.threads)) * r.duration_s * 1e9;
  return window_ns > 0 ? std::min(1.0, static_cast<double>(r.stats.pool_full_ns) / window_ns) : 0.0;
}

// The host's figures at their busiest sample (the max of each interval the sampler folded) in
// place of the phase's means: for --stages, whose rate changes over the phase, so a ramp to an
// overload would average a saturated server's CPU down to half. Regression (a new user's trial):
// the verdict of a --stages run read the means. Figures with no max (or a max below the mean, as a
// hand-made result may hold) keep their mean.
core::ResourceUse peak_use(const core::ResourceUse& u) {
  core::ResourceUse p = u;
  const auto peak = [](double& mean, double max) {
    if (core::is_known(max) && !(mean >= max)) mean = max;
  };
  const auto peak_process = [&](core::ProcessUse& q) {
    peak(q.cpu_pct, q.cpu_max_pct);
    peak(q.busiest_thread_cpu_pct, q.busiest_thread_cpu_max_pct);
  };
  if (p.server) peak_process(*p.server);
  for (core::ProcessUse& b : p.backends) peak_process(b);
  if (p.cpu_busy_max_pct.size() == p.cpu_busy_pct.size()) {
    for (size_t i = 0; i < p.cpu_busy_pct.size(); ++i) {
      peak(p.cpu_busy_pct[i], p.cpu_busy_max_pct[i]);
    }
  }
  for (core::DiskUse& d : p.disks) peak(d.util_pct, d.util_max_pct);
  for (core::NetUse& n : p.nets) peak(n.util_pct, n.util_max_pct);
  return p;
}

// What knee saw of itself and of the path to the target, for the saturation rule.
core::ClientUse client_use(const core::RunResult& r) {
  const core::RunStats& s = r.stats;
  core::ClientUse c;
  c.max_thread_cpu_share = client_demand(s.max_thread_cpu_demand, demand_1s_of(r)).share;
  c.cpu_cores = r.client_cpu_cores();
  c.own_retransmits = s.tcp_retransmits;
  c.own_segments_out = s.tcp_segments_out;
  if (r.open_loop()) {
    c.open_loop = true;
    c.pool_connections = r.connections;
    if (s.send_lag_ns.count() > 0) {
      c.send_lag_p99_ns = static_cast<double>(s.send_lag_ns.value_at_percentile(99));
    }
    if (s.sent > 0) {
      c.late_with_connection_free_share =
          static_cast<double>(s.late_with_connection_free) / static_cast<double>(s.sent);
    }
    if (s.service_time_ns.count() > 0) {
      c.service_p50_ns = static_cast<double>(s.service_time_ns.value_at_percentile(50));
    }
    c.pool_full_share = pool_full_share(r);
    if (const std::optional<double> busiest = pool_full_1s_of(r);
        busiest && *busiest > c.pool_full_share) {
      c.pool_full_share = *busiest;
      c.pool_full_busiest_second = true;
    }
  }
  if (auto u = unreachable_of(r)) {
    c.unreachable_since_s = u->since_s;
    c.connect_failures_since = u->connect_failures;
    const std::string prefix = std::string(core::error_kind_name(core::ErrorKind::kConnect)) + ": ";
    uint64_t most = 0;
    for (const auto& [cause, count] : s.causes) {
      if (cause.rfind(prefix, 0) == 0 && count > most) {
        most = count;
        c.connect_failure_cause = cause.substr(prefix.size());
      }
    }
  }
  return c;
}

}  // namespace

analysis::SaturationVerdict client_side_verdict(const core::RunResult& r) {
  return analysis::name_saturated_resource(core::ResourceUse{}, client_use(r));
}

RunFigures run_figures(const core::RunResult& r) {
  const core::RunStats& s = r.stats;
  RunFigures f;
  if (r.open_loop()) {
    f.max_connections = r.connections;
  } else {
    f.concurrency = r.concurrency();
  }
  f.threads = r.threads;
  f.requests = s.completed;
  f.ok = s.ok();
  f.sent = s.sent;
  f.aborted = s.aborted;
  f.reconnects = s.reconnects;
  const core::WarmupStats& w = s.warmup;
  f.warmup.sent = w.sent;
  f.warmup.completed = w.completed;
  f.warmup.failed = w.failed();
  f.warmup.aborted = w.aborted;
  f.warmup.carried_over = w.carried_over;
  if (r.open_loop()) {
    f.warmup.scheduled = w.scheduled;
    f.warmup.never_sent = w.never_sent;
  }
  for (size_t i = 0; i < w.errors.size(); ++i) {
    if (w.errors[i] > 0) {
      f.warmup.errors[std::string(core::error_kind_name(static_cast<core::ErrorKind>(i)))] =
          w.errors[i];
    }
  }
  f.connects = connect_figures(s.connects, r.h2);
  if (r.requests_asked > 0) f.requests_asked = r.requests_asked;
  f.bytes.sent = s.bytes_sent;
  f.bytes.received = s.bytes_received;
  f.bytes.received_body = s.bytes_received_body;
  f.bytes.received_headers = s.bytes_received - s.bytes_received_body;
  if (r.duration_s > 0) {
    f.bytes.sent_per_s = static_cast<double>(s.bytes_sent) / r.duration_s;
    f.bytes.received_per_s = static_cast<double>(s.bytes_received) / r.duration_s;
  }
  f.tcp_retransmits = s.tcp_retransmits;
  f.tcp_segments_out = s.tcp_segments_out;
  f.split_responses = s.split_responses;
  if (s.split_responses > 0) {
    f.split_gap_mean_ns =
        static_cast<double>(s.split_gap_ns) / static_cast<double>(s.split_responses);
  }
  if (s.unsolicited_closes > 0) {
    f.unsolicited = UnsolicitedFigures{s.unsolicited_bytes, s.unsolicited_closes};
  }
  f.unreachable = unreachable_of(r);
  f.duration_s = r.duration_s;
  f.throughput_rps = r.throughput_rps();
  f.latency_ns = latency_summary(s.latency_ns);
  for (size_t i = 0; i < s.errors.size(); ++i) {
    const auto kind = static_cast<core::ErrorKind>(i);
    // HTTP/2's own kind is listed where it happened; HTTP/1.1 results keep their shape.
    if (kind == core::ErrorKind::kStreamReset && s.errors[i] == 0) continue;
    f.errors[std::string(core::error_kind_name(kind))] = s.errors[i];
  }
  f.error_causes = s.causes;
  for (size_t code = 0; code < s.status.size(); ++code) {
    if (s.status[code] > 0) f.status[std::to_string(code)] = s.status[code];
  }
  f.client_cpu_cores = r.client_cpu_cores();
  f.client_max_thread_cpu = s.max_thread_cpu_share;
  f.client_max_thread_cpu_demand = s.max_thread_cpu_demand;
  f.client_max_thread_cpu_demand_1s = demand_1s_of(r);
  f.client_spin_ns = s.client_spin_ns;
  f.loop_lag_ns = latency_summary(s.loop_lag_ns);
  f.interrupted = r.interrupted;
  if (r.use) f.resources = resource_figures(*r.use);
  // A staged run's verdict reads the server at its busiest sample: the server's line shows it
  // beside the phase's mean (regression, a new user's trial: "48% of a core" beside "saturated
  // cpu: server process at 100% of one core").
  if (f.resources && f.resources->server && staged(r)) {
    f.resources->server->cpu_max_pct = known(r.use->server->cpu_max_pct);
    f.resources->server->busiest_thread_cpu_max_pct =
        known(r.use->server->busiest_thread_cpu_max_pct);
  }
  f.measure_start_epoch_s = r.measure_start_epoch_s;
  f.spectrum = spectrum_of(s.latency_ns);
  f.intervals = intervals_of(r.intervals);
  if (!s.endpoints.empty()) f.endpoints = endpoints_of(r);
  if (r.open_loop()) {
    OpenLoopFigures o;
    o.target_rate_rps = r.target_rate_rps;
    o.achieved_rate_rps = r.achieved_rate_rps();
    o.scheduled = s.scheduled;
    o.never_sent = s.never_sent;
    o.service_time_ns = latency_summary(s.service_time_ns);
    o.send_lag_ns = latency_summary(s.send_lag_ns);
    o.late = s.late;
    o.max_backlog = s.max_backlog;
    o.pool_full_share = pool_full_share(r);
    o.mean_in_system = r.mean_in_system();
    f.open = o;
  }
  return f;
}

LevelFigures level_figures(const std::vector<core::RunResult>& runs,
                           const core::ResourceUse* previous_use) {
  LevelFigures l;
  const size_t m = median_index(runs);
  const core::RunResult& run = runs[m];
  l.median = run_figures(run);
  l.mode = run.open_loop() ? LoopMode::kOpen : LoopMode::kClosed;
  l.repeats = static_cast<int>(runs.size());
  auto figure = [&](auto get) {
    std::vector<double> v;
    for (const core::RunResult& r : runs) v.push_back(get(r));
    return range_of(std::move(v));
  };
  auto pct = [](double p) {
    return [p](const core::RunResult& r) {
      return static_cast<double>(r.stats.latency_ns.value_at_percentile(p));
    };
  };
  l.ranges.throughput_rps = figure([](const core::RunResult& r) { return r.throughput_rps(); });
  l.ranges.latency_ns.mean = figure([](const core::RunResult& r) {
    return r.stats.latency_ns.count() > 0 ? r.stats.latency_ns.mean() : 0.0;
  });
  l.ranges.latency_ns.p50 = figure(pct(50));
  l.ranges.latency_ns.p90 = figure(pct(90));
  l.ranges.latency_ns.p99 = figure(pct(99));
  l.ranges.latency_ns.p999 = figure(pct(99.9));
  if (runs.size() > 1) {
    for (const core::RunResult& r : runs) l.runs.push_back(run_figures(r));
  }
  // No successful response (every answer a 404, say): no X or R to check N against, where the
  // check printed N = 1 against X * mean R = 0.00 as a failure of the law (a new user's trial).
  const double mean_ns = run.stats.latency_ns.count() > 0 ? run.stats.latency_ns.mean() : NAN;
  if (run.open_loop()) {
    l.little =
        little_figures(analysis::check_little(run.mean_in_system(), run.throughput_rps(), mean_ns));
  } else {
    const analysis::LittleCheck c =
        analysis::check_little(run.concurrency(), run.throughput_rps(), mean_ns);
    l.little = little_figures(c);
    l.little_flagged = run.stats.latency_ns.count() > 0 && std::isfinite(c.ratio) && c.ratio < 0.9;
  }
  // Without host figures (a remote target, --scenario) what knee saw itself still speaks: an
  // unreachable target, the client, the pool, its own retransmits.
  const bool stages = staged(run);
  analysis::SaturationVerdict v = analysis::name_saturated_resource(
      run.use ? (stages ? peak_use(*run.use) : *run.use) : core::ResourceUse{}, client_use(run), {},
      previous_use, stages && run.use ? &*run.use : nullptr);
  const bool client_1s =
      client_demand(run.stats.max_thread_cpu_demand, demand_1s_of(run)).busiest_second;
  const std::optional<double> pool_1s = pool_full_1s_of(run);
  const bool pool_busiest = run.open_loop() && pool_1s && *pool_1s > pool_full_share(run);
  std::vector<std::string> peaks;
  if (run.use) peaks.emplace_back("each host figure is its busiest sample");
  if (client_1s) peaks.emplace_back("the client's busiest thread is read at its busiest second");
  if (pool_busiest) peaks.emplace_back("the pool's exhaustion at its busiest second");
  if (stages && !peaks.empty()) {
    std::string listed = peaks.front();
    for (size_t i = 1; i < peaks.size(); ++i) {
      listed += (i + 1 == peaks.size() ? " and " : ", ") + peaks[i];
    }
    v.rule += fmt::format(
        "; --stages: {}, not the phase's mean, which the stages' changing rate would dilute",
        listed);
  }
  // Interrupted before measuring began: nothing was measured to judge (review: the JSON and HTML
  // said client-bound of an empty phase).
  const bool nothing_measured = l.median.interrupted && l.median.duration_s == 0;
  if (!nothing_measured) {
    l.saturated = SaturatedFigures{v.resource, v.detail, v.evidence, v.rule, v.warnings};
  }
  l.notes = run_notes(l.median, l.saturated);
  const uint32_t allowed = run.stats.connects.h2_server_max_streams;
  if (run.h2 && allowed > 0 && allowed < static_cast<uint32_t>(run.per_connection)) {
    l.notes.push_back(fmt::format(
        "the server allows {} concurrent stream{} per connection (SETTINGS_MAX_CONCURRENT_"
        "STREAMS), fewer than the {} asked for: the other {} requests of each connection waited "
        "inside knee for a stream, and that wait is in their latency. For {} in flight at the "
        "server, use more connections.",
        allowed, allowed == 1 ? "" : "s", run.per_connection,
        static_cast<uint32_t>(run.per_connection) - allowed, run.concurrency()));
  }
  return l;
}

std::vector<std::string> run_notes(const RunFigures& r,
                                   const std::optional<SaturatedFigures>& saturated) {
  std::vector<std::string> notes;
  const LatencySummary& h = r.latency_ns;
  if (!r.open && h.count > 0 && h.max >= 10 * h.p99 && h.max > 10'000'000) {
    notes.push_back(
        "the slowest response took over 10x the p99. In a closed loop a connection sends nothing "
        "while it waits, so a server stall delays the requests that would have been sent "
        "meanwhile and they never measure it (coordinated omission). To see what users arriving "
        "at a steady rate would see, run with -r RATE (open loop).");
  }
  if (r.requests_asked && !r.open && !r.interrupted && r.sent < *r.requests_asked) {
    notes.push_back(fmt::format(
        "-n {}: the -d bound of {:.2f} s ended the measured phase after {} of them; give a "
        "longer -d to measure them all.",
        *r.requests_asked, r.duration_s, r.sent));
  }
  if (r.split_responses >= kSplitNoteMinResponses &&
      static_cast<double>(r.split_responses) >= kSplitNoteMinShare * static_cast<double>(r.ok)) {
    notes.push_back(fmt::format(
        "{} of {} responses ({:.0f}%) arrived in two parts {:.1f} ms apart on average, the "
        "signature of Nagle's algorithm meeting delayed ACK: the server wrote a small part of "
        "each response (its headers) and then the rest with Nagle on, so the rest waited for the "
        "client's delayed ACK (RFC 896, RFC 1122 4.2.3.2; 40 ms at least on Linux). Real clients "
        "wait the same; the server should set "
        "TCP_NODELAY or write each response in one call (docs/methodology.md).",
        r.split_responses, r.ok,
        100.0 * static_cast<double>(r.split_responses) /
            static_cast<double>(std::max<uint64_t>(r.ok, 1)),
        r.split_gap_mean_ns / 1e6));
  }
  if (r.unsolicited) {
    notes.push_back(fmt::format(
        "the server sent {} byte{} that no request asked for, after a complete response (a body "
        "longer than its Content-Length, or an answer to no request), on {} connection{}: knee "
        "closed {} and opened new ones (reconnects), as their framing could no longer be "
        "trusted. The responses before those bytes were counted as complete; check the server's "
        "framing.",
        r.unsolicited->bytes, r.unsolicited->bytes == 1 ? "" : "s", r.unsolicited->closes,
        r.unsolicited->closes == 1 ? "" : "s", r.unsolicited->closes == 1 ? "it" : "them"));
  }
  if (r.sent == 0 && r.warmup.carried_over > 0) {
    notes.push_back(fmt::format(
        "the measured phase sent no request: its connections were still busy with {} warm-up "
        "request{} ({} still unanswered when the run stopped); the figures above are empty "
        "because the server stopped answering before measuring began, not because nothing was "
        "wrong.",
        r.warmup.carried_over, r.warmup.carried_over == 1 ? "" : "s", r.warmup.aborted));
  }
  if (r.open && !kept_schedule(r)) {
    const double scheduled_rps =
        r.duration_s > 0 ? static_cast<double>(r.open->scheduled) / r.duration_s : 0.0;
    notes.push_back(fmt::format(
        "the achieved rate {:.1f} req/s is below 99% of the {:.1f} req/s the schedule asked for "
        "(target {:.1f}): {}; latencies include that wait, but the server was not offered the "
        "target rate.",
        r.open->achieved_rate_rps, scheduled_rps, r.open->target_rate_rps,
        shortfall_cause(r, saturated)));
  }
  return notes;
}

analysis::ThresholdInput threshold_input(const RunFigures& r) {
  analysis::ThresholdInput in;
  in.p50_ns = static_cast<double>(r.latency_ns.p50);
  in.p90_ns = static_cast<double>(r.latency_ns.p90);
  in.p99_ns = static_cast<double>(r.latency_ns.p99);
  in.p999_ns = static_cast<double>(r.latency_ns.p999);
  in.mean_ns = r.latency_ns.mean;
  in.max_ns = static_cast<double>(r.latency_ns.max);
  in.throughput_rps = r.throughput_rps;
  in.errors = r.total_errors();
  in.sent = r.sent;
  in.latency_count = static_cast<uint64_t>(r.latency_ns.count);
  return in;
}

analysis::ThresholdInput threshold_input(const LevelFigures& level) {
  analysis::ThresholdInput in = threshold_input(level.median);
  if (level.runs.size() < 2) return in;
  in.latency_count = 0;
  for (const RunFigures& r : level.runs)
    in.latency_count += static_cast<uint64_t>(r.latency_ns.count);
  const LatencyRanges& l = level.ranges.latency_ns;
  in.p50_ns = l.p50.median;
  in.p90_ns = l.p90.median;
  in.p99_ns = l.p99.median;
  in.p999_ns = l.p999.median;
  in.mean_ns = l.mean.median;
  in.throughput_rps = level.ranges.throughput_rps.median;
  in.max_ns = static_cast<double>(latency_extremes(level).max_ns);
  return in;
}

LatencyExtremes latency_extremes(const LevelFigures& level) {
  LatencyExtremes e;
  bool any = false;
  auto fold = [&](const LatencySummary& l) {
    if (l.count == 0) return;
    e.min_ns = any ? std::min(e.min_ns, l.min) : l.min;
    e.max_ns = any ? std::max(e.max_ns, l.max) : l.max;
    any = true;
  };
  fold(level.median.latency_ns);
  for (const RunFigures& r : level.runs) fold(r.latency_ns);
  return e;
}

namespace {

// Every repeat's exact record, tagged with the host and the part that measured it.
std::vector<RunRecord> records_of(const std::vector<core::RunResult>& runs, const std::string& host,
                                  const std::optional<PartParams>& part) {
  std::vector<RunRecord> records;
  for (const core::RunResult& r : runs) {
    records.push_back({r, host, part ? part->index : 0, part ? part->count : 1});
  }
  return records;
}

}  // namespace

std::optional<std::string> tls_port_note(const std::string& url, const RunFigures& r) {
  if (!url.starts_with("http://") || r.requests > 0 || r.error_causes.empty()) return {};
  for (const auto& [cause, count] : r.error_causes) {
    if (!cause.starts_with("closed_before_response")) return {};
  }
  return "the server closed every connection without a response: if it speaks TLS on this "
         "port, try https://";
}

RunDocument analyse_run(std::string target, std::string started_at, LoadParams params,
                        const std::vector<core::RunResult>& runs, const probes::HostContext& host) {
  RunDocument d;
  d.target = std::move(target);
  d.started_at = std::move(started_at);
  d.params = std::move(params);
  d.level = level_figures(runs, nullptr);
  if (auto note = tls_port_note(d.params.url, d.level.median)) d.level.notes.push_back(*note);
  d.level.records = records_of(runs, host.hostname, d.params.part);
  d.host = host_figures(host);
  return d;
}

SweepDocument analyse_sweep(std::string target, std::string started_at, LoadParams params,
                            const std::vector<std::vector<core::RunResult>>& levels,
                            const probes::HostContext& host) {
  SweepDocument d;
  d.target = std::move(target);
  d.started_at = std::move(started_at);
  d.params = std::move(params);
  d.host = host_figures(host);
  std::vector<analysis::LevelPoint> points;
  const core::ResourceUse* previous_use = nullptr;
  const bool open =
      !levels.empty() && !levels.front().empty() && levels.front().front().open_loop();
  for (const std::vector<core::RunResult>& runs : levels) {
    d.levels.push_back(level_figures(runs, previous_use));
    if (auto note = tls_port_note(d.params.url, d.levels.back().median)) {
      d.levels.back().notes.push_back(*note);
    }
    d.levels.back().records = records_of(runs, host.hostname, d.params.part);
    const LevelFigures& level = d.levels.back();
    const core::RunResult& run = runs[median_index(runs)];
    if (run.use) previous_use = &*run.use;
    points.push_back(
        {run.open_loop() ? run.target_rate_rps : static_cast<double>(run.concurrency()),
         level.ranges.throughput_rps.median, level.ranges.latency_ns.p99.median});
    if (run.open_loop() && !kept_schedule(level.median)) {
      d.warnings.push_back(fmt::format(
          "rate {:.0f} req/s: achieved only {:.1f} req/s; {}, so this level did not offer its "
          "target rate",
          run.target_rate_rps, run.achieved_rate_rps(),
          shortfall_cause(level.median, level.saturated)));
    }
    const LittleFigures& little = level.little;
    const double n_eff = little.x_times_mean_r.value_or(NAN);
    const std::string name = run.open_loop() ? fmt::format("rate {:.0f} req/s", run.target_rate_rps)
                                             : fmt::format("concurrency {}", run.concurrency());
    if (level.little_flagged && reconnect_bound(level.median)) {
      d.warnings.push_back(fmt::format(
          "Little's law: at {} X * mean R = {:.2f} is below 0.9 N: connections were reopened {} "
          "times (the server closes them), and the time spent connecting is outside latency",
          name, n_eff, level.median.reconnects));
    } else if (level.little_flagged) {
      d.warnings.push_back(fmt::format(
          "Little's law: at {} X * mean R = {:.2f} is below 0.9 N: the client did not keep N "
          "requests in flight (client-bound, connect failures, or errors)",
          name, n_eff));
    } else if (!little.holds && run.stats.latency_ns.count() > 0 && run.open_loop()) {
      d.warnings.push_back(fmt::format(
          "at {} the mean number in the system ({:.2f}) differs from X * mean R ({:.2f}) by more "
          "than 5%: not a steady state, the queue grew during the level",
          name, run.mean_in_system(), n_eff));
    } else if (!little.holds && run.stats.latency_ns.count() > 0) {
      d.warnings.push_back(fmt::format(
          "Little's law: at {} X * mean R = {:.2f} differs from N by more than 5%", name, n_eff));
    }
    if (level.saturated &&
        (level.saturated->resource == "client" || level.saturated->resource == "unreachable")) {
      d.warnings.push_back(fmt::format("at {}: {}", name, level.saturated->detail));
    }
    if (level.saturated) {
      for (const std::string& w : level.saturated->warnings) {
        d.warnings.push_back(fmt::format("at {}: {}", name, w));
      }
    }
    if (run.stats.completed == 0) {
      d.warnings.push_back(fmt::format(
          "no response at {}: nothing completed in its measured phase (see errors; connects "
          "that never finished count as connect errors)",
          name));
    }
    const Range& x = level.ranges.throughput_rps;
    if (level.repeats > 1 && x.min > 0 && x.max > kRepeatSpreadLimit * x.min) {
      d.warnings.push_back(fmt::format(
          "at {} the {} repeats' throughput spread {:.2f}x ({:.0f}-{:.0f} req/s), more than "
          "{:g}x: the level's median is weak (a noisy host, or a server that changes state); "
          "rerun on a quieter host",
          name, level.repeats, x.max / x.min, x.min, x.max, kRepeatSpreadLimit));
    }
    if (run.stats.total_errors() > 0) {
      std::string kinds;
      for (const auto& [kind, count] : level.median.errors) {
        if (count > 0) kinds += fmt::format("{}{} x{}", kinds.empty() ? "" : ", ", kind, count);
      }
      d.warnings.push_back(fmt::format("errors at {}: {}", name, kinds));
    }
  }
  analysis::KneeVerdict knee =
      analysis::find_knee(points, 0.10, 1.5, open ? "rate" : "concurrency");
  d.knee.rule = knee.rule;
  for (double g : knee.gain_per_doubling) d.knee.gain_per_doubling.push_back(known(g));
  d.knee.noisy_index = knee.noisy_index;
  if (open && !knee.index) {
    // The open loop's own question: the first rate the server fell behind.
    analysis::KneeVerdict by_rate = analysis::find_rate_knee(points);
    d.knee.rule += "; else " + by_rate.rule;
    if (by_rate.index) {
      knee.index = by_rate.index;
      knee.overloaded_index = by_rate.overloaded_index;
      // A candidate of the per-doubling rule that did not hold is still worth saying.
      knee.summary = by_rate.summary + (knee.noisy_index ? "; per doubling, " + knee.summary : "");
    }
  }
  d.knee.index = knee.index;
  d.knee.summary = knee.summary;
  if (knee.index) {
    const LevelFigures& at = d.levels[*knee.index];
    if (at.median.open) d.knee.rate_rps = at.median.open->target_rate_rps;
    d.knee.concurrency = at.median.concurrency;
    // In open loop the knee is the last rate the server kept up with, so what saturated shows
    // at the rate past it; in closed loop, at the knee itself.
    const bool next_exists = *knee.index + 1 < d.levels.size();
    const size_t verdict_at =
        knee.overloaded_index.value_or(open && next_exists ? *knee.index + 1 : *knee.index);
    d.knee.saturated_index = verdict_at;
    if (d.levels[verdict_at].saturated) {
      d.knee.saturated = d.levels[verdict_at].saturated->resource;
    }
  }
  std::vector<analysis::ThroughputPoint> xs;
  for (const analysis::LevelPoint& p : points) xs.push_back({p.concurrency, p.throughput_rps});
  if (xs.size() >= 3 && !open) {  // USL and Kneedle model throughput against concurrency
    if (auto fit = analysis::fit_usl(xs)) {
      d.usl = usl_figures(*fit);
    } else {
      d.usl_error = fit.status().message();
    }
    auto kn = analysis::find_kneedle(xs);
    if (kn && kn->index) {
      d.kneedle = KneedleFigures{kn->knee_concurrency,
                                 std::string(analysis::x_scale_name(kn->x_scale)), kn->summary};
    }
  }
  // Service demand D = U / X from the level where the server did the most work: the highest
  // throughput among the levels whose server CPU was sampled, those with errors over 1 % of
  // their requests left out while any other remains. Regression (a new user's trial): it came
  // from the last level sampled, and a collapsed last level (few answers for the CPU it burnt)
  // inflated D and put the bound 1/D below throughputs the sweep had measured.
  std::optional<size_t> at;
  bool at_clean = false;
  for (size_t i = 0; i < levels.size(); ++i) {
    const core::RunResult& run = levels[i][median_index(levels[i])];
    if (!run.use || !run.use->server || !core::is_known(run.use->server->cpu_pct) ||
        !(run.throughput_rps() > 0)) {
      continue;
    }
    const bool clean = static_cast<double>(run.stats.total_errors()) <=
                       0.01 * static_cast<double>(std::max<uint64_t>(run.stats.sent, 1));
    const core::RunResult* best = at ? &levels[*at][median_index(levels[*at])] : nullptr;
    if (best == nullptr || (clean && !at_clean) ||
        (clean == at_clean && run.throughput_rps() > best->throughput_rps())) {
      at = i;
      at_clean = clean;
    }
  }
  if (at) {
    const core::RunResult& run = levels[*at][median_index(levels[*at])];
    d.service_demand = service_demand(*run.use, run.throughput_rps());
    if (d.service_demand) d.service_demand->level_index = *at;
  }
  return d;
}

namespace {

// A throughput threshold on a --stages run is checked against the whole phase's mean, which a
// ramp keeps below its peak (a new user's trial: 'rps>=150' on 2s:200,1s:200 failed at 133.3
// with no word of why); the note says so and gives the busiest second's throughput.
std::string staged_mean_note(const analysis::Threshold& t, const RunFigures& run) {
  if (t.metric != analysis::ThresholdMetric::kThroughput) return "";
  double busiest = -1;
  for (const IntervalFigures& i : run.intervals) {
    if (i.target_rps) busiest = std::max(busiest, i.throughput_rps);
  }
  if (busiest < 0) return "";
  return fmt::format(
      "; that is the mean over the stages, whose rate moves: the busiest second completed "
      "{:.1f} req/s (--timeline lists them)",
      busiest);
}

}  // namespace

std::vector<ThresholdOutcome> check_thresholds(const std::vector<analysis::Threshold>& thresholds,
                                               const std::vector<LevelFigures>& levels,
                                               bool name_levels) {
  std::vector<ThresholdOutcome> outcomes;
  for (const analysis::Threshold& t : thresholds) {
    std::string first;
    std::string passed_line = t.text + ": passed";
    size_t failed_levels = 0;
    for (const LevelFigures& level : levels) {
      const analysis::ThresholdResult r = analysis::evaluate(t, threshold_input(level));
      if (r.passed) {
        if (levels.size() == 1) passed_line = r.line;
        continue;
      }
      if (failed_levels++ == 0) {
        first = name_levels
                    ? fmt::format("at {} {:g}: {}", level.median.open ? "rate" : "concurrency",
                                  level.median.level_key(), r.line)
                    : r.line;
        first += staged_mean_note(t, level.median);
      }
    }
    if (failed_levels == 0) {
      outcomes.push_back(
          {t.text, true, levels.size() > 1 ? passed_line + " at every level" : passed_line});
      continue;
    }
    outcomes.push_back(
        {t.text, false,
         first + (failed_levels > 1 ? fmt::format(" (and at {} more level{})", failed_levels - 1,
                                                  failed_levels > 2 ? "s" : "")
                                    : "")});
  }
  return outcomes;
}

std::vector<std::string> schedule_shortfalls(const LevelFigures& level) {
  std::vector<std::string> out;
  const std::vector<RunFigures> one{level.median};
  for (const RunFigures& r : level.runs.empty() ? one : level.runs) {
    if (!r.open || r.duration_s <= 0 || kept_schedule(r)) continue;
    out.push_back(fmt::format("achieved {:.1f} req/s, below 99% of the {:.1f} req/s scheduled",
                              r.open->achieved_rate_rps,
                              static_cast<double>(r.open->scheduled) / r.duration_s));
  }
  return out;
}

}  // namespace knee::report
