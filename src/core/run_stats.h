// RunStats: what one load run (or one worker of it) observed in its measured phase: the latency
// distribution of successful responses, responses by status code, failures by kind and cause,
// and the client's own CPU time. Each worker owns one and the run folds them with merge()
// (wrk2's per-thread histograms folded with hdr_add; LevelDB's Stats::Merge).
//
// Accounting invariants (checked by tests), for the measured phase and, separately, for warm-up:
//   open loop:  scheduled == sent + never_sent
//   both loops: sent == completed + request_failures() + aborted
// scheduled: requests whose intended send time fell in the phase (open loop only); sent: those
// whose write to a socket began; never_sent: scheduled but still waiting for a connection when
// the grace period ended; completed: a full response arrived (any status); failed: a request
// failure kind below; aborted: written but unfinished when the grace period ended.
// A request belongs to the measured phase by its send time in closed loop and by its intended
// send time in open loop.
// Connect failures are counted in errors but are not requests: no request was sent.
//
// Thread-safety: none; one owner, merged after the run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/histogram.h"
#include "core/resource_use.h"

namespace knee::core {

// Why a request (or a connection attempt) failed; the names are the JSON keys of `errors`.
enum class ErrorKind : uint8_t {
  kConnect,               // connect failed (refused, reset, unreachable): no request was sent
  kClosedBeforeResponse,  // peer closed or reset the connection before any response byte
  kEofMidHeaders,         // peer closed the connection inside the status line or header fields
  kEofMidBody,            // peer closed it inside the body (cause: bytes received of announced)
  kRead,                  // read() failed after part of a response arrived
  kWrite,                 // write() of the request failed
  kTimeout,               // no complete response within the request timeout
  kParse,                 // the response did not follow HTTP/1.1 framing
  kStatus,                // a complete response with status >= 400
  kTls,                   // the TLS handshake failed (cause: the reason): no request was sent
  kStreamReset,           // HTTP/2: the server reset or refused the stream (cause: the error code)
  kCount,
};

// "connect", "closed_before_response", "eof_mid_headers", "eof_mid_body", "read", "write",
// "timeout", "parse", "status", "tls", "stream_reset".
std::string_view error_kind_name(ErrorKind kind);

using ErrorCounts = std::array<uint64_t, static_cast<size_t>(ErrorKind::kCount)>;

// Failures that consumed a sent request: every kind except kConnect, kTls (no request was sent)
// and kStatus (a status error is a completed response).
uint64_t request_failures(const ErrorCounts& errors);

// The warm-up's own accounting: its requests are left out of every figure, but none vanishes.
// Same invariants as the measured phase: open loop scheduled == sent + never_sent; both loops
// sent == completed + request_failures(errors) + aborted. carried_over: warm-up requests still
// in flight (or waiting for a connection) when the measured phase began; they ended later, in
// any of the ways above, and occupied connections the measured phase could not use.
struct WarmupStats {
  uint64_t scheduled = 0;
  uint64_t sent = 0;
  uint64_t never_sent = 0;
  uint64_t completed = 0;
  uint64_t aborted = 0;
  uint64_t carried_over = 0;
  ErrorCounts errors{};

  uint64_t failed() const { return request_failures(errors); }
  void merge(const WarmupStats& o);
};

// The connections a run opened, warm-up included (with keep-alive nearly every connect falls
// in the warm-up), kept apart from request latency: how long TCP took to connect and TLS to
// shake hands, and how many handshakes resumed a session. A closed connection's next connect
// is one more. Durations in ns, 1 us .. 1 h, 3 significant digits.
struct ConnectStats {
  ConnectStats() : tcp_ns(Histogram::for_latency()), tls_ns(Histogram::for_latency()) {}
  uint64_t opened = 0;       // connects that reached the state where requests can be sent
  Histogram tcp_ns;          // connect() started to the TCP connection established
  Histogram tls_ns;          // TCP established to the TLS handshake done (TLS only)
  uint64_t tls_full = 0;     // full handshakes
  uint64_t tls_resumed = 0;  // abbreviated handshakes that resumed a session
  // What the first handshake agreed on ("TLSv1.3", "TLS_AES_256_GCM_SHA384", ALPN's choice or
  // ""); empty without TLS.
  std::string tls_version, tls_cipher, alpn;
  // HTTP/2: GOAWAY frames received, the error code of the last one that named an error
  // ("NO_ERROR" when none did), and the lowest SETTINGS_MAX_CONCURRENT_STREAMS a server
  // advertised (0: none, or not HTTP/2).
  uint64_t h2_goaways = 0;
  // Requests a GOAWAY refused (above its last stream id: not processed) and sent again on the
  // next connection, their latency running from the first intended send.
  uint64_t h2_resent = 0;
  std::string h2_goaway_error;
  uint32_t h2_server_max_streams = 0;

  void merge(const ConnectStats& o);
};

// One endpoint of a request mix (engine/mix.h): the measured requests that went to it and how
// they ended, the same books as RunStats keeps for the whole run (sent == completed +
// request_failures(errors) + aborted), and the latency of its successful responses, ns.
struct EndpointStats {
  EndpointStats() : latency_ns(Histogram::for_latency()) {}
  std::string name;  // "METHOD /target" (engine::MixEndpoint::name)
  double share = 0;  // its weight over the mix's sum, 0..1
  uint64_t sent = 0;
  uint64_t completed = 0;  // any status
  uint64_t aborted = 0;
  uint64_t ok_completed_in_phase = 0;  // open loop's throughput, as RunStats's
  ErrorCounts errors{};
  std::map<int, uint64_t> status;  // responses by status code
  Histogram latency_ns;

  uint64_t ok() const { return completed - errors[static_cast<size_t>(ErrorKind::kStatus)]; }
  void merge(const EndpointStats& o);
};

struct RunStats {
  static constexpr int kMaxStatus = 600;

  RunStats()
      : latency_ns(Histogram::for_latency()),
        service_time_ns(Histogram::for_latency()),
        send_lag_ns(Histogram::for_latency()),
        loop_lag_ns(Histogram::for_latency()) {}

  // Latency of successful responses (status < 400), ns, 1 us .. 1 h, 3 significant digits.
  // Closed loop: from the actual send. Open loop: from the intended send time, so waiting for a
  // connection or for a late client counts (no coordinated omission).
  Histogram latency_ns;
  // Service time from the actual send to the response, and send lag = actual send - intended
  // send, ns. Recorded in both loops; in closed loop they are the latency and 0, so only the
  // open loop reports them.
  Histogram service_time_ns;
  Histogram send_lag_ns;
  // How late the worker's event loop woke after the deadline it asked for, ns (both modes).
  Histogram loop_lag_ns;
  uint64_t scheduled = 0;   // open loop: intended send times in the measured phase
  uint64_t sent = 0;        // measured requests whose write to a socket began
  uint64_t never_sent = 0;  // open loop: scheduled, still waiting for a connection at the end
  uint64_t completed = 0;   // full responses received for sent requests, any status
  uint64_t aborted = 0;     // sent, still unfinished when the grace period ended
  uint64_t reconnects = 0;  // new connections opened after the first one per slot
  WarmupStats warmup;       // the warm-up's requests, discarded from every other figure
  ConnectStats connects;    // every connection opened, warm-up included
  // Bytes of the measured requests: written (request lines, fields, bodies), and received
  // (everything read for them; of that, the decoded body payload; the rest is status lines,
  // header fields, interim responses, chunk framing and trailers).
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t bytes_received_body = 0;
  ErrorCounts errors{};
  std::array<uint64_t, kMaxStatus> status{};  // responses per status code (100..599)
  // Failure causes by "<kind>: <errno name or reason>", e.g. "connect: ECONNREFUSED". At most
  // kMaxCauses distinct keys: past them a new cause counts under "<kind>: other causes", so a
  // server that fails in ever new ways ("received 3 of 100 bytes", "received 4 of 100 bytes",
  // ...) cannot make memory grow with run length.
  static constexpr size_t kMaxCauses = 64;
  std::map<std::string, uint64_t> causes;
  int64_t client_cpu_ns = 0;   // CPU time of the worker threads (thread CPU clocks), summed
  int64_t client_wall_ns = 0;  // wall time the workers ran, warm-up and grace included (max)
  // Wall time the worker threads busy-polled before intended sends (open loop, --spin), summed:
  // CPU spent waiting on purpose, part of client_cpu_ns, left out of the two shares below.
  int64_t client_spin_ns = 0;
  // The busiest worker thread's CPU time, less its spin time, over its wall time, 0..1 (max over
  // workers).
  double max_thread_cpu_share = 0;
  // The busiest worker thread's CPU time plus its time waiting for a CPU (run queue), over its
  // wall time, 0..1 (max over workers): how much of a core it asked for. At 0.9 or more the
  // client, not the server, set the pace (it was busy, or another process held its CPU).
  double max_thread_cpu_demand = 0;
  // The same demand over the busiest second of the measured phase, 0..1 (max over windows and
  // workers): with per-second intervals (always with --stages) each worker measures it over
  // windows that end at the interval boundaries and at the phase's end, those of 0.5 s or more
  // (the first and last may be shorter than 1 s); 0 without intervals or with no such window.
  // The phase's mean dilutes a stretch of overload (--stages ramping past what one thread can
  // send); this does not.
  double max_thread_cpu_demand_1s = 0;
  // Measured requests sent before the measured phase ended (open loop: the achieved rate), those
  // sent more than 1 ms after their intended time, and the largest number of requests due but
  // waiting for a connection (open loop).
  uint64_t sent_in_phase = 0;
  // Successful responses that completed inside the measured phase, whenever they were sent: the
  // open loop's throughput (an overloaded server completes fewer than were offered).
  uint64_t ok_completed_in_phase = 0;
  uint64_t late = 0;
  // Open loop: of the late sends, those more than 1 ms late counted from when a connection was
  // idle for them (their intended time, or when some connection of the worker had been idle
  // since, if that was later): the client's own lateness, without the wait for the server's
  // responses and connects.
  uint64_t late_with_connection_free = 0;
  uint64_t max_backlog = 0;
  // Open loop: time during the measured phase in which every connection of the worker's pool
  // was busy or connecting (the pool was exhausted: arrivals had to wait for the server), ns,
  // summed over workers; over threads * duration it is the share of time it was exhausted.
  int64_t pool_full_ns = 0;
  // The same exhaustion over the busiest second, 0..1 (max over windows and workers): measured
  // over the windows of max_thread_cpu_demand_1s (with per-second intervals, always with
  // --stages), 0 without them. A ramp's overloaded last stage fills the pool while its quiet
  // stages average the phase's share below the pool rule's half; this does not.
  double max_pool_full_share_1s = 0;
  // Measured responses that arrived in parts with 30..220 ms of silence before their last part
  // (the Nagle / delayed-ACK interaction of RFC 896 and RFC 1122 4.2.3.2: a server's second
  // small write waits for the ACK of its first, which the client delays), and those gaps summed,
  // ns. docs/methodology.md says what knee does about it.
  uint64_t split_responses = 0;
  int64_t split_gap_ns = 0;
  // Segments knee's own connections retransmitted and sent from their first measured request
  // to their close (TCP_INFO deltas, net::tcp_counters): this run's traffic, not the host's,
  // and not the warm-up's.
  uint64_t tcp_retransmits = 0;
  uint64_t tcp_segments_out = 0;
  // HTTP/1.1: bytes that arrived on a connection with no request awaiting them (after a complete
  // response: a body longer than its Content-Length, or a response to no request), and the
  // connections closed for them, since their framing could no longer be trusted. Counted in the
  // measured phase; the bytes are in bytes_received too.
  uint64_t unsolicited_bytes = 0;
  uint64_t unsolicited_closes = 0;
  // The target's last sign of life in the measured phase: the latest successful connect or
  // response, in ns from the phase's start (-1: none), and the connect failures after it (per
  // worker, summed). Connect failures to the end mean the target went away.
  int64_t last_ok_ns = -1;
  uint64_t connect_failures_after_ok = 0;
  // Integral over the measured phase of the requests in the system (waiting or in flight), in
  // request-ns: divided by the phase's length it is the mean number in the system (Little's L).
  double in_system_ns = 0;
  // With a request mix: the figures of each endpoint, in the mix's order (their sums are the
  // run's own sent, completed, aborted and errors); empty otherwise.
  std::vector<EndpointStats> endpoints;

  void count_error(ErrorKind kind, std::string_view cause);
  // Adds `count` under cause `key` ("<kind>: <cause>"), or under "<kind>: other causes" once
  // kMaxCauses keys exist (those "other causes" keys may go a few past the limit, one per kind).
  void add_cause(std::string key, uint64_t count);
  void count_status(int code) {
    if (code >= 0 && code < kMaxStatus) ++status[static_cast<size_t>(code)];
  }
  uint64_t error_count(ErrorKind kind) const { return errors[static_cast<size_t>(kind)]; }
  // Failures that consumed a sent request (core::request_failures of errors).
  uint64_t request_failures() const { return core::request_failures(errors); }
  uint64_t total_errors() const;
  // Successful responses: completed minus those with status >= 400.
  uint64_t ok() const { return completed - error_count(ErrorKind::kStatus); }

  // Adds everything `other` observed, as if one worker had seen both.
  void merge(const RunStats& other);
};

// The successful responses completed in one interval of the measured phase, summarised for the
// per-second figures of the JSON and HTML reports. start_s: seconds from the measured phase's
// start. 64 bytes, so a one-hour run keeps 230 KB of them; each interval's full histogram goes
// out as the interval completes (engine::RunControl::on_interval, for HdrHistogram logs) and
// is not kept, so memory stays flat with run length.
struct LatencyInterval {
  double start_s = 0;
  double length_s = 0;
  int64_t count = 0;  // successful responses
  int64_t p50_ns = 0, p99_ns = 0, max_ns = 0;
  double target_rps = 0;  // open loop with --stages: the rate the stages intended in it
  int64_t errors = 0;     // errors of every kind counted in it (RunStats::total_errors)
};

// What one load run measured: its statistics and the load that produced them. Rates are over
// the measured phase.
struct RunResult {
  RunStats stats;
  double target_rate_rps = 0;  // open loop: the arrival rate asked for; 0 in closed loop
  // Closed loop: N, the connections kept busy (the concurrency). Open loop: the pool's cap, the
  // most connections it could open.
  int connections = 0;
  // Requests in flight per connection (HTTP/2 streams, HTTP/1.1 pipelining depth), >= 1.
  int per_connection = 1;
  bool h2 = false;           // spoken over HTTP/2
  int threads = 0;           // worker threads
  double duration_s = 0;     // the measured phase, seconds
  bool interrupted = false;  // ended early by the user
  // -n: the measured requests asked for (0: the run was timed); in closed loop fewer were sent
  // when the -d bound came first.
  uint64_t requests_asked = 0;
  // The host's resources over the measured phase, when they were sampled (probes/use.h).
  std::optional<ResourceUse> use;
  // Wall-clock time of the measured phase's start, seconds since the Unix epoch.
  double measure_start_epoch_s = 0;
  // One per second of the measured phase (the last may be shorter, and holds responses that
  // completed during the grace period), when intervals were asked for; empty otherwise.
  std::vector<LatencyInterval> intervals;

  // Successful responses per second over the measured phase (req/s). Closed loop: responses to
  // the requests sent in the phase (so N = X * R holds for the same requests). Open loop:
  // responses completed in the phase, which falls below the offered rate when the server cannot
  // keep up.
  double throughput_rps() const {
    if (duration_s <= 0) return 0.0;
    return static_cast<double>(target_rate_rps > 0 ? stats.ok_completed_in_phase : stats.ok()) /
           duration_s;
  }
  // Closed loop: the requests kept in flight, connections x per_connection (the N of Little's
  // law). Open loop: the most the pool could hold in flight.
  int concurrency() const { return connections * per_connection; }
  // Little's law N = X * R with R the mean latency: the concurrency the measurement implies
  // (Little 1961). In a closed loop it should equal concurrency().
  double littles_n() const {
    return stats.latency_ns.count() == 0 ? 0.0 : throughput_rps() * stats.latency_ns.mean() / 1e9;
  }
  bool open_loop() const { return target_rate_rps > 0; }
  // Open loop: requests actually sent per second of the measured phase (req/s).
  double achieved_rate_rps() const {
    return duration_s > 0 ? static_cast<double>(stats.sent_in_phase) / duration_s : 0.0;
  }
  // Open loop: requests per second whose intended send time fell in the measured phase. Equal
  // to the target for uniform arrivals; Poisson arrivals vary around it (a 1 s phase at
  // 100 req/s schedules 100 +- 10).
  double scheduled_rate_rps() const {
    return duration_s > 0 ? static_cast<double>(stats.scheduled) / duration_s : 0.0;
  }
  // Open loop: the client sent at least 99 % of the requests the schedule asked for within the
  // phase (it kept up; otherwise the server was not offered the target rate).
  bool kept_schedule() const {
    return static_cast<double>(stats.sent_in_phase) >= 0.99 * static_cast<double>(stats.scheduled);
  }
  // Mean number of requests in the system (waiting for a connection or in flight) over the
  // measured phase: Little's L measured directly, to compare with X * mean R.
  double mean_in_system() const {
    return duration_s > 0 ? stats.in_system_ns / (duration_s * 1e9) : 0.0;
  }
  // Client CPU time over the workers' wall time, in cores (0..threads): 1.0 is one busy core.
  double client_cpu_cores() const {
    return stats.client_wall_ns > 0 ? static_cast<double>(stats.client_cpu_ns) /
                                          static_cast<double>(stats.client_wall_ns)
                                    : 0.0;
  }
};

// The exact merge of the runs that several processes (MPI ranks, or separately started knee
// processes: `knee report merge`) made of one load, each driving its part of it: counts add,
// histograms merge (the result equals recording every sample into one histogram), connections,
// threads, rates and -n add, per-worker maxima stay maxima (RunStats::merge). The measured
// phase is the span from the earliest part's start to the latest part's end (wall clock), so
// a start skew between parts lowers throughput, never raises it. Per-second intervals are
// aligned by absolute time (measure_start_epoch_s + start_s, to the nearest second of the
// earliest start): counts, errors and target rates add, max_ns is the maximum (exact), and
// p50_ns/p99_ns are the largest part's (an upper bound: percentiles of summaries do not merge).
// `use` (the host's resources) is parts[0]'s: the resources of each part's host stay with that
// part. interrupted: any part's. `parts` not empty; a single part is returned as it is.
RunResult merge_parts(const std::vector<RunResult>& parts);

}  // namespace knee::core
