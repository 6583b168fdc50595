// One load run against one HTTP target: the options a user sets (-c, -t, -d, -w, --timeout), and
// run_load(), which resolves the target, checks it is reachable, drives it from `threads` worker
// threads (each with its own event loop, connections and RunStats) and folds their statistics.
//
// Closed loop (default): every connection keeps exactly one request in flight and sends the next
// only when the previous response is complete, so `connections` is the N of Little's law
// N = X * R (seed 002, principle 2).
// Open loop (rate_rps set): requests are sent at the intended times of one global arrival
// schedule (uniform or Poisson) whatever the server does, over a pool of at most `connections`;
// latency is measured from the intended time (no coordinated omission: Tene, "How NOT to
// measure latency"; wrk2).
//
// Phases, measured from one start time shared by all workers:
//   [start, start+warmup)            requests flow, their samples are discarded; they are counted
//                                    apart (RunStats::warmup), never dropped
//   [start+warmup, start+warmup+d)   requests sent here are measured, wherever they complete
//   after that                       no new request; those in flight may finish within `grace`
//                                    and are measured like the rest; the rest are `aborted`.
//                                    Open loop: those waiting for a connection may go within
//                                    `grace` too, unless nothing is in flight, no connection is
//                                    open and a connect fails (the target went away): then they
//                                    are never sent.
// Thread-safety: run_load() is blocking and owns its threads; `interrupt` may be set from a
// signal handler or another thread to end the run early (in-flight requests are then aborted).
#pragma once

#include <atomic>
#include <functional>
#include <optional>

#include "core/clock.h"
#include "core/run_stats.h"
#include "core/status.h"
#include "engine/intervals.h"
#include "engine/live.h"
#include "engine/schedule.h"
#include "engine/shipments.h"
#include "http/request.h"
#include "net/send_ring.h"
#include "net/tls.h"

namespace knee::engine {

// The highest open-loop rate accepted, req/s: ten times what one knee thread sends on loopback.
inline constexpr double kMaxRateRps = 1e6;

// One endpoint of a request mix (engine/mix.h): its request on the run's target and its weight.
struct MixEndpoint {
  std::string name;  // "METHOD /target" as typed, placeholders unexpanded: the report's key
  http::RequestSpec request;
  double weight = 1;  // > 0, relative to the other endpoints'
  // As typed in --mix, for the record only: the body's file ("" for none), and whether the
  // weight was a rate (=R/s) rather than a ratio.
  std::string body_file;
  bool weight_is_rate = false;
};

struct LoadOptions {
  // Target URL, method, headers, body. With a mix, the run's target (its host and port are
  // every endpoint's); its method, target and body are then not sent.
  http::RequestSpec request;
  // A request mix when non-empty (2..kMaxMixEntries endpoints, or 1): requests go to the
  // endpoints in smooth weighted round robin, each endpoint with its own figures
  // (RunStats::endpoints).
  std::vector<MixEndpoint> mix;
  // Where {shipment} draws its ids from (engine/shipments.h).
  ShipmentDraw shipments;
  int connections = 10;  // closed loop: N, the concurrent connections, >= 1
  int threads = 1;       // worker threads, 1..connection_slots()
  core::Nanos duration = std::chrono::seconds(2);  // measured phase, > 0
  core::Nanos warmup = std::chrono::seconds(1);    // discarded phase, >= 0
  core::Nanos timeout = std::chrono::seconds(10);  // per request, > 0
  std::optional<core::Nanos> grace;                // after the duration; default timeout
  // Open loop when set: arrivals/s, in (0, kMaxRateRps]. Every due arrival is held until sent,
  // so a rate no client can send would only fill memory.
  std::optional<double> rate_rps;
  // Open loop: the most connections the pool may open, >= 1; nullopt: default_pool_size(rate).
  std::optional<int> max_connections;
  Arrival arrival = Arrival::kUniform;  // open loop: spacing of arrivals
  // Open loop at a changing rate (--stages) when non-empty: the stages run from the run's start
  // (the warm-up is their first `warmup`), so warmup + duration must equal their total and
  // rate_rps (which sizes the pool) their peak.
  std::vector<Stage> stages;
  uint64_t seed = 1;        // open loop: Poisson RNG seed
  core::Nanos interval{0};  // > 0: per-interval latency histograms in RunResult::intervals
  // Open loop: busy-poll (epoll with a zero timeout) this long before each intended send
  // instead of sleeping up to it, 0..10 ms (0: sleep). A sleeping thread wakes late by the
  // host's timer and wake-up latency (hundreds of us on some VMs), which shows as send lag;
  // spinning trades client CPU for punctual sends. Unset (the default, `--spin auto`): each
  // worker sizes the window from the wake-up lateness it observes (engine/spin_window.h). The
  // spin time is counted apart (RunStats::client_spin_ns) and left out of the client-bound check.
  std::optional<core::Nanos> spin;
  // https URLs: trust store, client certificate, protocol version, resumption (net/tls.h).
  net::TlsOptions tls;
  // false (--no-keepalive): a new connection for every request, as a fleet of one-shot clients
  // makes. Requests carry "Connection: close" (unless the user set a Connection field) and
  // connections are never reused; in closed loop latency runs from the connect's start, so it
  // includes the TCP connect and the TLS handshake (open loop: from the intended send, as ever).
  bool keepalive = true;
  // HTTP/2 instead of HTTP/1.1 (http/h2_client.h): over TLS with ALPN "h2" for https (--h2),
  // with prior knowledge over cleartext for http (--h2c, RFC 9113 §3.3).
  bool h2 = false;
  // Requests in flight per connection, 1..kMaxPerConnection: HTTP/2 streams (--streams, h2load's
  // -m) or HTTP/1.1 pipelining depth (--pipeline). The closed loop keeps connections x this many
  // requests in flight: that product is its N. Not with keepalive == false.
  int per_connection = 1;
  static constexpr int kMaxPerConnection = 1000;
  // How requests are written (--io). kEpoll: a send(2) per connection and pass of the event
  // loop. kUring: queued, and handed to the kernel together, one io_uring_enter per 32
  // connections' writes and the rest before the loop waits (net/send_ring.h), which saves most of
  // a system call per request; bytes_sent counts them as queued; a request's send time
  // is then when it was queued, at most one pass of the loop before the kernel takes it. Reads
  // are recv(2) on epoll's readiness either way. Plain http only (TLS writes through OpenSSL).
  net::IoPath io = net::IoPath::kEpoll;
  // -n: measured requests, >= 1, instead of a time (ab, hey, oha). Closed loop: the measured
  // phase ends once this many have been sent, across threads, and `duration` only bounds it.
  // Open loop: the measured phase lasts requests / rate_rps, so the schedule holds exactly this
  // many arrivals when they are uniform (Poisson: this many on average).
  std::optional<uint64_t> requests;
  // This process's part of a load that several processes drive together (part_of below:
  // `--part`, MPI ranks); {0, 1, 0} is the whole load. Closed loop: `connections` and `requests`
  // are already this part's share. Open loop: rate_rps, stages and requests stay the whole
  // load's, and this part's threads take their turns (global thread index * threads + t of
  // count * threads) in the one arrival sequence of the whole load, so the parts together send
  // exactly the schedule one process with all their threads would (Poisson included: same seed);
  // this part's own target, and its default pool, are for rate_rps / count. first_connection:
  // the {conn} number of this part's first slot, so numbers stay unique across parts.
  struct Share {
    int index = 0;
    int count = 1;
    uint64_t first_connection = 0;
  };
  Share share;

  // Open loop's default pool: enough connections for the rate at up to 250 ms of latency,
  // between 16 and 4096 (Little: N = X * R). The only place this default is computed.
  static int default_pool_size(double rate_rps);

  bool open_loop() const { return rate_rps.has_value(); }
  // Connection slots the run uses: closed loop `connections`; open loop the pool's cap.
  int connection_slots() const;
  // The closed loop's N: connections x per_connection.
  int concurrency() const { return connections * per_connection; }
  core::Nanos grace_or_default() const { return grace.value_or(timeout); }
  // The measured phase's planned length: -n / rate in open loop with -n, else `duration` (in
  // closed loop with -n, the most it may last).
  core::Nanos measured_phase() const;
  // Whether a request it sends holds {shipment}, in its target or body or a mix endpoint's: only
  // then does `shipments` draw ids.
  bool draws_shipments() const;
  // The first invalid field, or ok. Errors: kInvalidArgument with field() one of
  // "connections", "max_connections", "threads", "duration", "warmup", "timeout", "rate_rps",
  // "spin", "url", "requests", "per_connection", "io", "mix", "shipments", "zipf", "stages"
  // (callers name it in their own words: a flag, a scenario key).
  core::Status validate() const;
};

struct RunControl {
  const core::ClockSource* clock = &core::steady_clock_source();
  const std::atomic<bool>* interrupt = nullptr;  // set to end the run early
  // Called on the calling thread when the measured phase starts and when it ends (or the run is
  // interrupted), e.g. to sample the host's resources over exactly that window. Without a
  // warm-up on_measure_start runs just before the phases are stamped, while the workers wait at
  // their StartGate (so it delays the first sends, not measures beside them), even when every
  // worker has failed; with one, only if some worker is still running. Optional; they must
  // return quickly.
  std::function<void()> on_measure_start;
  std::function<void()> on_measure_end;
  // Live progress (engine/live.h): when set, called on the calling thread about every
  // `progress_every` from the start until every worker has finished (grace period included),
  // with the figures the workers last published. Optional; it must return quickly. Without it
  // the workers publish nothing.
  std::function<void(const LiveSnapshot&)> on_progress;
  core::Nanos progress_every = std::chrono::milliseconds(250);
  // With LoadOptions::interval: called on the calling thread as each interval completes (every
  // worker has finished it), in order, with its summary and folded histogram (engine/intervals.h).
  // Optional; it must return quickly (an HdrHistogram log line is fine).
  std::function<void(const IntervalRecord&)> on_interval;
};

// Braces in a request target other than the placeholders {conn}, {seq} and {shipment}: almost
// surely a typo. Errors: kInvalidArgument with field() `field`.
core::Status check_placeholders(std::string_view target, std::string_view field);

// Part `index` (from 0) of `whole` split over `count` processes, as LoadOptions::share explains.
// Closed loop: connections and -n are split with the remainder spread over the first parts
// (10 over 4: 3, 3, 2, 2), threads capped at the part's connections. Open loop: a given
// max_connections is split the same way; without one each part's default pool is for its share
// of the rate. Errors: kInvalidArgument with field() "part" for count < 1, index outside
// 0..count-1, or a share with no connection (or no request of -n) left for some part.
core::Result<LoadOptions> part_of(const LoadOptions& whole, int index, int count);

// Runs one load test. Errors: kInvalidArgument for bad options (a scheme other than http and
// https, a bad method, an unreadable CA bundle or client certificate), kUnavailable when the
// target cannot be resolved, connected to or (https) shaken hands with before the run (the
// message names the URL and the OS error or the TLS reason, e.g. "certificate verify failed:
// hostname mismatch"), kIoError when the OS refuses epoll or threads, and kIoError naming field
// "io" when io is kUring and this kernel has no io_uring or forbids it (ENOSYS, EPERM).
// Failures during the run are counted in RunStats, never returned.
core::Result<core::RunResult> run_load(const LoadOptions& options, const RunControl& control = {});

}  // namespace knee::engine
