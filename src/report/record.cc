#include "report/record.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "report/hlog.h"
#include "report/json_io.h"

// The field lists of core's structs live in namespace knee::core, where json_io's unqualified
// calls find them by argument-dependent lookup.
namespace knee::core {

using nlohmann::json;

json to_json_value(const Histogram& h) {
  return json{{"hdr", report::base64_encode(report::encode_compressed_v2(h))},
              {"min", h.min()},
              {"max", h.max()},
              {"clamped", h.clamped_count()}};
}

bool from_json_value(const json& j, Histogram& h) {
  if (!j.is_object()) return false;
  const auto hdr = j.find("hdr");
  const auto min = j.find("min");
  const auto max = j.find("max");
  const auto clamped = j.find("clamped");
  if (hdr == j.end() || !hdr->is_string() || min == j.end() || !min->is_number_integer() ||
      max == j.end() || !max->is_number_integer() || clamped == j.end() ||
      !clamped->is_number_integer()) {
    return false;
  }
  auto bytes = report::base64_decode(hdr->get_ref<const std::string&>());
  if (!bytes) return false;
  auto decoded = report::decode(*bytes);
  if (!decoded) return false;
  if (!decoded->restore_extremes(min->get<int64_t>(), max->get<int64_t>(),
                                 clamped->get<int64_t>())) {
    return false;
  }
  h = std::move(*decoded);
  return true;
}

namespace {

// A list of figures where NaN means unknown, written with nulls.
template <class Io>
void nan_list(Io& io, const char* key, std::vector<double>& v) {
  std::vector<std::optional<double>> out;
  if constexpr (!Io::kReading) {
    for (double d : v) out.push_back(std::isnan(d) ? std::nullopt : std::optional<double>(d));
  }
  io(key, out);
  if constexpr (Io::kReading) {
    v.clear();
    for (const auto& d : out) v.push_back(d.value_or(kUnknown));
  }
}

// Counts by error kind, as an object keyed by error_kind_name (zeros left out).
template <class Io>
void error_counts(Io& io, const char* key, ErrorCounts& e) {
  std::map<std::string, uint64_t> out;
  if constexpr (!Io::kReading) {
    for (size_t i = 0; i < e.size(); ++i) {
      if (e[i] != 0) out[std::string(error_kind_name(static_cast<ErrorKind>(i)))] = e[i];
    }
  }
  io(key, out);
  if constexpr (Io::kReading) {
    e = {};
    for (size_t i = 0; i < e.size(); ++i) {
      auto it = out.find(std::string(error_kind_name(static_cast<ErrorKind>(i))));
      if (it != out.end()) e[i] = it->second;
    }
  }
}

}  // namespace

template <class Io>
void describe(Io& io, WarmupStats& w) {
  io("scheduled", w.scheduled);
  io("sent", w.sent);
  io("never_sent", w.never_sent);
  io("completed", w.completed);
  io("aborted", w.aborted);
  io("carried_over", w.carried_over);
  error_counts(io, "errors", w.errors);
}

template <class Io>
void describe(Io& io, ConnectStats& c) {
  io("opened", c.opened);
  io("tcp_ns", c.tcp_ns);
  io("tls_ns", c.tls_ns);
  io("tls_full", c.tls_full);
  io("tls_resumed", c.tls_resumed);
  io("tls_version", c.tls_version);
  io("tls_cipher", c.tls_cipher);
  io("alpn", c.alpn);
  io("h2_goaways", c.h2_goaways);
  io("h2_resent", c.h2_resent);
  io("h2_goaway_error", c.h2_goaway_error);
  io("h2_server_max_streams", c.h2_server_max_streams);
}

// A counter (or share) added after records were first written: left out when 0, and 0 when
// missing, so a record from before it reads as it did.
template <class Io, class T>
void later_counter(Io& io, const char* key, T& value) {
  std::optional<T> v;
  if constexpr (!Io::kReading) {
    if (value != 0) v = value;
  }
  io.omittable(key, v);
  if constexpr (Io::kReading) value = v.value_or(0);
}

// A figure added after records were first written, NaN when unknown: left out when unknown, and
// unknown when missing.
template <class Io>
void later_nan(Io& io, const char* key, double& value) {
  std::optional<double> v;
  if constexpr (!Io::kReading) {
    if (core::is_known(value)) v = value;
  }
  io.omittable(key, v);
  if constexpr (Io::kReading) value = v.value_or(core::kUnknown);
}

template <class Io>
void describe(Io& io, EndpointStats& e) {
  io("name", e.name);
  io("share", e.share);
  io("sent", e.sent);
  io("completed", e.completed);
  io("aborted", e.aborted);
  io("ok_completed_in_phase", e.ok_completed_in_phase);
  error_counts(io, "errors", e.errors);
  std::map<std::string, uint64_t> status;
  if constexpr (!Io::kReading) {
    for (const auto& [code, n] : e.status) status[std::to_string(code)] = n;
  }
  io("status", status);
  if constexpr (Io::kReading) {
    e.status.clear();
    for (const auto& [code, n] : status) e.status[std::atoi(code.c_str())] = n;
  }
  io("latency_ns", e.latency_ns);
}

template <class Io>
void describe(Io& io, RunStats& s) {
  io("latency_ns", s.latency_ns);
  io("service_time_ns", s.service_time_ns);
  io("send_lag_ns", s.send_lag_ns);
  io("loop_lag_ns", s.loop_lag_ns);
  io("scheduled", s.scheduled);
  io("sent", s.sent);
  io("never_sent", s.never_sent);
  io("completed", s.completed);
  io("aborted", s.aborted);
  io("reconnects", s.reconnects);
  io("warmup", s.warmup);
  io("connects", s.connects);
  io("bytes_sent", s.bytes_sent);
  io("bytes_received", s.bytes_received);
  io("bytes_received_body", s.bytes_received_body);
  error_counts(io, "errors", s.errors);
  std::map<std::string, uint64_t> status;
  if constexpr (!Io::kReading) {
    for (size_t code = 0; code < s.status.size(); ++code) {
      if (s.status[code] != 0) status[std::to_string(code)] = s.status[code];
    }
  }
  io("status", status);
  if constexpr (Io::kReading) {
    s.status = {};
    for (const auto& [code, n] : status) {
      const int c = std::atoi(code.c_str());
      if (c >= 0 && c < RunStats::kMaxStatus) s.status[static_cast<size_t>(c)] = n;
    }
  }
  io("causes", s.causes);
  io("client_cpu_ns", s.client_cpu_ns);
  io("client_wall_ns", s.client_wall_ns);
  io("client_spin_ns", s.client_spin_ns);
  io("max_thread_cpu_share", s.max_thread_cpu_share);
  io("max_thread_cpu_demand", s.max_thread_cpu_demand);
  later_counter(io, "max_thread_cpu_demand_1s", s.max_thread_cpu_demand_1s);
  io("sent_in_phase", s.sent_in_phase);
  io("ok_completed_in_phase", s.ok_completed_in_phase);
  io("late", s.late);
  // Regression: left out of the record, so a merged result (knee report merge, mpirun) lost the
  // client's own late sends and with them the client clause of the saturation rule.
  later_counter(io, "late_with_connection_free", s.late_with_connection_free);
  io("max_backlog", s.max_backlog);
  io("pool_full_ns", s.pool_full_ns);
  later_counter(io, "max_pool_full_share_1s", s.max_pool_full_share_1s);
  io("split_responses", s.split_responses);
  io("split_gap_ns", s.split_gap_ns);
  io("tcp_retransmits", s.tcp_retransmits);
  io("tcp_segments_out", s.tcp_segments_out);
  later_counter(io, "unsolicited_bytes", s.unsolicited_bytes);
  later_counter(io, "unsolicited_closes", s.unsolicited_closes);
  io("last_ok_ns", s.last_ok_ns);
  io("connect_failures_after_ok", s.connect_failures_after_ok);
  io("in_system_ns", s.in_system_ns);
  io.omit_empty("endpoints", s.endpoints);
}

template <class Io>
void describe(Io& io, ProcessUse& p) {
  io("pid", p.pid);
  io("name", p.name);
  io.maybe_nan("cpu_pct", p.cpu_pct);
  io.maybe_nan("cpu_max_pct", p.cpu_max_pct);
  io.maybe_nan("busiest_thread_cpu_pct", p.busiest_thread_cpu_pct);
  later_nan(io, "busiest_thread_cpu_max_pct", p.busiest_thread_cpu_max_pct);
  io("threads", p.threads);
  io("cpus_allowed", p.cpus_allowed);
  io.maybe_nan("rss_bytes", p.rss_bytes);
  io.maybe_nan("rss_max_bytes", p.rss_max_bytes);
  io.maybe_nan("requests", p.requests);
}

template <class Io>
void describe(Io& io, DiskUse& d) {
  io("device", d.device);
  io.maybe_nan("reads_per_s", d.reads_per_s);
  io.maybe_nan("writes_per_s", d.writes_per_s);
  io.maybe_nan("read_merges_per_s", d.read_merges_per_s);
  io.maybe_nan("write_merges_per_s", d.write_merges_per_s);
  io.maybe_nan("read_kb_per_s", d.read_kb_per_s);
  io.maybe_nan("write_kb_per_s", d.write_kb_per_s);
  io.maybe_nan("read_await_ms", d.read_await_ms);
  io.maybe_nan("write_await_ms", d.write_await_ms);
  io.maybe_nan("queue_size", d.queue_size);
  io.maybe_nan("util_pct", d.util_pct);
  io.maybe_nan("util_max_pct", d.util_max_pct);
}

template <class Io>
void describe(Io& io, NetUse& n) {
  io("interface", n.interface);
  io.maybe_nan("rx_bytes_per_s", n.rx_bytes_per_s);
  io.maybe_nan("tx_bytes_per_s", n.tx_bytes_per_s);
  io.maybe_nan("speed_mbit", n.speed_mbit);
  io.maybe_nan("util_pct", n.util_pct);
  io.maybe_nan("util_max_pct", n.util_max_pct);
  io.maybe_nan("drops_per_s", n.drops_per_s);
}

template <class Io>
void describe(Io& io, ResourceUse& u) {
  io("window_s", u.window_s);
  io("intervals", u.intervals);
  nan_list(io, "cpu_busy_pct", u.cpu_busy_pct);
  nan_list(io, "cpu_busy_max_pct", u.cpu_busy_max_pct);
  io.maybe_nan("cpu_busy_all_pct", u.cpu_busy_all_pct);
  io.maybe_nan("cpu_pressure_some_pct", u.cpu_pressure_some_pct);
  io.omittable("server", u.server);
  io.omit_empty("backends", u.backends);
  io.omit_empty("disks", u.disks);
  io.maybe_nan("io_pressure_some_pct", u.io_pressure_some_pct);
  io.omit_empty("nets", u.nets);
  io.maybe_nan("tcp_retrans_per_s", u.tcp_retrans_per_s);
  io.maybe_nan("listen_overflows_per_s", u.listen_overflows_per_s);
  io.maybe_nan("listen_drops_per_s", u.listen_drops_per_s);
  io.maybe_nan("mem_available_bytes", u.mem_available_bytes);
  io.maybe_nan("mem_available_min_bytes", u.mem_available_min_bytes);
  io.maybe_nan("memory_pressure_some_pct", u.memory_pressure_some_pct);
}

template <class Io>
void describe(Io& io, LatencyInterval& in) {
  io("start_s", in.start_s);
  io("length_s", in.length_s);
  io("count", in.count);
  io("p50_ns", in.p50_ns);
  io("p99_ns", in.p99_ns);
  io("max_ns", in.max_ns);
  io("target_rps", in.target_rps);
  io("errors", in.errors);
}

template <class Io>
void describe(Io& io, RunResult& r) {
  io("stats", r.stats);
  io("target_rate_rps", r.target_rate_rps);
  io("connections", r.connections);
  io("per_connection", r.per_connection);
  io("h2", r.h2);
  io("threads", r.threads);
  io("duration_s", r.duration_s);
  io("interrupted", r.interrupted);
  io("requests_asked", r.requests_asked);
  io.omittable("use", r.use);
  io("measure_start_epoch_s", r.measure_start_epoch_s);
  io.omit_empty("intervals", r.intervals);
}

}  // namespace knee::core

namespace knee::report {

using nlohmann::json;

namespace {

template <class Io>
void describe_record(Io& io, RunRecord& r) {
  io("host", r.host);
  io("part", r.part);
  io("parts", r.parts);
  io("result", r.result);
}

}  // namespace

bool RunRecord::operator==(const RunRecord& o) const {
  return to_json_value(*this) == to_json_value(o);
}

json to_json_value(const RunRecord& r) {
  json j = json::object();
  io::Writer w(j);
  describe_record(w, const_cast<RunRecord&>(r));  // the writer only reads
  return j;
}

bool from_json_value(const json& j, RunRecord& r) {
  std::string error;
  io::Reader reader(j, "", error);
  if (reader.ok()) describe_record(reader, r);
  return error.empty() && r.parts >= 1 && r.part >= 0 && r.part < r.parts;
}

std::string encode_record(const RunRecord& r) { return to_json_value(r).dump(); }

core::Result<RunRecord> decode_record(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return core::Status::parse_error("a run record is not valid JSON");
  std::string error;
  RunRecord r;
  io::Reader reader(j, "record", error);
  if (reader.ok()) describe_record(reader, r);
  if (!error.empty()) return core::Status::parse_error(error);
  if (r.parts < 1 || r.part < 0 || r.part >= r.parts) {
    return core::Status::parse_error(
        fmt::format("record: part {} of {} is not a part of a whole", r.part, r.parts));
  }
  return r;
}

}  // namespace knee::report
