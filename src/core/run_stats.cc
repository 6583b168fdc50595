#include "core/run_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace knee::core {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kConnect:
      return "connect";
    case ErrorKind::kClosedBeforeResponse:
      return "closed_before_response";
    case ErrorKind::kEofMidHeaders:
      return "eof_mid_headers";
    case ErrorKind::kEofMidBody:
      return "eof_mid_body";
    case ErrorKind::kRead:
      return "read";
    case ErrorKind::kWrite:
      return "write";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kParse:
      return "parse";
    case ErrorKind::kStatus:
      return "status";
    case ErrorKind::kTls:
      return "tls";
    case ErrorKind::kStreamReset:
      return "stream_reset";
    case ErrorKind::kCount:
      break;
  }
  return "unknown";
}

void RunStats::add_cause(std::string key, uint64_t count) {
  auto it = causes.find(key);
  if (it == causes.end() && causes.size() >= kMaxCauses) {
    key = key.substr(0, key.find(':')) + ": other causes";
    it = causes.find(key);
  }
  if (it == causes.end()) {
    causes.emplace(std::move(key), count);
  } else {
    it->second += count;
  }
}

void RunStats::count_error(ErrorKind kind, std::string_view cause) {
  ++errors[static_cast<size_t>(kind)];
  std::string key(error_kind_name(kind));
  if (!cause.empty()) {
    key += ": ";
    key += cause;
  }
  add_cause(std::move(key), 1);
}

uint64_t request_failures(const ErrorCounts& errors) {
  uint64_t n = 0;
  for (size_t i = 0; i < errors.size(); ++i) {
    auto kind = static_cast<ErrorKind>(i);
    if (kind != ErrorKind::kConnect && kind != ErrorKind::kTls && kind != ErrorKind::kStatus) {
      n += errors[i];
    }
  }
  return n;
}

void WarmupStats::merge(const WarmupStats& o) {
  scheduled += o.scheduled;
  sent += o.sent;
  never_sent += o.never_sent;
  completed += o.completed;
  aborted += o.aborted;
  carried_over += o.carried_over;
  for (size_t i = 0; i < errors.size(); ++i) errors[i] += o.errors[i];
}

void ConnectStats::merge(const ConnectStats& o) {
  opened += o.opened;
  tcp_ns.merge(o.tcp_ns);
  tls_ns.merge(o.tls_ns);
  tls_full += o.tls_full;
  tls_resumed += o.tls_resumed;
  if (tls_version.empty()) {
    tls_version = o.tls_version;
    tls_cipher = o.tls_cipher;
    alpn = o.alpn;
  }
  h2_goaways += o.h2_goaways;
  h2_resent += o.h2_resent;
  if (h2_goaway_error.empty() || (h2_goaway_error == "NO_ERROR" && !o.h2_goaway_error.empty())) {
    h2_goaway_error = o.h2_goaway_error;
  }
  if (o.h2_server_max_streams != 0) {
    h2_server_max_streams = h2_server_max_streams == 0
                                ? o.h2_server_max_streams
                                : std::min(h2_server_max_streams, o.h2_server_max_streams);
  }
}

uint64_t RunStats::total_errors() const {
  uint64_t n = 0;
  for (uint64_t e : errors) n += e;
  return n;
}

void EndpointStats::merge(const EndpointStats& o) {
  sent += o.sent;
  completed += o.completed;
  aborted += o.aborted;
  ok_completed_in_phase += o.ok_completed_in_phase;
  for (size_t i = 0; i < errors.size(); ++i) errors[i] += o.errors[i];
  for (const auto& [code, n] : o.status) status[code] += n;
  latency_ns.merge(o.latency_ns);
}

void RunStats::merge(const RunStats& other) {
  if (endpoints.size() < other.endpoints.size()) endpoints.resize(other.endpoints.size());
  for (size_t i = 0; i < other.endpoints.size(); ++i) endpoints[i].merge(other.endpoints[i]);
  connects.merge(other.connects);
  latency_ns.merge(other.latency_ns);
  service_time_ns.merge(other.service_time_ns);
  send_lag_ns.merge(other.send_lag_ns);
  loop_lag_ns.merge(other.loop_lag_ns);
  max_thread_cpu_share = std::max(max_thread_cpu_share, other.max_thread_cpu_share);
  max_thread_cpu_demand = std::max(max_thread_cpu_demand, other.max_thread_cpu_demand);
  max_thread_cpu_demand_1s = std::max(max_thread_cpu_demand_1s, other.max_thread_cpu_demand_1s);
  sent_in_phase += other.sent_in_phase;
  ok_completed_in_phase += other.ok_completed_in_phase;
  late += other.late;
  late_with_connection_free += other.late_with_connection_free;
  max_backlog += other.max_backlog;  // per-worker maxima add up: an upper bound of the total
  pool_full_ns += other.pool_full_ns;
  max_pool_full_share_1s = std::max(max_pool_full_share_1s, other.max_pool_full_share_1s);
  split_responses += other.split_responses;
  split_gap_ns += other.split_gap_ns;
  tcp_retransmits += other.tcp_retransmits;
  tcp_segments_out += other.tcp_segments_out;
  unsolicited_bytes += other.unsolicited_bytes;
  unsolicited_closes += other.unsolicited_closes;
  last_ok_ns = std::max(last_ok_ns, other.last_ok_ns);
  connect_failures_after_ok += other.connect_failures_after_ok;
  in_system_ns += other.in_system_ns;
  scheduled += other.scheduled;
  sent += other.sent;
  never_sent += other.never_sent;
  completed += other.completed;
  aborted += other.aborted;
  reconnects += other.reconnects;
  warmup.merge(other.warmup);
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  bytes_received_body += other.bytes_received_body;
  for (size_t i = 0; i < errors.size(); ++i) errors[i] += other.errors[i];
  for (size_t i = 0; i < status.size(); ++i) status[i] += other.status[i];
  for (const auto& [k, v] : other.causes) add_cause(k, v);
  client_cpu_ns += other.client_cpu_ns;
  client_spin_ns += other.client_spin_ns;
  client_wall_ns = std::max(client_wall_ns, other.client_wall_ns);
}

RunResult merge_parts(const std::vector<RunResult>& parts) {
  assert(!parts.empty());
  if (parts.size() == 1) return parts.front();
  double start = parts.front().measure_start_epoch_s;
  for (const RunResult& p : parts) start = std::min(start, p.measure_start_epoch_s);
  // last_ok_ns counts from each part's own start: from the merged phase's start instead.
  auto shifted = [&](const RunResult& p) {
    RunStats s = p.stats;
    if (s.last_ok_ns >= 0) {
      s.last_ok_ns += static_cast<int64_t>(std::llround((p.measure_start_epoch_s - start) * 1e9));
    }
    return s;
  };
  RunResult merged = parts.front();
  merged.stats = shifted(parts.front());
  double end = parts.front().measure_start_epoch_s + parts.front().duration_s;
  for (size_t i = 1; i < parts.size(); ++i) {
    const RunResult& p = parts[i];
    merged.stats.merge(shifted(p));
    merged.target_rate_rps += p.target_rate_rps;
    merged.connections += p.connections;
    merged.threads += p.threads;
    merged.requests_asked += p.requests_asked;
    merged.interrupted = merged.interrupted || p.interrupted;
    end = std::max(end, p.measure_start_epoch_s + p.duration_s);
  }
  merged.measure_start_epoch_s = start;
  merged.duration_s = end - start;
  merged.intervals.clear();
  for (const RunResult& p : parts) {
    for (const LatencyInterval& in : p.intervals) {
      const double offset = p.measure_start_epoch_s - start + in.start_s;
      const auto index = static_cast<size_t>(std::max(0.0, std::round(offset)));
      if (merged.intervals.size() <= index) {
        const size_t from = merged.intervals.size();
        merged.intervals.resize(index + 1);
        for (size_t k = from; k <= index; ++k) merged.intervals[k].start_s = static_cast<double>(k);
      }
      LatencyInterval& m = merged.intervals[index];
      m.length_s = std::max(m.length_s, in.length_s);
      m.count += in.count;
      m.errors += in.errors;
      m.target_rps += in.target_rps;
      m.p50_ns = std::max(m.p50_ns, in.p50_ns);
      m.p99_ns = std::max(m.p99_ns, in.p99_ns);
      m.max_ns = std::max(m.max_ns, in.max_ns);
    }
  }
  return merged;
}

}  // namespace knee::core
