// The result documents: one typed value for every result knee writes (run, sweep, scenarios,
// capacity search, ladder, request phases, queueing models, comparison, HdrHistogram log summary),
// and the only code that turns them into JSON and back (conventions 15). Every consumer (the text
// renderers, the HTML report, `knee report`, compare, `knee model ... --from/--points`) takes
// these values, never raw JSON.
//
// The JSON layout is the one docs/output.md lists, field for field; objects carry
// `schema_version` (kSchemaVersion) and `kind`. Reading checks both and, where a command needs a
// particular mode, the mode, and says in one line what the file is and what was needed
// ("b.json is an open-loop sweep; `model usl` needs a closed-loop sweep or a CSV of
// concurrency,throughput"). Older files are read migrated: in a schema_version 1 file (knee
// before the `max_connections` and `scheduled` fields) an open-loop level's `concurrency` becomes
// `max_connections` and `sent` (which meant intended arrivals) becomes `scheduled`; in versions 1
// and 2 the counts version 3 added (warm-up accounting, bytes, eof kinds, retransmits, pool
// waits, per-level notes) read as what those files knew: warm-up completions only, zeros.
//
// Equality: documents compare field by field (defaulted ==), so from_json(to_json(x)) == x is
// testable; unknown figures are empty optionals, never NaN.
//
// Units are in the names: _ns nanoseconds, _s seconds, _rps requests per second, _pct percent,
// _bytes bytes. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/status.h"
#include "report/record.h"

namespace knee::report {

// Version 2: open-loop levels carry `max_connections` (not `concurrency`), `sent` means written
// to a socket in both loops and open loop adds `scheduled` and `never_sent`; every document
// carries schema_version. Version 3: `warmup` (an object, was `warmup_requests`), `bytes`,
// `tcp_retransmits`, `unreachable`, `pool_full_share`, eof_mid_headers/eof_mid_body (was
// eof_mid_response), notes and saturation warnings per level.
inline constexpr int kSchemaVersion = 3;

enum class LoopMode : uint8_t { kClosed, kOpen };
std::string_view to_text(LoopMode m);  // "closed", "open"
bool from_text(std::string_view s, LoopMode& m);

// ---- parts shared by the documents ----

// The machine and build (probes/host_context.h).
struct HostFigures {
  std::string hostname, cpu_model;
  int logical_cpus = 0;
  std::string kernel, os, governor, turbo, compiler, build_type, cxx_flags;
  int64_t clock_resolution_ns = 0;
  std::optional<double> load_avg_1m;
  std::vector<std::string> warnings;
  // core::version_string() of the build that measured; absent from documents written before it
  // was recorded.
  std::optional<std::string> knee_version;
  bool operator==(const HostFigures&) const = default;
};

// One latency histogram summarised, ns (HdrHistogram percentiles, nearest rank).
struct LatencySummary {
  int64_t min = 0;
  double mean = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  int64_t count = 0;
  bool operator==(const LatencySummary&) const = default;
};

struct Range {
  double median = 0;
  double min = 0;
  double max = 0;
  bool operator==(const Range&) const = default;
};
// Median (the mean of the two middle values for an even count), min and max; all 0 when empty.
Range range_of(std::vector<double> values);

struct SpectrumPoint {
  double percentile = 0;
  int64_t value_ns = 0;
  bool operator==(const SpectrumPoint&) const = default;
};

// One interval (a second) of a measured phase.
struct IntervalFigures {
  double start_s = 0;  // from the phase's start
  double length_s = 0;
  int64_t responses = 0;  // successful responses completed in it
  double throughput_rps = 0;
  int64_t p50_ns = 0, p99_ns = 0, max_ns = 0;
  std::optional<double> target_rps;  // --stages: the rate the stages intended in it
  std::optional<int64_t> errors;     // errors of every kind counted in it; empty when none
  bool operator==(const IntervalFigures&) const = default;
};

// A process of the target (core::ProcessUse): the server, or one behind it.
struct ServerFigures {
  int pid = 0;
  std::optional<double> cpu_pct;  // % of one core
  std::optional<double> busiest_thread_cpu_pct;
  // --stages only: the same two in the busiest sample (what the verdict reads); absent otherwise.
  std::optional<double> cpu_max_pct, busiest_thread_cpu_max_pct;
  int threads = 0;
  std::optional<double> rss_bytes;
  std::optional<std::string> name;  // "nginx", "app2": a lab stack's part; absent otherwise
  std::optional<double> requests;   // requests it answered in the window, from its /health
  bool operator==(const ServerFigures&) const = default;
};

struct DiskFigures {
  std::string device;
  std::optional<double> r_per_s, w_per_s, rkb_per_s, wkb_per_s, r_await_ms, w_await_ms, aqu_sz,
      util_pct;
  bool operator==(const DiskFigures&) const = default;
};

struct NetFigures {
  std::string interface;
  std::optional<double> rx_bytes_per_s, tx_bytes_per_s;
  double speed_mbit = -1;  // -1: unknown
  std::optional<double> util_pct, drops_per_s;
  bool operator==(const NetFigures&) const = default;
};

// The host over a measured phase (core/resource_use.h), as written.
struct ResourceFigures {
  double window_s = 0;
  int samples = 0;
  std::vector<std::optional<double>> cpu_busy_pct;  // per CPU
  std::optional<double> cpu_busy_all_pct, cpu_pressure_some_pct;
  std::vector<DiskFigures> disks;
  std::optional<double> io_pressure_some_pct;
  std::vector<NetFigures> nets;
  std::optional<double> tcp_retrans_per_s, listen_overflows_per_s, listen_drops_per_s;
  std::optional<double> mem_available_bytes, memory_pressure_some_pct;
  std::optional<ServerFigures> server;  // with a known server process
  std::vector<ServerFigures> backends;  // the processes behind it (--stack), in stack order
  bool operator==(const ResourceFigures&) const = default;
};

// Figures only an open-loop run has.
struct OpenLoopFigures {
  double target_rate_rps = 0;
  double achieved_rate_rps = 0;
  uint64_t scheduled = 0;   // intended send times in the measured phase
  uint64_t never_sent = 0;  // of those, still waiting for a connection at the end
  LatencySummary service_time_ns;
  LatencySummary send_lag_ns;
  uint64_t late = 0;
  uint64_t max_backlog = 0;
  // Share of the measured phase in which every connection of the pool was busy, 0..1.
  double pool_full_share = 0;
  double mean_in_system = 0;
  bool operator==(const OpenLoopFigures&) const = default;
};

// The target stopped answering: its last connect or response, in s from the measured phase's
// start, and the connects that failed after it.
struct UnreachableFigures {
  double since_s = 0;
  uint64_t connect_failures = 0;
  bool operator==(const UnreachableFigures&) const = default;
};

// HTTP/1.1 bytes no request asked for (core::RunStats::unsolicited_bytes) and the connections
// knee closed for them.
struct UnsolicitedFigures {
  uint64_t bytes = 0;
  uint64_t closes = 0;
  bool operator==(const UnsolicitedFigures&) const = default;
};

// The warm-up's requests (core/run_stats.h WarmupStats): counted apart, never dropped.
struct WarmupFigures {
  uint64_t sent = 0, completed = 0, failed = 0, aborted = 0, carried_over = 0;
  std::optional<uint64_t> scheduled, never_sent;  // open loop
  std::map<std::string, uint64_t> errors;         // failures by kind (non-zero ones)
  bool operator==(const WarmupFigures&) const = default;
};

// Bytes of the measured requests.
struct ByteFigures {
  uint64_t sent = 0;
  uint64_t received = 0;          // everything read for them
  uint64_t received_body = 0;     // of that, decoded body payload
  uint64_t received_headers = 0;  // the rest: status lines, fields, interim responses, framing
  double sent_per_s = 0, received_per_s = 0;  // over the measured phase
  bool operator==(const ByteFigures&) const = default;
};

// The TLS handshakes of a run's connections (core::ConnectStats).
struct TlsFigures {
  std::string version;          // "TLSv1.3"
  std::string cipher;           // "TLS_AES_256_GCM_SHA384"
  std::string alpn;             // the protocol the server chose in ALPN, "" when none
  uint64_t full = 0;            // full handshakes
  uint64_t resumed = 0;         // handshakes that resumed a session
  LatencySummary handshake_ns;  // TCP established to handshake done, ns
  bool operator==(const TlsFigures&) const = default;
};

// What HTTP/2 servers said about a run's connections (core::ConnectStats).
struct H2Figures {
  uint64_t goaways = 0;      // GOAWAY frames received
  uint64_t resent = 0;       // requests a GOAWAY refused, sent again on a new connection
  std::string goaway_error;  // the last one's error code that named one, "" without GOAWAY
  // The lowest SETTINGS_MAX_CONCURRENT_STREAMS advertised; empty when none was.
  std::optional<uint32_t> server_max_streams;
  bool operator==(const H2Figures&) const = default;
};

// The connections a run opened, warm-up included, apart from request latency.
struct ConnectFigures {
  uint64_t opened = 0;
  LatencySummary tcp_ns;          // connect() to TCP established, ns
  std::optional<TlsFigures> tls;  // https only
  std::optional<H2Figures> h2;    // HTTP/2 only
  bool operator==(const ConnectFigures&) const = default;
};

// One endpoint of a request mix (engine/mix.h) in one run: its requests, how they ended and the
// latency of its successful ones.
struct EndpointFigures {
  std::string name;  // "METHOD /target", placeholders unexpanded
  double share = 0;  // of the mix's requests by its weights, 0..1
  uint64_t sent = 0;
  uint64_t requests = 0;  // completed, any status
  uint64_t ok = 0;
  uint64_t aborted = 0;
  double throughput_rps = 0;  // successful responses per second (the run's rule: RunFigures)
  LatencySummary latency_ns;
  std::map<std::string, uint64_t> errors;  // kinds that occurred, by name
  std::map<std::string, uint64_t> status;  // by status code
  bool operator==(const EndpointFigures&) const = default;
};

// What one run measured (one repeat of a run or of a sweep level).
struct RunFigures {
  std::optional<int> concurrency;      // closed loop: N
  std::optional<int> max_connections;  // open loop: the pool's cap
  int threads = 0;
  uint64_t requests = 0;  // completed, any status
  uint64_t ok = 0;
  uint64_t sent = 0;
  uint64_t aborted = 0;
  uint64_t reconnects = 0;
  std::optional<uint64_t> requests_asked;  // -n COUNT; empty for a timed run
  WarmupFigures warmup;
  // Empty in files of knee before TLS (version 3 files may lack it).
  std::optional<ConnectFigures> connects;
  ByteFigures bytes;
  // Segments knee's connections retransmitted and sent for the measured requests (TCP_INFO).
  uint64_t tcp_retransmits = 0;
  uint64_t tcp_segments_out = 0;
  // Responses whose last part came 30..220 ms after the rest (the Nagle / delayed-ACK stall,
  // core::RunStats::split_responses) and the mean of those gaps, ns (0 when none).
  uint64_t split_responses = 0;
  double split_gap_mean_ns = 0;
  // Set when bytes arrived that no request asked for (left out otherwise, and in older files).
  std::optional<UnsolicitedFigures> unsolicited;
  // Set when connects failed from some point to the end of the phase, for at least 1 s (a
  // quarter of a phase under 4 s) and a tenth of it (analysis::unreachable_since).
  std::optional<UnreachableFigures> unreachable;
  double duration_s = 0;
  double throughput_rps = 0;
  LatencySummary latency_ns;
  std::map<std::string, uint64_t> errors;        // every kind, by name
  std::map<std::string, uint64_t> error_causes;  // "<kind>: <cause>"
  std::map<std::string, uint64_t> status;        // by status code
  double client_cpu_cores = 0;
  double client_max_thread_cpu = 0;
  double client_max_thread_cpu_demand = 0;
  // --stages only: the busiest client thread's demand over its busiest second, 0..1
  // (RunStats::max_thread_cpu_demand_1s), which the saturation rule reads there in place
  // of the phase's mean; absent without --stages or when no second completed.
  std::optional<double> client_max_thread_cpu_demand_1s;
  int64_t client_spin_ns = 0;
  LatencySummary loop_lag_ns;
  bool interrupted = false;
  std::optional<ResourceFigures> resources;
  double measure_start_epoch_s = 0;
  std::vector<SpectrumPoint> spectrum;
  std::vector<IntervalFigures> intervals;
  std::optional<OpenLoopFigures> open;  // open loop
  // A request mix: every endpoint, in the mix's order; empty without one.
  std::optional<std::vector<EndpointFigures>> endpoints;

  // Errors of every kind; failures: every kind but connect, tls (nothing was sent) and status
  // (the response completed): those consumed a request.
  uint64_t total_errors() const;
  uint64_t request_failures() const;
  // N for a closed-loop level, the target rate for an open-loop one.
  double level_key() const;
  bool operator==(const RunFigures&) const = default;
};

// Connections were reopened for a tenth of the requests or more (a server that closes them),
// with keep-alive on: the time spent connecting, outside latency, then explains a low X * mean R.
bool reconnect_bound(const RunFigures& r);

struct LatencyRanges {
  Range mean, p50, p90, p99, p999;  // ns
  bool operator==(const LatencyRanges&) const = default;
};
struct Ranges {
  Range throughput_rps;
  LatencyRanges latency_ns;
  bool operator==(const Ranges&) const = default;
};

struct LittleFigures {
  double n = 0;                          // N asked for (closed) or mean in system (open)
  std::optional<double> x_times_mean_r;  // the N the measurement implies
  std::optional<double> ratio;
  bool holds = false;  // within 5 %
  bool operator==(const LittleFigures&) const = default;
};

struct SaturatedFigures {
  std::string resource;  // unreachable, client, cpu, disk, network, pool, none
  std::string detail;
  std::vector<std::string> evidence;
  std::string rule;
  // What weakens the level without being its verdict (host contention, an unknown server CPU).
  std::vector<std::string> warnings;
  bool operator==(const SaturatedFigures&) const = default;
};

// One process's part of a level whose load several processes drove (`knee run --part`, MPI
// ranks) and `knee report merge` (or rank 0) merged: its own figures, from its median repeat,
// beside the merged ones.
struct PartFigures {
  int part = 0;                    // its index (the rank), from 0
  std::string host;                // the hostname of its machine
  std::string source;              // the file it was read from, or "rank N"
  int connections = 0;             // its share: closed loop N, open loop the pool's cap
  std::optional<double> rate_rps;  // open loop: its share of the arrival rate
  double throughput_rps = 0;
  uint64_t errors = 0;
  double client_cpu_cores = 0;
  double client_max_thread_cpu_demand = 0;
  // Its measured phase began this long after the earliest part's, ms: on the first part's clock
  // when the clock offsets were measured (clock_offset_ms, MPI), else by each machine's own clock
  // (so the offsets between the machines' clocks are in it).
  double start_offset_ms = 0;
  std::optional<double> clock_offset_ms;  // its clock minus the first part's (rank 0's), ms
  std::string saturated;                  // its own verdict's resource (SaturatedFigures::resource)
  std::string detail;
  bool operator==(const PartFigures&) const = default;
};

// One run or sweep level over its repeats: the median run's figures, the ranges, every repeat
// when there were several, and the verdicts.
struct LevelFigures {
  RunFigures median;  // the repeat whose throughput is the median (the lower middle one)
  LoopMode mode = LoopMode::kClosed;
  int repeats = 1;
  Ranges ranges;
  std::vector<RunFigures> runs;  // every repeat, with 2 or more; empty otherwise
  LittleFigures little;
  bool little_flagged = false;
  std::optional<SaturatedFigures> saturated;  // empty only in files of knee before version 3
  // How to read this level, in plain words (report::run_notes: a stall hidden by the closed
  // loop, a schedule not kept, a phase that sent nothing).
  std::vector<std::string> notes;
  // The exact record of every repeat, in order (report/record.h): what `knee report merge`
  // merges (a merged file's are the merged runs'). Empty in files of knee before records.
  std::vector<RunRecord> records;
  // A merged level: each part's own figures, by part (empty otherwise).
  std::vector<PartFigures> parts;
  bool operator==(const LevelFigures&) const = default;
};

// The load as the user asked for it.
// The TLS settings of an https run (net::TlsOptions), so two saved results say how they differ.
struct TlsParams {
  bool verify = true;                  // false with -k
  std::string ca_file;                 // --cacert; "" the system store
  std::string client_cert;             // --cert; "" none
  std::optional<std::string> version;  // --tls: "1.2" or "1.3"; empty: 1.2 or 1.3
  bool resume = true;                  // false with --no-tls-resume
  bool operator==(const TlsParams&) const = default;
};

// --part INDEX/COUNT: this process drove part INDEX (from 0) of a load split over COUNT
// processes (engine::part_of).
struct PartParams {
  int index = 0;
  int count = 1;
  bool operator==(const PartParams&) const = default;
};

struct LoadParams {
  std::string url;  // placeholders unexpanded
  std::string method = "GET";
  double duration_s = 0, warmup_s = 0, timeout_s = 0, grace_s = 0;
  int threads = 1;
  int repeats = 1;
  std::string arrival = "uniform";
  // --arrival poisson: its --seed, so the same arrivals can be drawn again; empty for uniform
  // arrivals (and in files written before 2026-12-07).
  std::optional<uint64_t> seed;
  // --no-keepalive: true; empty otherwise (and in files written before it).
  std::optional<bool> new_connection_per_request;
  std::optional<TlsParams> tls;  // https only
  // "h2" (HTTP/2 over TLS) or "h2c" (cleartext, prior knowledge); empty for HTTP/1.1.
  std::optional<std::string> protocol;
  // --io uring: "uring" (requests written through io_uring, engine::LoadOptions::io); empty for
  // epoll, the default (and in files written before 2026-12-07).
  std::optional<std::string> io;
  // Requests in flight per connection when above 1: HTTP/2 streams or the HTTP/1.1 pipeline's
  // depth; the closed loop's concurrency is connections x this.
  std::optional<int> per_connection;
  // --mix's endpoints and weights, "METHOD TARGET=WEIGHT,..." (engine/mix.h; a rate's /s and the
  // @BODY_FILE left out); empty without one. `method` and the URL's path are then not
  // what was sent: each endpoint names its own.
  std::optional<std::string> mix;
  // --stages as given (engine/schedule.h); empty for a constant rate.
  std::optional<std::string> stages;
  // -n COUNT: measured requests per run (per level of a sweep); empty for a timed run. duration_s
  // is then a closed loop's bound on the measured phase, not its length.
  std::optional<uint64_t> requests;
  // --timeline: the run printed its per-second timeline; empty otherwise.
  std::optional<bool> timeline;
  // {shipment}'s ids: how many, and the Zipf exponent when not uniform; empty when no request
  // held {shipment}.
  std::optional<int64_t> shipments;
  std::optional<double> zipf;
  std::optional<PartParams> part;  // --part: this process's part of a split load
  // A merged result: the files (or ranks) whose parts it merged, in part order.
  std::vector<std::string> merged_from;
  bool operator==(const LoadParams&) const = default;
};

// ---- the documents ----

// One --threshold and how it came out on the figures the text printed (check_thresholds in
// analyse.h), so a result file says what the exit code said.
struct ThresholdOutcome {
  std::string threshold;  // normalised, "p99 < 50ms"
  bool passed = false;
  // The check's line, "p99 < 50ms: FAILED (measured 61.20 ms)"; in a sweep a failure names its
  // first failing level ("at concurrency 4: ...", "(and at 2 more levels)").
  std::string line;
  bool operator==(const ThresholdOutcome&) const = default;
};

struct RunDocument {
  LevelFigures level;  // its notes are the run's
  std::string target;  // what was measured, in words
  std::string started_at;
  LoadParams params;
  HostFigures host;
  std::vector<ThresholdOutcome> thresholds;  // --threshold's, in the order given; empty without
  bool operator==(const RunDocument&) const = default;
};

struct KneeFigures {
  std::optional<size_t> index;  // into levels; empty: no knee
  std::optional<double> rate_rps;
  std::optional<int> concurrency;
  std::string summary, rule;
  std::vector<std::optional<double>> gain_per_doubling;
  std::optional<std::string> saturated;
  // The level whose verdict `saturated` is: the knee's own, or (an open-loop sweep's rate knee)
  // the first level that fell behind its rate.
  std::optional<size_t> saturated_index;
  // A level that made a knee candidate fail to hold (analysis::find_knee).
  std::optional<size_t> noisy_index;
  bool operator==(const KneeFigures&) const = default;
};

struct UslFigures {
  double sigma = 0, kappa = 0, lambda_rps = 0;
  std::optional<double> r_squared, peak_concurrency, peak_throughput_rps;
  std::vector<std::string> flags;
  // Standard errors (analysis::UslFit); empty for a parameter held at 0.
  std::optional<double> sigma_se, kappa_se, lambda_se;
  bool operator==(const UslFigures&) const = default;
};

struct KneedleFigures {
  double concurrency = 0;
  std::string x_scale, summary;
  bool operator==(const KneedleFigures&) const = default;
};

// The utilisation law's bound (Lazowska et al., Quantitative System Performance, 1984, ch. 5:
// X <= 1 / D_max, D = U / X): CPU per request of the target's busiest process, and with
// processes behind the server (--stack), of all of them together on the host's CPUs
// (X <= CPUs / sum D).
struct DemandFigures {
  double cpu_demand_ns = 0;                   // D of the bottleneck process, ns of CPU per request
  double cpu_bound_rps = 0;                   // 1 / D
  std::optional<std::string> process;         // the bottleneck's name, with a stack
  std::optional<double> total_cpu_demand_ns;  // sum of D over the stack's processes
  std::optional<double> total_cpu_bound_rps;  // host CPUs / sum D
  // The level D was measured at (index into the sweep's levels); empty in files before
  // 2026-12-06, which took the last level sampled.
  std::optional<size_t> level_index;
  bool operator==(const DemandFigures&) const = default;
};

struct SweepDocument {
  std::string target, started_at;
  LoadParams params;
  std::vector<LevelFigures> levels;
  KneeFigures knee;
  std::optional<UslFigures> usl;
  std::optional<std::string> usl_error;  // why there is no fit, when one was tried
  std::optional<KneedleFigures> kneedle;
  std::optional<DemandFigures> service_demand;
  std::vector<std::string> warnings;
  HostFigures host;

  LoopMode mode() const { return levels.empty() ? LoopMode::kClosed : levels.front().mode; }
  std::vector<ThresholdOutcome> thresholds;  // as RunDocument::thresholds, over every level
  bool operator==(const SweepDocument&) const = default;
};

// `knee sweep --exec`: an external benchmark swept over levels (engine/external.h). Throughput
// is in the tool's own unit (the document's `unit`: IOPS, tps, ops/s), per second.
struct ExternalResultFigures {  // one job or test of the tool, or the run's total
  std::optional<std::string> name;
  std::optional<double> throughput, bandwidth_bytes_per_s;
  std::optional<double> latency_mean_ns, latency_p50_ns, latency_p90_ns, latency_p99_ns,
      latency_p999_ns, latency_max_ns;
  std::optional<double> in_flight;  // what the tool kept in flight (Little's N)
  std::optional<double> cpu_pct;    // the tool's own CPU for it (fio), % of one core
  uint64_t errors = 0;
  bool operator==(const ExternalResultFigures&) const = default;
};
struct ExternalRunFigures {
  std::string command;  // as run, {N} replaced
  double wall_s = 0;
  std::optional<double> runtime_s;       // the tool's own measured time
  std::optional<double> tool_cpu_cores;  // the command's CPU over wall time (rusage)
  std::optional<int> tool_threads;
  ExternalResultFigures total;
  std::vector<ExternalResultFigures> jobs;  // when the tool reported several
  std::vector<std::string> notes;           // what the adapter noticed
  std::optional<ResourceFigures> resources;
  bool operator==(const ExternalRunFigures&) const = default;
};
struct ExternalLevelFigures {
  int level = 0;              // the N put into {N}
  ExternalRunFigures median;  // the repeat whose throughput is the median (the lower middle one)
  int repeats = 1;
  Range throughput;
  std::optional<Range> latency_mean_ns, latency_p99_ns;
  std::vector<ExternalRunFigures> runs;  // every repeat, with 2 or more
  std::optional<LittleFigures> little;   // when the tool's N and mean latency are known
  std::optional<DiskFigures> disk;       // the device behind the files, in this level
  SaturatedFigures saturated;
  bool operator==(const ExternalLevelFigures&) const = default;
};
struct ExternalSweepDocument {
  std::string command;  // the template, with {N}
  std::string adapter;  // fio, pgbench, redis-benchmark, json
  std::string unit;     // IOPS, tps, ops/s, or the json adapter's
  std::string started_at;
  int repeats = 1;
  double timeout_s = 0;
  std::vector<std::string> files;     // fio: the files the jobs used
  std::optional<std::string> device;  // the block device behind them
  std::optional<std::string> fs_type;
  std::vector<ExternalLevelFigures> levels;
  KneeFigures knee;
  std::optional<UslFigures> usl;
  std::optional<std::string> usl_error;
  // Why the sweep stopped before its last level (the levels before it are kept).
  std::optional<std::string> failed;
  bool interrupted = false;
  std::vector<std::string> warnings;
  HostFigures host;
  bool operator==(const ExternalSweepDocument&) const = default;
};

// `knee run --scenario ...`: one run document per scenario, by name, and the names in the order
// they were given.
struct ScenariosDocument {
  std::vector<std::string> order;
  std::map<std::string, RunDocument> scenarios;
  bool operator==(const ScenariosDocument&) const = default;
};

// `knee capacity`: the search (analysis/capacity.h), every step.
// What limited one run of a step by knee's own figures (report::client_side_verdict): resource
// "client", "unreachable", "pool", "network" or "none", its words, and the busiest client
// thread's CPU demand (share of a core; empty when unknown).
struct CapacityLimit {
  std::string resource;
  std::string detail;
  std::optional<double> client_thread_cpu_demand;
  bool operator==(const CapacityLimit&) const = default;
};
struct CapacityRepeatFigures {
  double p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  double throughput_rps = 0, achieved_rps = 0;
  uint64_t errors = 0, sent = 0;
  bool passed = false;
  std::vector<std::string> failures;
  std::optional<CapacityLimit> limit;  // absent in files written before 2026-12-06
  bool operator==(const CapacityRepeatFigures&) const = default;
};
struct CapacityStepFigures {
  double rate_rps = 0;
  std::string phase;  // bracket, bisect, confirm
  bool passed = false;
  std::vector<CapacityRepeatFigures> repeats;
  bool operator==(const CapacityStepFigures&) const = default;
};
// -c of a capacity search: a number, or the engine's default pool per rate (written as the
// words "default per rate").
struct PoolCap {
  std::optional<int> connections;
  bool operator==(const PoolCap&) const = default;
};
struct CapacityParams {
  double start_rate_rps = 0, max_rate_rps = 0, precision_percent = 0;
  int repeats = 0, confirm_repeats = 0;
  double duration_s = 0, warmup_s = 0, timeout_s = 0;
  PoolCap max_connections;
  // --io uring: "uring" (LoadParams::io); empty for epoll and in files before 2026-12-07.
  std::optional<std::string> io;
  bool operator==(const CapacityParams&) const = default;
};
struct CapacityBracket {
  std::optional<double> highest_pass_rps;  // = capacity_rps
  std::optional<double> lowest_fail_rps;   // empty: no rate failed
  bool operator==(const CapacityBracket&) const = default;
};
struct CapacityDocument {
  std::string target;
  std::vector<std::string> slos;
  CapacityParams params;
  std::optional<double> capacity_rps;
  CapacityBracket bracket;
  bool reached_max = false, confirmed = false, interrupted = false;
  std::vector<CapacityStepFigures> steps;
  bool operator==(const CapacityDocument&) const = default;
};

// `knee ladder` (probes/ladder.h, analysis/network_floor.h).
struct RungFigures {
  std::string group, id, name, method, rung;
  int64_t batch = 1, samples = 0, ops = 0;
  int repeats = 0;
  double median_ns = 0, p99_ns = 0, min_ns = 0, best_ns = 0, ops_per_s = 0;
  std::optional<std::string> plan;  // SQLite rungs
  bool operator==(const RungFigures&) const = default;
};
struct LadderClock {
  int64_t getres_ns = 0, smallest_step_ns = 0;
  double now_cost_ns = 0;
  int64_t target_sample_ns = 0;
  bool operator==(const LadderClock&) const = default;
};
struct LadderParams {
  int repeats = 0;
  int64_t max_samples_per_repeat = 0;
  double max_time_per_repeat_ms = 0, warmup_ms = 0;
  int disk_repeats = 0;
  int64_t disk_max_writes_per_repeat = 0;
  double disk_max_time_per_repeat_ms = 0;
  int64_t dram_bytes = 0, cache_bytes = 0;
  int sqlite_rows = 0;
  std::string dir;
  bool operator==(const LadderParams&) const = default;
};
struct LadderSqlite {
  std::string version;
  int rows = 0;
  std::map<std::string, std::string> plans;
  double scan_over_key = 0, scan_over_index = 0;
  bool operator==(const LadderSqlite&) const = default;
};
struct LadderDisk {
  std::string dir, path, fs_type, mount_point, source, device, device_model;
  std::optional<int> rotational;
  bool memory = false;
  int64_t block_bytes = 4096;
  std::vector<std::string> warnings;
  bool operator==(const LadderDisk&) const = default;
};
struct GeoPoint {
  double lat_deg = 0, lon_deg = 0;
  bool operator==(const GeoPoint&) const = default;
};
struct RouteFigures {
  std::string name;
  GeoPoint from, to;
  double distance_km = 0, vacuum_rtt_ms = 0, fibre_rtt_ms = 0;
  std::string rung;
  bool operator==(const RouteFigures&) const = default;
};
struct LadderNetwork {
  double fibre_factor = 0, earth_radius_km = 0, speed_of_light_km_per_s = 0;
  std::string method;
  std::vector<RouteFigures> routes;  // by fibre floor
  bool operator==(const LadderNetwork&) const = default;
};
struct LadderDocument {
  std::string started_at;
  double duration_s = 0;
  std::vector<std::string> only;
  HostFigures host;
  LadderClock clock;
  LadderParams params;
  std::vector<RungFigures> rungs;  // by median
  std::optional<LadderSqlite> sqlite;
  std::optional<LadderDisk> disk;
  std::optional<LadderNetwork> network;
  std::vector<std::string> warnings;
  bool operator==(const LadderDocument&) const = default;
};

// `knee probe` (engine/request_phases.h).
struct PhaseFigures {
  std::string curl, words;
  int64_t count = 0;
  std::optional<int64_t> min_ns, median_ns, p99_ns, max_ns, phase_min_ns, phase_median_ns,
      phase_p99_ns;  // empty when count is 0
  bool operator==(const PhaseFigures&) const = default;
};
struct AttemptFigures {
  bool ok = false, new_connection = false;
  std::optional<int> status;
  uint64_t body_bytes = 0;
  std::map<std::string, std::optional<int64_t>> at_ns;  // by phase key
  std::optional<std::string> error;
  bool operator==(const AttemptFigures&) const = default;
};
struct ProbeParams {
  std::string method;
  int count = 0;
  bool reuse = false;
  double timeout_s = 0;
  bool operator==(const ProbeParams&) const = default;
};
struct ProbeDocument {
  std::string target, started_at, address;
  ProbeParams params;
  std::string times;
  int ok = 0, failed = 0, connections = 0;
  std::map<std::string, int> status;
  std::map<std::string, int> errors;
  std::map<std::string, PhaseFigures> phases;  // by phase key
  std::vector<AttemptFigures> attempts;
  // https: what the first handshake agreed on and how many resumed (omitted for http).
  std::optional<TlsFigures> tls;
  bool operator==(const ProbeDocument&) const = default;
};

// `knee model little|mm1|mmc|usl` (analysis/little.h, queueing.h, usl.h, kneedle.h).
struct LittleDocument {
  std::string solved;  // n, x or r
  std::optional<double> n, x_rps, r_ns;
  std::string formula, source;
  bool operator==(const LittleDocument&) const = default;
};
struct Mm1Row {
  double utilisation = 0, arrival_rps = 0, mean_response_ns = 0, ratio_to_first = 0;
  double p50_ns = 0, p90_ns = 0, p99_ns = 0;
  bool operator==(const Mm1Row&) const = default;
};
struct Mm1Peak {
  double peak_rps = 0, utilisation = 0, headroom = 0;
  std::optional<double> mean_response_ns;  // empty: no steady state
  std::string band, verdict;
  bool operator==(const Mm1Peak&) const = default;
};
struct MuSource {
  std::string from;                   // "--mu" or the sweep file
  std::optional<double> concurrency;  // the level it came from: N, or (open loop) the rate
  std::optional<double> rate_rps;
  std::optional<bool> no_knee;
  bool operator==(const MuSource&) const = default;
};
struct Mm1Document {
  double mu_rps = 0;
  MuSource mu_source;
  std::vector<Mm1Row> rows;
  std::vector<Mm1Peak> peaks;
  std::string source;
  bool operator==(const Mm1Document&) const = default;
};
struct MmcDocument {
  int servers = 0;
  double mu_rps = 0, lambda_rps = 0, offered_load = 0, utilisation = 0, p_wait = 0;
  double mean_wait_ns = 0, mean_response_ns = 0, mean_queue_length = 0, mean_in_system = 0;
  std::map<std::string, std::optional<double>> response_ns;  // p50, p90, p99, p999
  std::map<std::string, std::optional<double>> wait_ns;      // the same of the wait Wq alone
  // Erlang B: the share of arrivals an M/M/c/c system (the same servers, no queue) would turn
  // away; empty in files of knee before version 3.
  std::optional<double> p_block;
  std::string source;
  bool operator==(const MmcDocument&) const = default;
};
struct UslPoint {
  double concurrency = 0, throughput_rps = 0, fitted_rps = 0;
  bool operator==(const UslPoint&) const = default;
};
struct KneedleResult {
  std::optional<std::string> label, x_scale, summary, source, error;
  std::optional<double> concurrency;
  std::optional<size_t> index;
  bool operator==(const KneedleResult&) const = default;
};
struct UslDocument {
  std::string from;  // the points' file
  std::string formula;
  double sigma = 0, kappa = 0, lambda_rps = 0;
  std::optional<double> r_squared, peak_concurrency, peak_throughput_rps;
  std::string held_at_zero;
  std::vector<std::string> flags;
  std::optional<double> sigma_se, kappa_se, lambda_se;  // standard errors (analysis::UslFit)
  std::vector<UslPoint> points;
  KneedleResult kneedle;
  std::string source;
  bool operator==(const UslDocument&) const = default;
};

// `knee report a.json b.json --json` (compare.h).
struct CompareSideFigures {
  std::string file, kind;
  LoopMode mode = LoopMode::kClosed;
  std::string target, started_at;
  int threads = 0;
  double duration_s = 0;
  int repeats = 1;
  std::optional<std::string> protocol;  // "HTTP/2 over TLS, 10 streams per connection (...)"
  std::optional<std::string> unit;      // an external sweep's throughput unit (IOPS, tps)
  bool operator==(const CompareSideFigures&) const = default;
};
struct FigureFigures {
  Range a, b;
  std::optional<double> ratio;
  std::string difference;  // higher, lower, within, cannot_tell
  bool operator==(const FigureFigures&) const = default;
};
// A level's key: written as an integer when it is whole (concurrency, whole rates).
struct LevelKey {
  double value = 0;
  bool operator==(const LevelKey&) const = default;
};
struct CompareLevelFigures {
  // The key, under its name: concurrency (closed loop) or rate_rps (open loop).
  std::optional<LevelKey> concurrency, rate_rps;
  int a_repeats = 1, b_repeats = 1;
  std::map<std::string, FigureFigures> figures;
  bool operator==(const CompareLevelFigures&) const = default;
};
struct ComparisonDocument {
  std::string key;  // "concurrency" or "rate_rps"
  CompareSideFigures a, b;
  std::vector<CompareLevelFigures> levels;
  std::vector<LevelKey> only_in_a, only_in_b;
  // How the two measurements' conditions differ (target, protocol, client threads, measured
  // time), one plain sentence each (report::compare); empty when they match.
  std::vector<std::string> notes;
  bool operator==(const ComparisonDocument&) const = default;
};

// `knee report FILE.hlog --json`: the merged latency of the selected intervals.
struct LatencyReportDocument {
  LatencySummary latency_ns;
  bool operator==(const LatencyReportDocument&) const = default;
};

using Document =
    std::variant<RunDocument, SweepDocument, ScenariosDocument, CapacityDocument, LadderDocument,
                 ProbeDocument, LittleDocument, Mm1Document, MmcDocument, UslDocument,
                 ComparisonDocument, LatencyReportDocument, ExternalSweepDocument>;

// The JSON of a document, with schema_version and kind (and `model` for the model documents).
nlohmann::json to_json(const Document& doc);

// Reads a document. `label` (a file name) starts every error. Errors (kInvalidArgument, one
// line): not an object, no or an unknown schema_version, an unknown kind, a missing or mistyped
// field ("a.json: levels[3].latency_ns.p99 is missing").
core::Result<Document> from_json(const nlohmann::json& j, const std::string& label);

// Parses `text` as JSON and reads it. Errors: as from_json, "label: not valid JSON (parse error
// at line L, column C: ...)" (nlohmann's reason), and a number beyond a double's range named.
core::Result<Document> parse_document(std::string_view text, const std::string& label);

// What a document is, in words: "a closed-loop run", "an open-loop sweep", "a ladder", ...
std::string kind_words(const Document& doc);

// "b.json is an open-loop sweep; `model usl` needs a closed-loop sweep or a CSV of
// concurrency,throughput": the error for a document a command cannot use.
core::Status wrong_document(const std::string& label, const Document& doc, std::string_view command,
                            std::string_view needs);

}  // namespace knee::report
