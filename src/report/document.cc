#include "report/document.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/json_io.h"

namespace knee::report {

using core::Result;
using core::Status;
using nlohmann::json;

std::string_view to_text(LoopMode m) { return m == LoopMode::kOpen ? "open" : "closed"; }

bool from_text(std::string_view s, LoopMode& m) {
  if (s == "open") {
    m = LoopMode::kOpen;
  } else if (s == "closed") {
    m = LoopMode::kClosed;
  } else {
    return false;
  }
  return true;
}

Range range_of(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return Range{median, values.front(), values.back()};
}

uint64_t RunFigures::total_errors() const {
  uint64_t n = 0;
  for (const auto& [kind, count] : errors) n += count;
  return n;
}

uint64_t RunFigures::request_failures() const {
  uint64_t n = 0;
  for (const auto& [kind, count] : errors) {
    if (kind != "connect" && kind != "tls" && kind != "status") n += count;
  }
  return n;
}

bool reconnect_bound(const RunFigures& r) {
  return r.requests > 0 && 10 * r.reconnects >= r.requests;
}

double RunFigures::level_key() const {
  if (open) return open->target_rate_rps;
  return concurrency.value_or(0);
}

// ---- custom scalars ----

json to_json_value(const PoolCap& p) {
  return p.connections ? json(*p.connections) : json("default per rate");
}

bool from_json_value(const json& j, PoolCap& p) {
  if (j.is_string() && j.get_ref<const std::string&>() == "default per rate") {
    p.connections.reset();
    return true;
  }
  if (!j.is_number_integer()) return false;
  p.connections = j.get<int>();
  return true;
}

json to_json_value(const LevelKey& k) {
  if (k.value == std::round(k.value) && std::abs(k.value) < 9e15) {
    return json(static_cast<int64_t>(k.value));
  }
  return json(k.value);
}

bool from_json_value(const json& j, LevelKey& k) {
  if (!j.is_number()) return false;
  k.value = j.get<double>();
  return true;
}

// ---- the field lists (json_io.h) ----

template <class Io>
void describe(Io& io, HostFigures& h) {
  io("hostname", h.hostname);
  io.omittable("knee_version", h.knee_version);
  io("cpu_model", h.cpu_model);
  io("logical_cpus", h.logical_cpus);
  io("kernel", h.kernel);
  io("os", h.os);
  io("governor", h.governor);
  io("turbo", h.turbo);
  io("compiler", h.compiler);
  io("build_type", h.build_type);
  io("cxx_flags", h.cxx_flags);
  io("clock_resolution_ns", h.clock_resolution_ns);
  io.nullable("load_avg_1m", h.load_avg_1m);
  io("warnings", h.warnings);
}

template <class Io>
void describe(Io& io, LatencySummary& l) {
  io("min", l.min);
  io("mean", l.mean);
  io("p50", l.p50);
  io("p90", l.p90);
  io("p99", l.p99);
  io("p999", l.p999);
  io("max", l.max);
  io("count", l.count);
}

template <class Io>
void describe(Io& io, Range& r) {
  io("median", r.median);
  io("min", r.min);
  io("max", r.max);
}

template <class Io>
void describe(Io& io, SpectrumPoint& p) {
  io("percentile", p.percentile);
  io("value_ns", p.value_ns);
}

template <class Io>
void describe(Io& io, IntervalFigures& i) {
  io("start_s", i.start_s);
  io("length_s", i.length_s);
  io("responses", i.responses);
  io("throughput_rps", i.throughput_rps);
  io("p50_ns", i.p50_ns);
  io("p99_ns", i.p99_ns);
  io("max_ns", i.max_ns);
  io.omittable("target_rps", i.target_rps);
  io.omittable("errors", i.errors);
}

template <class Io>
void describe(Io& io, ServerFigures& s) {
  io("pid", s.pid);
  io.nullable("cpu_pct", s.cpu_pct);
  io.nullable("busiest_thread_cpu_pct", s.busiest_thread_cpu_pct);
  io.omittable("cpu_max_pct", s.cpu_max_pct);
  io.omittable("busiest_thread_cpu_max_pct", s.busiest_thread_cpu_max_pct);
  io("threads", s.threads);
  io.nullable("rss_bytes", s.rss_bytes);
  io.omittable("name", s.name);
  io.omittable("requests", s.requests);
}

template <class Io>
void describe(Io& io, DiskFigures& d) {
  io("device", d.device);
  io.nullable("r_per_s", d.r_per_s);
  io.nullable("w_per_s", d.w_per_s);
  io.nullable("rkb_per_s", d.rkb_per_s);
  io.nullable("wkb_per_s", d.wkb_per_s);
  io.nullable("r_await_ms", d.r_await_ms);
  io.nullable("w_await_ms", d.w_await_ms);
  io.nullable("aqu_sz", d.aqu_sz);
  io.nullable("util_pct", d.util_pct);
}

template <class Io>
void describe(Io& io, NetFigures& n) {
  io("interface", n.interface);
  io.nullable("rx_bytes_per_s", n.rx_bytes_per_s);
  io.nullable("tx_bytes_per_s", n.tx_bytes_per_s);
  io("speed_mbit", n.speed_mbit);
  io.nullable("util_pct", n.util_pct);
  io.nullable("drops_per_s", n.drops_per_s);
}

template <class Io>
void describe(Io& io, ResourceFigures& r) {
  io("window_s", r.window_s);
  io("samples", r.samples);
  io("cpu_busy_pct", r.cpu_busy_pct);
  io.nullable("cpu_busy_all_pct", r.cpu_busy_all_pct);
  io.nullable("cpu_pressure_some_pct", r.cpu_pressure_some_pct);
  io("disks", r.disks);
  io.nullable("io_pressure_some_pct", r.io_pressure_some_pct);
  io("nets", r.nets);
  io.nullable("tcp_retrans_per_s", r.tcp_retrans_per_s);
  io.nullable("listen_overflows_per_s", r.listen_overflows_per_s);
  io.nullable("listen_drops_per_s", r.listen_drops_per_s);
  io.nullable("mem_available_bytes", r.mem_available_bytes);
  io.nullable("memory_pressure_some_pct", r.memory_pressure_some_pct);
  io.omittable("server", r.server);
  io.omit_empty("backends", r.backends);
}

template <class Io>
void describe(Io& io, OpenLoopFigures& o) {
  io("target_rate_rps", o.target_rate_rps);
  io("achieved_rate_rps", o.achieved_rate_rps);
  io("scheduled", o.scheduled);
  io("never_sent", o.never_sent);
  io("service_time_ns", o.service_time_ns);
  io("send_lag_ns", o.send_lag_ns);
  io("late", o.late);
  io("max_backlog", o.max_backlog);
  io("pool_full_share", o.pool_full_share);
  io("mean_in_system", o.mean_in_system);
}

template <class Io>
void describe(Io& io, WarmupFigures& w) {
  io.omittable("scheduled", w.scheduled);
  io("sent", w.sent);
  io.omittable("never_sent", w.never_sent);
  io("completed", w.completed);
  io("failed", w.failed);
  io("aborted", w.aborted);
  io("carried_over", w.carried_over);
  io("errors", w.errors);
}

template <class Io>
void describe(Io& io, UnreachableFigures& u) {
  io("since_s", u.since_s);
  io("connect_failures", u.connect_failures);
}

template <class Io>
void describe(Io& io, UnsolicitedFigures& u) {
  io("bytes", u.bytes);
  io("closes", u.closes);
}

template <class Io>
void describe(Io& io, ByteFigures& b) {
  io("sent", b.sent);
  io("received", b.received);
  io("received_body", b.received_body);
  io("received_headers", b.received_headers);
  io("sent_per_s", b.sent_per_s);
  io("received_per_s", b.received_per_s);
}

template <class Io>
void describe(Io& io, TlsFigures& t) {
  io("version", t.version);
  io("cipher", t.cipher);
  io("alpn", t.alpn);
  io("full", t.full);
  io("resumed", t.resumed);
  io("handshake_ns", t.handshake_ns);
}

template <class Io>
void describe(Io& io, H2Figures& h) {
  io("goaways", h.goaways);
  io("resent", h.resent);
  io("goaway_error", h.goaway_error);
  io.omittable("server_max_streams", h.server_max_streams);
}

template <class Io>
void describe(Io& io, ConnectFigures& c) {
  io("opened", c.opened);
  io("tcp_ns", c.tcp_ns);
  io.omittable("tls", c.tls);
  io.omittable("h2", c.h2);
}

template <class Io>
void describe(Io& io, EndpointFigures& e) {
  io("name", e.name);
  io("share", e.share);
  io("sent", e.sent);
  io("requests", e.requests);
  io("ok", e.ok);
  io("aborted", e.aborted);
  io("throughput_rps", e.throughput_rps);
  io("latency_ns", e.latency_ns);
  io("errors", e.errors);
  io("status", e.status);
}

template <class Io>
void describe(Io& io, RunFigures& r) {
  io.omittable("concurrency", r.concurrency);
  io.omittable("max_connections", r.max_connections);
  io("threads", r.threads);
  io("requests", r.requests);
  io("ok", r.ok);
  io("sent", r.sent);
  io("aborted", r.aborted);
  io("reconnects", r.reconnects);
  io.omittable("requests_asked", r.requests_asked);
  io("warmup", r.warmup);
  io.omittable("connects", r.connects);
  io("bytes", r.bytes);
  io("tcp_retransmits", r.tcp_retransmits);
  io("tcp_segments_out", r.tcp_segments_out);
  io("split_responses", r.split_responses);
  io("split_gap_mean_ns", r.split_gap_mean_ns);
  io.omittable("unsolicited", r.unsolicited);
  io.omittable("unreachable", r.unreachable);
  io("duration_s", r.duration_s);
  io("throughput_rps", r.throughput_rps);
  io("latency_ns", r.latency_ns);
  io("errors", r.errors);
  io("error_causes", r.error_causes);
  io("status", r.status);
  io("client_cpu_cores", r.client_cpu_cores);
  io("client_max_thread_cpu", r.client_max_thread_cpu);
  io("client_max_thread_cpu_demand", r.client_max_thread_cpu_demand);
  io.omittable("client_max_thread_cpu_demand_1s", r.client_max_thread_cpu_demand_1s);
  io("client_spin_ns", r.client_spin_ns);
  io("loop_lag_ns", r.loop_lag_ns);
  io("interrupted", r.interrupted);
  io.nullable("resources", r.resources);
  io("measure_start_epoch_s", r.measure_start_epoch_s);
  io("spectrum", r.spectrum);
  io("intervals", r.intervals);
  io.flatten_if("target_rate_rps", r.open);
  io.omittable("endpoints", r.endpoints);
}

template <class Io>
void describe(Io& io, LatencyRanges& l) {
  io("mean", l.mean);
  io("p50", l.p50);
  io("p90", l.p90);
  io("p99", l.p99);
  io("p999", l.p999);
}

template <class Io>
void describe(Io& io, Ranges& r) {
  io("throughput_rps", r.throughput_rps);
  io("latency_ns", r.latency_ns);
}

template <class Io>
void describe(Io& io, LittleFigures& l) {
  io("n", l.n);
  io.nullable("x_times_mean_r", l.x_times_mean_r);
  io.nullable("ratio", l.ratio);
  io("holds", l.holds);
}

template <class Io>
void describe(Io& io, SaturatedFigures& s) {
  io("resource", s.resource);
  io("detail", s.detail);
  io("evidence", s.evidence);
  io("rule", s.rule);
  io.omit_empty("warnings", s.warnings);
}

template <class Io>
void describe(Io& io, PartFigures& p) {
  io("part", p.part);
  io("host", p.host);
  io("source", p.source);
  io("connections", p.connections);
  io.omittable("rate_rps", p.rate_rps);
  io("throughput_rps", p.throughput_rps);
  io("errors", p.errors);
  io("client_cpu_cores", p.client_cpu_cores);
  io("client_max_thread_cpu_demand", p.client_max_thread_cpu_demand);
  io("start_offset_ms", p.start_offset_ms);
  io.omittable("clock_offset_ms", p.clock_offset_ms);
  io("saturated", p.saturated);
  io("detail", p.detail);
}

template <class Io>
void describe(Io& io, PartParams& p) {
  io("index", p.index);
  io("count", p.count);
}

template <class Io>
void describe(Io& io, LevelFigures& l) {
  io.flatten(l.median);
  io("mode", l.mode);
  io("repeats", l.repeats);
  io("ranges", l.ranges);
  io.omit_empty("runs", l.runs);
  io("little", l.little);
  io("little_flagged", l.little_flagged);
  io.nullable("saturated", l.saturated);
  io("notes", l.notes);
  io.omit_empty("parts", l.parts);
  io.omit_empty("records", l.records);
}

template <class Io>
void describe(Io& io, TlsParams& t) {
  io("verify", t.verify);
  io("ca_file", t.ca_file);
  io("client_cert", t.client_cert);
  io.omittable("version", t.version);
  io("resume", t.resume);
}

template <class Io>
void describe(Io& io, LoadParams& p) {
  io("url", p.url);
  io("method", p.method);
  io("duration_s", p.duration_s);
  io("warmup_s", p.warmup_s);
  io("timeout_s", p.timeout_s);
  io("grace_s", p.grace_s);
  io("threads", p.threads);
  io("repeats", p.repeats);
  io("arrival", p.arrival);
  io.omittable("seed", p.seed);
  io.omittable("new_connection_per_request", p.new_connection_per_request);
  io.omittable("tls", p.tls);
  io.omittable("protocol", p.protocol);
  io.omittable("io", p.io);
  io.omittable("per_connection", p.per_connection);
  io.omittable("mix", p.mix);
  io.omittable("stages", p.stages);
  io.omittable("requests", p.requests);
  io.omittable("timeline", p.timeline);
  io.omittable("shipments", p.shipments);
  io.omittable("zipf", p.zipf);
  io.omittable("part", p.part);
  io.omit_empty("merged_from", p.merged_from);
}

template <class Io>
void describe(Io& io, ThresholdOutcome& t) {
  io("threshold", t.threshold);
  io("passed", t.passed);
  io("line", t.line);
}

template <class Io>
void describe(Io& io, RunDocument& d) {
  io.flatten(d.level);
  io("target", d.target);
  io("started_at", d.started_at);
  io("params", d.params);
  io("host", d.host);
  io.omit_empty("thresholds", d.thresholds);
}

template <class Io>
void describe(Io& io, KneeFigures& k) {
  io.nullable("index", k.index);
  io.nullable("rate_rps", k.rate_rps);
  io.nullable("concurrency", k.concurrency);
  io("summary", k.summary);
  io("rule", k.rule);
  io("gain_per_doubling", k.gain_per_doubling);
  io.nullable("saturated", k.saturated);
  io.omittable("saturated_index", k.saturated_index);
  io.omittable("noisy_index", k.noisy_index);
}

template <class Io>
void describe(Io& io, UslFigures& u) {
  io("sigma", u.sigma);
  io("kappa", u.kappa);
  io("lambda_rps", u.lambda_rps);
  io.nullable("r_squared", u.r_squared);
  io.nullable("peak_concurrency", u.peak_concurrency);
  io.nullable("peak_throughput_rps", u.peak_throughput_rps);
  io("flags", u.flags);
  io.nullable("sigma_se", u.sigma_se);
  io.nullable("kappa_se", u.kappa_se);
  io.nullable("lambda_se", u.lambda_se);
}

template <class Io>
void describe(Io& io, KneedleFigures& k) {
  io("concurrency", k.concurrency);
  io("x_scale", k.x_scale);
  io("summary", k.summary);
}

template <class Io>
void describe(Io& io, DemandFigures& d) {
  io("cpu_demand_ns", d.cpu_demand_ns);
  io("cpu_bound_rps", d.cpu_bound_rps);
  io.omittable("process", d.process);
  io.omittable("total_cpu_demand_ns", d.total_cpu_demand_ns);
  io.omittable("total_cpu_bound_rps", d.total_cpu_bound_rps);
  io.omittable("level_index", d.level_index);
}

template <class Io>
void describe(Io& io, ExternalResultFigures& f) {
  io.omittable("name", f.name);
  io.nullable("throughput", f.throughput);
  io.omittable("bandwidth_bytes_per_s", f.bandwidth_bytes_per_s);
  io.nullable("latency_mean_ns", f.latency_mean_ns);
  io.nullable("latency_p50_ns", f.latency_p50_ns);
  io.nullable("latency_p90_ns", f.latency_p90_ns);
  io.nullable("latency_p99_ns", f.latency_p99_ns);
  io.nullable("latency_p999_ns", f.latency_p999_ns);
  io.nullable("latency_max_ns", f.latency_max_ns);
  io.nullable("in_flight", f.in_flight);
  io.omittable("cpu_pct", f.cpu_pct);
  io("errors", f.errors);
}

template <class Io>
void describe(Io& io, ExternalRunFigures& r) {
  io("command", r.command);
  io("wall_s", r.wall_s);
  io.nullable("runtime_s", r.runtime_s);
  io.nullable("tool_cpu_cores", r.tool_cpu_cores);
  io.omittable("tool_threads", r.tool_threads);
  io("total", r.total);
  io.omit_empty("jobs", r.jobs);
  io.omit_empty("notes", r.notes);
  io.nullable("resources", r.resources);
}

template <class Io>
void describe(Io& io, ExternalLevelFigures& l) {
  io("level", l.level);
  io.flatten(l.median);
  io("repeats", l.repeats);
  io("throughput_range", l.throughput);
  io.omittable("latency_mean_ns_range", l.latency_mean_ns);
  io.omittable("latency_p99_ns_range", l.latency_p99_ns);
  io.omit_empty("runs", l.runs);
  io.omittable("little", l.little);
  io.omittable("disk", l.disk);
  io("saturated", l.saturated);
}

template <class Io>
void describe(Io& io, ExternalSweepDocument& d) {
  io("command", d.command);
  io("adapter", d.adapter);
  io("unit", d.unit);
  io("started_at", d.started_at);
  io("repeats", d.repeats);
  io("timeout_s", d.timeout_s);
  io.omit_empty("files", d.files);
  io.omittable("device", d.device);
  io.omittable("fs_type", d.fs_type);
  io("levels", d.levels);
  io("knee", d.knee);
  io.nullable("usl", d.usl);
  io.omittable("usl_error", d.usl_error);
  io.omittable("failed", d.failed);
  io("interrupted", d.interrupted);
  io("warnings", d.warnings);
  io("host", d.host);
}

template <class Io>
void describe(Io& io, SweepDocument& d) {
  io("target", d.target);
  io("started_at", d.started_at);
  io("params", d.params);
  io("levels", d.levels);
  io("knee", d.knee);
  io.nullable("usl", d.usl);
  io.omittable("usl_error", d.usl_error);
  io.nullable("kneedle", d.kneedle);
  io.nullable("service_demand", d.service_demand);
  io("warnings", d.warnings);
  io("host", d.host);
  io.omit_empty("thresholds", d.thresholds);
}

template <class Io>
void describe(Io& io, ScenariosDocument& d) {
  io("order", d.order);
  io("scenarios", d.scenarios);
}

template <class Io>
void describe(Io& io, CapacityLimit& l) {
  io("resource", l.resource);
  io("detail", l.detail);
  io.nullable("client_thread_cpu_demand", l.client_thread_cpu_demand);
}

template <class Io>
void describe(Io& io, CapacityRepeatFigures& r) {
  io("p50_ns", r.p50_ns);
  io("p99_ns", r.p99_ns);
  io("p999_ns", r.p999_ns);
  io("max_ns", r.max_ns);
  io("throughput_rps", r.throughput_rps);
  io("achieved_rps", r.achieved_rps);
  io("errors", r.errors);
  io("sent", r.sent);
  io("passed", r.passed);
  io("failures", r.failures);
  io.omittable("limit", r.limit);
}

template <class Io>
void describe(Io& io, CapacityStepFigures& s) {
  io("rate_rps", s.rate_rps);
  io("phase", s.phase);
  io("passed", s.passed);
  io("repeats", s.repeats);
}

template <class Io>
void describe(Io& io, CapacityParams& p) {
  io("start_rate_rps", p.start_rate_rps);
  io("max_rate_rps", p.max_rate_rps);
  io("precision_percent", p.precision_percent);
  io("repeats", p.repeats);
  io("confirm_repeats", p.confirm_repeats);
  io("duration_s", p.duration_s);
  io("warmup_s", p.warmup_s);
  io("timeout_s", p.timeout_s);
  io("max_connections", p.max_connections);
  io.omittable("io", p.io);
}

template <class Io>
void describe(Io& io, CapacityBracket& b) {
  io.nullable("highest_pass_rps", b.highest_pass_rps);
  io.nullable("lowest_fail_rps", b.lowest_fail_rps);
}

template <class Io>
void describe(Io& io, CapacityDocument& d) {
  io("target", d.target);
  io("slos", d.slos);
  io("params", d.params);
  io.nullable("capacity_rps", d.capacity_rps);
  io("bracket", d.bracket);
  io("reached_max", d.reached_max);
  io("confirmed", d.confirmed);
  io("interrupted", d.interrupted);
  io("steps", d.steps);
}

template <class Io>
void describe(Io& io, RungFigures& r) {
  io("group", r.group);
  io("id", r.id);
  io("name", r.name);
  io("method", r.method);
  io("rung", r.rung);
  io("batch", r.batch);
  io("samples", r.samples);
  io("ops", r.ops);
  io("repeats", r.repeats);
  io("median_ns", r.median_ns);
  io("p99_ns", r.p99_ns);
  io("min_ns", r.min_ns);
  io("best_ns", r.best_ns);
  io("ops_per_s", r.ops_per_s);
  io.omittable("plan", r.plan);
}

template <class Io>
void describe(Io& io, LadderClock& c) {
  io("getres_ns", c.getres_ns);
  io("smallest_step_ns", c.smallest_step_ns);
  io("now_cost_ns", c.now_cost_ns);
  io("target_sample_ns", c.target_sample_ns);
}

template <class Io>
void describe(Io& io, LadderParams& p) {
  io("repeats", p.repeats);
  io("max_samples_per_repeat", p.max_samples_per_repeat);
  io("max_time_per_repeat_ms", p.max_time_per_repeat_ms);
  io("warmup_ms", p.warmup_ms);
  io("disk_repeats", p.disk_repeats);
  io("disk_max_writes_per_repeat", p.disk_max_writes_per_repeat);
  io("disk_max_time_per_repeat_ms", p.disk_max_time_per_repeat_ms);
  io("dram_bytes", p.dram_bytes);
  io("cache_bytes", p.cache_bytes);
  io("sqlite_rows", p.sqlite_rows);
  io("dir", p.dir);
}

template <class Io>
void describe(Io& io, LadderSqlite& s) {
  io("version", s.version);
  io("rows", s.rows);
  io("plans", s.plans);
  io("scan_over_key", s.scan_over_key);
  io("scan_over_index", s.scan_over_index);
}

template <class Io>
void describe(Io& io, LadderDisk& d) {
  io("dir", d.dir);
  io("path", d.path);
  io("fs_type", d.fs_type);
  io("mount_point", d.mount_point);
  io("source", d.source);
  io("device", d.device);
  io("device_model", d.device_model);
  io.nullable("rotational", d.rotational);
  io("memory", d.memory);
  io("block_bytes", d.block_bytes);
  io("warnings", d.warnings);
}

template <class Io>
void describe(Io& io, GeoPoint& g) {
  io("lat_deg", g.lat_deg);
  io("lon_deg", g.lon_deg);
}

template <class Io>
void describe(Io& io, RouteFigures& r) {
  io("name", r.name);
  io("from", r.from);
  io("to", r.to);
  io("distance_km", r.distance_km);
  io("vacuum_rtt_ms", r.vacuum_rtt_ms);
  io("fibre_rtt_ms", r.fibre_rtt_ms);
  io("rung", r.rung);
}

template <class Io>
void describe(Io& io, LadderNetwork& n) {
  io("fibre_factor", n.fibre_factor);
  io("earth_radius_km", n.earth_radius_km);
  io("speed_of_light_km_per_s", n.speed_of_light_km_per_s);
  io("method", n.method);
  io("routes", n.routes);
}

template <class Io>
void describe(Io& io, LadderDocument& d) {
  io("started_at", d.started_at);
  io("duration_s", d.duration_s);
  io("only", d.only);
  io("host", d.host);
  io("clock", d.clock);
  io("params", d.params);
  io("rungs", d.rungs);
  io.nullable("sqlite", d.sqlite);
  io.nullable("disk", d.disk);
  io.nullable("network", d.network);
  io("warnings", d.warnings);
}

template <class Io>
void describe(Io& io, PhaseFigures& p) {
  io("curl", p.curl);
  io("words", p.words);
  io("count", p.count);
  io.nullable("min_ns", p.min_ns);
  io.nullable("median_ns", p.median_ns);
  io.nullable("p99_ns", p.p99_ns);
  io.nullable("max_ns", p.max_ns);
  io.nullable("phase_min_ns", p.phase_min_ns);
  io.nullable("phase_median_ns", p.phase_median_ns);
  io.nullable("phase_p99_ns", p.phase_p99_ns);
}

template <class Io>
void describe(Io& io, AttemptFigures& a) {
  io("ok", a.ok);
  io("new_connection", a.new_connection);
  io.nullable("status", a.status);
  io("body_bytes", a.body_bytes);
  io("at_ns", a.at_ns);
  io.nullable("error", a.error);
}

template <class Io>
void describe(Io& io, ProbeParams& p) {
  io("method", p.method);
  io("count", p.count);
  io("reuse", p.reuse);
  io("timeout_s", p.timeout_s);
}

template <class Io>
void describe(Io& io, ProbeDocument& d) {
  io("target", d.target);
  io("started_at", d.started_at);
  io("address", d.address);
  io("params", d.params);
  io("times", d.times);
  io("ok", d.ok);
  io("failed", d.failed);
  io("connections", d.connections);
  io("status", d.status);
  io("errors", d.errors);
  io("phases", d.phases);
  io("attempts", d.attempts);
  io.omittable("tls", d.tls);
}

template <class Io>
void describe(Io& io, LittleDocument& d) {
  io("formula", d.formula);
  io("solved", d.solved);
  io.nullable("n", d.n);
  io.nullable("x_rps", d.x_rps);
  io.nullable("r_ns", d.r_ns);
  io("source", d.source);
}

template <class Io>
void describe(Io& io, Mm1Row& r) {
  io("utilisation", r.utilisation);
  io("arrival_rps", r.arrival_rps);
  io("mean_response_ns", r.mean_response_ns);
  io("ratio_to_first", r.ratio_to_first);
  io("p50_ns", r.p50_ns);
  io("p90_ns", r.p90_ns);
  io("p99_ns", r.p99_ns);
}

template <class Io>
void describe(Io& io, Mm1Peak& p) {
  io("peak_rps", p.peak_rps);
  io("utilisation", p.utilisation);
  io("headroom", p.headroom);
  io.nullable("mean_response_ns", p.mean_response_ns);
  io("band", p.band);
  io("verdict", p.verdict);
}

template <class Io>
void describe(Io& io, MuSource& m) {
  io("from", m.from);
  io.omittable("concurrency", m.concurrency);
  io.omittable("rate_rps", m.rate_rps);
  io.omittable("no_knee", m.no_knee);
}

template <class Io>
void describe(Io& io, Mm1Document& d) {
  io("mu_rps", d.mu_rps);
  io("mu_source", d.mu_source);
  io("rows", d.rows);
  io("peaks", d.peaks);
  io("source", d.source);
}

template <class Io>
void describe(Io& io, MmcDocument& d) {
  io("servers", d.servers);
  io("mu_rps", d.mu_rps);
  io("lambda_rps", d.lambda_rps);
  io("offered_load", d.offered_load);
  io("utilisation", d.utilisation);
  io("p_wait", d.p_wait);
  io("mean_wait_ns", d.mean_wait_ns);
  io("mean_response_ns", d.mean_response_ns);
  io("mean_queue_length", d.mean_queue_length);
  io("mean_in_system", d.mean_in_system);
  io("response_ns", d.response_ns);
  io("wait_ns", d.wait_ns);
  io.nullable("p_block", d.p_block);
  io("source", d.source);
}

template <class Io>
void describe(Io& io, UslPoint& p) {
  io("concurrency", p.concurrency);
  io("throughput_rps", p.throughput_rps);
  io("fitted_rps", p.fitted_rps);
}

template <class Io>
void describe(Io& io, KneedleResult& k) {
  io.omittable("error", k.error);
  if (k.error) return;  // a failed Kneedle has only its error
  io.omittable("label", k.label);
  io.nullable("concurrency", k.concurrency);
  io.nullable("index", k.index);
  io.omittable("x_scale", k.x_scale);
  io.omittable("summary", k.summary);
  io.omittable("source", k.source);
}

template <class Io>
void describe(Io& io, UslDocument& d) {
  io("from", d.from);
  io("formula", d.formula);
  io("sigma", d.sigma);
  io("kappa", d.kappa);
  io("lambda_rps", d.lambda_rps);
  io.nullable("r_squared", d.r_squared);
  io.nullable("peak_concurrency", d.peak_concurrency);
  io.nullable("peak_throughput_rps", d.peak_throughput_rps);
  io("held_at_zero", d.held_at_zero);
  io("flags", d.flags);
  io.nullable("sigma_se", d.sigma_se);
  io.nullable("kappa_se", d.kappa_se);
  io.nullable("lambda_se", d.lambda_se);
  io("points", d.points);
  io("kneedle", d.kneedle);
  io("source", d.source);
}

template <class Io>
void describe(Io& io, CompareSideFigures& s) {
  io("file", s.file);
  io("kind", s.kind);
  io("mode", s.mode);
  io("target", s.target);
  io("started_at", s.started_at);
  io("threads", s.threads);
  io("duration_s", s.duration_s);
  io("repeats", s.repeats);
  io.omittable("protocol", s.protocol);
  io.omittable("unit", s.unit);
}

template <class Io>
void describe(Io& io, FigureFigures& f) {
  io("a", f.a);
  io("b", f.b);
  io.nullable("ratio", f.ratio);
  io("difference", f.difference);
}

template <class Io>
void describe(Io& io, CompareLevelFigures& l) {
  io.omittable("concurrency", l.concurrency);
  io.omittable("rate_rps", l.rate_rps);
  io("a_repeats", l.a_repeats);
  io("b_repeats", l.b_repeats);
  io("figures", l.figures);
}

template <class Io>
void describe(Io& io, ComparisonDocument& d) {
  io("key", d.key);
  io("a", d.a);
  io("b", d.b);
  io("levels", d.levels);
  io("only_in_a", d.only_in_a);
  io("only_in_b", d.only_in_b);
  io.omit_empty("notes", d.notes);
}

template <class Io>
void describe(Io& io, LatencyReportDocument& d) {
  io.flatten(d.latency_ns);
}

// ---- kinds ----

namespace {

// The kind (and, for models, the model) each document is written with.
struct KindName {
  const char* kind;
  const char* model;  // nullptr unless kind is "model"
};

template <class T>
constexpr KindName kind_of();
template <>
constexpr KindName kind_of<RunDocument>() {
  return {"run", nullptr};
}
template <>
constexpr KindName kind_of<SweepDocument>() {
  return {"sweep", nullptr};
}
template <>
constexpr KindName kind_of<ScenariosDocument>() {
  return {"scenarios", nullptr};
}
template <>
constexpr KindName kind_of<CapacityDocument>() {
  return {"capacity", nullptr};
}
template <>
constexpr KindName kind_of<LadderDocument>() {
  return {"ladder", nullptr};
}
template <>
constexpr KindName kind_of<ProbeDocument>() {
  return {"probe", nullptr};
}
template <>
constexpr KindName kind_of<LittleDocument>() {
  return {"model", "little"};
}
template <>
constexpr KindName kind_of<Mm1Document>() {
  return {"model", "M/M/1"};
}
template <>
constexpr KindName kind_of<MmcDocument>() {
  return {"model", "M/M/c"};
}
template <>
constexpr KindName kind_of<UslDocument>() {
  return {"model", "USL"};
}
template <>
constexpr KindName kind_of<ComparisonDocument>() {
  return {"comparison", nullptr};
}
template <>
constexpr KindName kind_of<LatencyReportDocument>() {
  return {"latency", nullptr};
}
template <>
constexpr KindName kind_of<ExternalSweepDocument>() {
  return {"external_sweep", nullptr};
}

// Version 1 open-loop levels and runs: `concurrency` was the pool's cap and `sent` counted
// intended arrivals. Rewritten in place into version 2's fields.
void migrate_v1_run(json& r) {
  if (!r.is_object() || !r.contains("target_rate_rps")) return;
  if (r.contains("concurrency")) {
    r["max_connections"] = r["concurrency"];
    r.erase("concurrency");
  }
  if (!r.contains("scheduled")) r["scheduled"] = r.contains("sent") ? r["sent"] : json(0);
  if (!r.contains("never_sent")) r["never_sent"] = 0;
}

// Versions 1 and 2 knew only the warm-up's completed requests, no bytes, retransmits or pool
// waits, and one eof kind.
void migrate_v2_counts(json& r) {
  if (!r.is_object()) return;
  if (!r.contains("warmup")) {
    const json completed = r.contains("warmup_requests") ? r["warmup_requests"] : json(0);
    r["warmup"] = json{{"sent", completed}, {"completed", completed}, {"failed", 0},
                       {"aborted", 0},      {"carried_over", 0},      {"errors", json::object()}};
  }
  if (!r.contains("bytes")) {
    r["bytes"] = json{{"sent", 0},          {"received", 0},
                      {"received_body", 0}, {"received_headers", 0},
                      {"sent_per_s", 0.0},  {"received_per_s", 0.0}};
  }
  if (!r.contains("tcp_retransmits")) r["tcp_retransmits"] = 0;
  if (!r.contains("tcp_segments_out")) r["tcp_segments_out"] = 0;
  if (!r.contains("split_responses")) r["split_responses"] = 0;
  if (!r.contains("split_gap_mean_ns")) r["split_gap_mean_ns"] = 0.0;
  if (r.contains("target_rate_rps") && !r.contains("pool_full_share")) r["pool_full_share"] = 0.0;
  // The one eof kind split in two; which side each old count was on is unknown, so all of it
  // reads as eof_mid_body (docs/output.md says so), causes included.
  if (r.contains("errors") && r["errors"].is_object() && r["errors"].contains("eof_mid_response")) {
    r["errors"]["eof_mid_body"] = r["errors"]["eof_mid_response"];
    r["errors"]["eof_mid_headers"] = 0;
    r["errors"].erase("eof_mid_response");
  }
  if (r.contains("error_causes") && r["error_causes"].is_object()) {
    json causes = json::object();
    for (auto& [key, count] : r["error_causes"].items()) {
      const std::string old = "eof_mid_response";
      causes[key.rfind(old, 0) == 0 ? "eof_mid_body" + key.substr(old.size()) : key] = count;
    }
    r["error_causes"] = std::move(causes);
  }
}

void migrate_v1_level(json& l) {
  migrate_v1_run(l);
  if (!l.is_object() || !l.contains("runs") || !l["runs"].is_array()) return;
  for (json& r : l["runs"]) {
    if (l.contains("target_rate_rps") && r.is_object() && !r.contains("target_rate_rps")) {
      // v1 repeats carried no open-loop fields: give them the level's shape.
      for (const char* k :
           {"target_rate_rps", "achieved_rate_rps", "service_time_ns", "send_lag_ns", "late",
            "max_backlog", "mean_in_system", "scheduled", "never_sent"}) {
        if (l.contains(k)) r[k] = l[k];
      }
      if (r.contains("concurrency")) {
        r["max_connections"] = r["concurrency"];
        r.erase("concurrency");
      }
    } else {
      migrate_v1_run(r);
    }
  }
}

void migrate_v2_level(json& l) {
  migrate_v2_counts(l);
  if (l.is_object() && !l.contains("notes")) l["notes"] = json::array();
  if (l.is_object() && l.contains("runs") && l["runs"].is_array()) {
    for (json& r : l["runs"]) migrate_v2_counts(r);
  }
}

// Applies `migrate` to the run, or to every level of the sweep.
std::string kind_text(const json& j) {
  const auto k = j.find("kind");
  return k != j.end() && k->is_string() ? k->get<std::string>() : "";
}

// Applies `migrate` to the run, to every level of the sweep, or to every scenario's run.
template <class F>
void for_each_level(json& j, F migrate) {
  const std::string kind = kind_text(j);
  if (kind == "run") migrate(j);
  if (kind == "sweep" && j.contains("levels") && j["levels"].is_array()) {
    for (json& l : j["levels"]) migrate(l);
  }
  if (kind == "scenarios" && j.contains("scenarios") && j["scenarios"].is_object()) {
    for (auto& [name, run] : j["scenarios"].items()) {
      (void)name;
      migrate(run);
    }
  }
}

void migrate_v1(json& j) {
  for_each_level(j, migrate_v1_level);
  if (kind_text(j) == "sweep" && j.contains("knee") && j["knee"].is_object() &&
      j.contains("levels") && j["levels"].is_array() && !j["levels"].empty() &&
      j["levels"][0].is_object() && j["levels"][0].contains("target_rate_rps")) {
    j["knee"]["concurrency"] = nullptr;
  }
}

template <class T>
Result<Document> read_as(const json& j, const std::string& label) {
  T doc;
  std::string error;
  io::Reader reader(j, "", error);
  if (reader.ok()) describe(reader, doc);
  if (!error.empty()) {
    return Status::invalid_argument(fmt::format("{}: {}", label, error));
  }
  return Document(std::move(doc));
}

}  // namespace

json to_json(const Document& doc) {
  return std::visit(
      [](const auto& d) {
        using T = std::decay_t<decltype(d)>;
        json j = io::to_value(d);
        j["schema_version"] = kSchemaVersion;
        j["kind"] = kind_of<T>().kind;
        if (kind_of<T>().model != nullptr) j["model"] = kind_of<T>().model;
        if constexpr (std::is_same_v<T, ScenariosDocument>) {
          for (auto& [name, run] : j["scenarios"].items()) {
            (void)name;
            run["schema_version"] = kSchemaVersion;
            run["kind"] = "run";
          }
        }
        return j;
      },
      doc);
}

Result<Document> from_json(const json& in, const std::string& label) {
  if (!in.is_object()) {
    return Status::invalid_argument(fmt::format("{}: not a knee JSON result (an object)", label));
  }
  const auto version = in.find("schema_version");
  if (version == in.end() || !version->is_number_integer()) {
    return Status::invalid_argument(fmt::format(
        "{}: no schema_version: not a JSON result written by knee (knee run/sweep --json ...)",
        label));
  }
  const int v = version->get<int>();
  if (v < 1 || v > kSchemaVersion) {
    return Status::invalid_argument(fmt::format(
        "{}: schema_version {} is not one this knee reads (1 to {}); a newer knee wrote it", label,
        v, kSchemaVersion));
  }
  json j = in;
  const auto text_at = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (v == 1) migrate_v1(j);
  if (v <= 2) for_each_level(j, migrate_v2_level);
  if (v <= 2 && kind_text(j) == "model" && j.contains("servers") && !j.contains("wait_ns")) {
    j["wait_ns"] = json::object();  // M/M/c before version 3: no wait percentiles
  }
  const std::string kind = text_at("kind");
  const std::string model = text_at("model");
  if (kind == "run") return read_as<RunDocument>(j, label);
  if (kind == "sweep") return read_as<SweepDocument>(j, label);
  if (kind == "scenarios") return read_as<ScenariosDocument>(j, label);
  if (kind == "capacity") return read_as<CapacityDocument>(j, label);
  if (kind == "ladder") return read_as<LadderDocument>(j, label);
  if (kind == "probe") return read_as<ProbeDocument>(j, label);
  if (kind == "comparison") return read_as<ComparisonDocument>(j, label);
  if (kind == "latency") return read_as<LatencyReportDocument>(j, label);
  if (kind == "external_sweep") return read_as<ExternalSweepDocument>(j, label);
  if (kind == "model") {
    if (model == "little") return read_as<LittleDocument>(j, label);
    if (model == "M/M/1") return read_as<Mm1Document>(j, label);
    if (model == "M/M/c") return read_as<MmcDocument>(j, label);
    if (model == "USL") return read_as<UslDocument>(j, label);
    return Status::invalid_argument(fmt::format(
        "{}: model '{}' is not one knee writes (little, M/M/1, M/M/c, USL)", label, model));
  }
  return Status::invalid_argument(fmt::format(
      "{}: kind '{}' is not one knee writes (run, sweep, external_sweep, scenarios, capacity, "
      "ladder, probe, model, comparison, latency)",
      label, kind));
}

Result<Document> parse_document(std::string_view text, const std::string& label) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    // nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 2:
    // ..." or "[json.exception.out_of_range.406] number overflow parsing '1e400'": the part
    // after the bracket says where and why. Regression: a valid document with a number beyond
    // a double's range was called "not valid JSON", which sent the user looking for a typo.
    std::string why = e.what();
    if (const size_t close = why.find("] "); why.starts_with('[') && close != std::string::npos)
      why.erase(0, close + 2);
    if (e.id == 406) {
      return Status::invalid_argument(fmt::format(
          "{}: a number in it is beyond a double's range ({}); knee never writes one", label, why));
    }
    return Status::invalid_argument(fmt::format("{}: not valid JSON ({})", label, why));
  }
  return from_json(j, label);
}

std::string kind_words(const Document& doc) {
  struct Words {
    std::string operator()(const RunDocument& d) const {
      return d.level.mode == LoopMode::kOpen ? "an open-loop run" : "a closed-loop run";
    }
    std::string operator()(const SweepDocument& d) const {
      return d.mode() == LoopMode::kOpen ? "an open-loop sweep" : "a closed-loop sweep";
    }
    std::string operator()(const ScenariosDocument&) const { return "a run of several scenarios"; }
    std::string operator()(const CapacityDocument&) const { return "a capacity search"; }
    std::string operator()(const LadderDocument&) const { return "a latency ladder"; }
    std::string operator()(const ProbeDocument&) const { return "a probe of request phases"; }
    std::string operator()(const LittleDocument&) const { return "a Little's law calculation"; }
    std::string operator()(const Mm1Document&) const { return "an M/M/1 table"; }
    std::string operator()(const MmcDocument&) const { return "an M/M/c calculation"; }
    std::string operator()(const UslDocument&) const { return "a USL fit"; }
    std::string operator()(const ComparisonDocument&) const { return "a comparison"; }
    std::string operator()(const LatencyReportDocument&) const {
      return "a latency summary of HdrHistogram logs";
    }
    std::string operator()(const ExternalSweepDocument& d) const {
      return fmt::format("a sweep of an external benchmark ({})", d.adapter);
    }
  };
  return std::visit(Words{}, doc);
}

Status wrong_document(const std::string& label, const Document& doc, std::string_view command,
                      std::string_view needs) {
  return Status::invalid_argument(
      fmt::format("{} is {}; `{}` needs {}", label, kind_words(doc), command, needs));
}

}  // namespace knee::report
