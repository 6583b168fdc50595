// The saturated resource of one measurement level: which of the target, the client, the
// server's CPU, a disk, the network or the connection pool limited the throughput, named beside
// the figure (seed 004: "name the saturated resource alongside any throughput figure ... flat
// throughput with nothing saturated means the client is not asking for more"), from the USE
// figures of the host (core::ResourceUse, probes/use.h) and what knee saw itself
// (core::ClientUse).
//
// Attribution (a verdict never names a resource the target did not use):
//   - "cpu" means the target's CPU: the server process and its threads (the built-in server, or
//     --server-pid), and the processes behind it when known (--stack). Without a known server
//     process the server's CPU is unknown, and the rule says so instead of naming the host's:
//     "none" reads "nothing knee can see saturated (the server's CPU is unknown ...)", with a
//     warning when a host CPU was >= cpu_busy_pct busy.
//   - CPU used by other processes (the host's busy cores less the server's and knee's) is host
//     contention: a warning that weakens the level, never the verdict.
//   - "network" means this run's traffic: segments retransmitted on knee's own connections;
//     the host-wide counters are context only.
//   - "client" means knee: its busiest thread, or a paced client that could not keep its
//     schedule while connections were free. A pool exhausted because responses were slow is the
//     server's latency ("pool"), not the client.
//
// The rule, applied in this order; the first that qualifies is named:
//   1. unreachable  the target stopped answering: connects failed from its last answer to the
//                   end of the phase, for at least unreachable_min_s (1 s; a quarter of a phase
//                   shorter than 4 s) and unreachable_min_share (a tenth) of the phase
//                   (unreachable_since()).
//   2. client       the busiest client worker thread demanded >= client_thread_cpu_share of a
//                   core (90 %), or (open loop) the send lag's p99 was over max_send_lag_ns
//                   (1 ms), more than client_late_share (1 %) of the sends were that late
//                   counted from when a connection was idle for them, and the pool was
//                   exhausted less than pool_full_share (half) of the phase. It comes early because
//                   it invalidates the rest: the level measured knee.
//   3. cpu          the server process used >= server_cpu_pct_per_core (90 %) of one core times
//                   min(its threads, the CPUs it may run on: the host's, or fewer when its
//                   affinity allows fewer), or its busiest thread >= that of one core (an
//                   event loop at 100 % is saturated while other cores idle). The same for
//                   each process behind it (ResourceUse::backends: a lab stack's replicas),
//                   the hottest one named; and, with backends, all of them together: the
//                   host's CPUs >= cpu_busy_pct (90 %) busy on average while the target's
//                   processes used >= stack_cpu_share (75 %) of the busy time beside knee's
//                   client (a balancer and its replicas fill a small host's CPUs while none is
//                   at its own limit; the kernel's loopback work on their behalf is billed to
//                   no process, hence not 90 % of it). Only when their threads could use every
//                   CPU (the sum of each one's usable cores, >= the host's).
//   4. disk         a disk's %util >= disk_util_pct (90 %), or its aqu-sz >= disk_queue_size (1)
//                   while its await grew by >= disk_await_growth (1.5x) since the previous level;
//                   %util alone misleads on devices that serve requests in parallel (SSD, NVMe,
//                   RAID), which the queue and await catch. Without a previous level only %util
//                   counts.
//   5. network      an interface >= net_link_util_pct (80 %) of its known link speed, packets
//                   dropped or listen-queue overflows above their thresholds (0: any), or more
//                   than tcp_retrans_share (1 %) of the segments knee's own connections sent in
//                   the measured phase retransmitted (a lossy or congested path).
//   6. pool         (open loop) the send lag's p99 was over 1 ms and every connection of the
//                   pool was busy or connecting for at least pool_full_share (half) of the phase:
//                   the server's latency held the requests back ("pool of N exhausted because
//                   responses took X ms").
//   7. none         "no hardware resource saturated: a software or concurrency limit (pool, lock,
//                   connection cap), or the client is not asking for more"; when the host
//                   was not sampled at all it says only knee's own figures were checked.
// Utilisation thresholds count from "at or above"; error rates from "above". Unknown (NaN)
// figures never qualify. The host figures are those of the machine knee runs on: for a server on
// another host only the client, pool and network verdicts speak about the path to it.
//
// Pure functions: no I/O, no clock, no shared state; safe to call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/resource_use.h"

namespace knee::analysis {

struct SaturationThresholds {
  // Busiest client worker thread's CPU time over wall time, 0..1, at or above which the level is
  // client-bound.
  double client_thread_cpu_share = 0.90;
  // Busy % of one host CPU at or above which a level whose server CPU is unknown warns that
  // something filled a CPU (the verdict never names the host's CPU); and the host CPUs' mean
  // busy % at or above which a stack's processes can fill them together.
  double cpu_busy_pct = 90;
  // With processes behind the server: the share of the host's busy CPU time beside knee's
  // client that the target's processes must have used for "the CPUs are full" to be theirs.
  double stack_cpu_share = 0.75;
  // % of one core per usable core (min(server threads, CPUs)) at or above which the server
  // process is CPU-bound; also the limit for its busiest thread alone.
  double server_cpu_pct_per_core = 90;
  // iostat %util at or above which a disk is saturated.
  double disk_util_pct = 90;
  // iostat aqu-sz at or above which a disk is saturated when its await also grew by
  // disk_await_growth (a ratio) since the previous level.
  double disk_queue_size = 1;
  double disk_await_growth = 1.5;
  // % of the known link speed (sar's %ifutil) at or above which an interface is saturated.
  double net_link_util_pct = 80;
  // Error rates, per second, above which the network counts as saturated: packets dropped on
  // any interface, listen-queue overflows or drops.
  double net_drops_per_s = 0;
  double listen_overflows_per_s = 0;
  // Share of the segments knee's connections sent that were retransmitted, above which the
  // path is lossy or congested. A few retransmits are normal on a real network; 1 % is not.
  double tcp_retrans_share = 0.01;
  // Open loop: a send lag p99 above this is a client that did not keep its schedule, when more
  // than client_late_share of the sends were also that late with a connection idle for them
  // (ClientUse::late_with_connection_free_share, counted at engine's fixed 1 ms): lag spent
  // waiting for the server (its responses, its connects) is not the client's.
  double max_send_lag_ns = 1e6;
  double client_late_share = 0.01;
  // Open loop: share of the phase with the pool exhausted at or above which a late send is the
  // server's latency (pool), below which it is the client's.
  double pool_full_share = 0.5;
  // A target is unreachable when connects failed from its last answer to the end for at least
  // unreachable_min_s (in a phase shorter than unreachable_min_s / unreachable_short_share, that
  // share of it instead: a target that died in a 0.5 s level is unreachable too) and
  // unreachable_min_share of the phase (a restart that came back, or one refused connect near
  // the end, is not).
  double unreachable_min_s = 1.0;
  double unreachable_short_share = 0.25;
  double unreachable_min_share = 0.1;
  // Cores used by other processes (the host's busy cores less the server's and knee's) at or
  // above which the level carries a host-contention warning.
  double contention_cores = 0.25;
};

struct SaturationVerdict {
  // "unreachable", "client", "cpu", "disk", "network", "pool" or "none".
  std::string resource;
  // Plain words with the figures, e.g. "server process at 99% of one core (CPU 0 98% busy)";
  // for "none" the sentence of rule 5.
  std::string detail;
  // Every figure that crossed a threshold, the named resource's first, then the others in rule
  // order ("cpu: CPU 0 98% busy (>= 90%)"), then pressure stall figures where the host has PSI;
  // for "none", the highest figure of each resource instead of crossings.
  std::vector<std::string> evidence;
  // The rule in words with the thresholds used, printed beside the result.
  std::string rule;
  // What weakens the level without being its verdict: other processes' CPU (host contention),
  // an unknown server CPU.
  std::vector<std::string> warnings;
};

// Names the resource that limited the level whose host figures are `use` and client figures
// `client`. previous_level: the figures of the level before (lower concurrency or rate), for
// the disk's "await growing" condition; nullptr for the first level.
// The target went away (rule 1): the seconds from the phase's start of its last answer when
// connects failed from then to the end, for at least thresholds.unreachable_min_s (or
// unreachable_short_share of a shorter phase) and unreachable_min_share of a phase of
// duration_s; nullopt otherwise. last_ok_s < 0: it never
// answered in the phase (since 0). connect_failures_after: connects that failed after it.
std::optional<double> unreachable_since(double duration_s, double last_ok_s,
                                        uint64_t connect_failures_after,
                                        const SaturationThresholds& thresholds = {});

// means: the phase's means when `use` holds each figure at its busiest sample (--stages): the
// host-contention warning subtracts the server's and knee's cores from the host's busy cores,
// which must be figures of one span (regression: peaks less the client's mean overstated other
// processes 5-10x); nullptr when `use` is the means.
SaturationVerdict name_saturated_resource(const core::ResourceUse& use,
                                          const core::ClientUse& client,
                                          const SaturationThresholds& thresholds = {},
                                          const core::ResourceUse* previous_level = nullptr,
                                          const core::ResourceUse* means = nullptr);

// One level of an external benchmark (`knee sweep --exec`, engine/external.h) as the limit
// rule below reads it: what the tool said about itself, and which disk is behind its files.
struct ExternalLevelUse {
  std::string tool;                        // "fio", "pgbench", "redis-benchmark", "json"
  double tool_cpu_cores = core::kUnknown;  // the command's CPU over wall time (rusage), cores
  int tool_threads = 0;                    // its threads or processes doing the work; 0 unknown
  double busiest_job_cpu_pct = core::kUnknown;  // fio: a job's usr_cpu + sys_cpu, % of a core
  double in_flight = core::kUnknown;            // operations it kept in flight (Little's N)
  double x_times_mean_r = core::kUnknown;       // the N its throughput and mean latency imply
  std::string device;                           // the disk behind its files; "" unknown or none
  bool files_in_memory = false;  // its files are on tmpfs/ramfs: no device behind them
};

// Device operations per second (r/s + w/s) must grow by less than this between two levels for
// their growing await to mean a saturated disk rather than a deeper queue that still pays.
inline constexpr double kExternalDiskFlatGrowth = 1.10;

// The limit of one external benchmark level. The rule, first match wins:
//   1. client  the benchmark itself: a job's own CPU >= client_thread_cpu_share of a core (fio's
//              usr_cpu + sys_cpu), or the command's CPU >= that share x its threads when both are
//              known. The numbers then measure the tool, not the device or server.
//   2. cpu     the target's process (ResourceUse::server, --server-pid) as in
//              name_saturated_resource's rule 3; else the host's CPUs >= cpu_busy_pct (90 %) busy
//              on average (the benchmark and its target share this host). With the server's CPU
//              known, the benchmark and the server must have used >= stack_cpu_share (75 %) of
//              the busy cores, else it is host contention (a warning, not the verdict); without
//              it, other processes cannot be told from the target, and a warning says how much
//              the benchmark itself used.
//   3. disk    the device behind the files (every disk when unknown): since the previous level,
//              await grew >= disk_await_growth (1.5x) while its operations per second grew less
//              than kExternalDiskFlatGrowth (1.1x), with aqu-sz >= disk_queue_size (1): more in
//              flight only queued. %util alone is not used: a device that serves requests in
//              parallel is 100 % "utilised" with one in flight. The first level has no previous.
//   4. network an interface >= net_link_util_pct (80 %) of its known link speed.
//   5. none    "nothing saturated: the benchmark's own concurrency (N in flight) is the limit":
//              a deeper queue, more clients or a higher rate cap would still add throughput.
//              When X * mean R is below half of N, the tool did not keep N busy: its own pacing
//              (a rate cap, think time) is the limit, and the words say so.
// previous, previous_use: the level before (lower N), nullptr for the first.
SaturationVerdict name_external_limit(const core::ResourceUse& use, const ExternalLevelUse& level,
                                      const core::ResourceUse* previous_use,
                                      const SaturationThresholds& thresholds = {});

}  // namespace knee::analysis
