// ResourceUse: what one measurement level observed about the host's resources, in the terms of
// Brendan Gregg's USE method (utilisation, saturation, errors), so that every throughput figure
// can be printed next to the resource that limited it (seed 004: "name the saturated resource
// alongside any throughput figure"). ClientUse is the same question asked of knee itself: a
// client thread that is busy all the time measures the client, not the server.
//
// Plain data: probes/use.h fills it from /proc and /sys counter deltas, analysis/saturation.h
// reads it. Every figure is a mean over the level's sampling intervals, weighted by their
// duration (a disk's awaits by its reads and writes), unless its comment says "max" (the highest
// value of one interval) or "min".
// Where each formula comes from:
//   - CPU busy %: /proc/stat (proc(5)), busy = total - idle - iowait over the interval's deltas,
//     as mpstat's 100 - %idle - %iowait (steal counts as busy: the CPU was not ours to use).
//   - PSI "some" %: Documentation/accounting/psi.rst, the delta of the "some total=" counter
//     (microseconds during which at least one task was stalled on the resource) over wall time.
//   - Server process: /proc/PID/stat utime + stime (clock ticks, sysconf(_SC_CLK_TCK)) over wall
//     time, and /proc/PID/status Threads and VmRSS (proc(5)).
//   - Disks: /proc/diskstats deltas computed as `iostat -x` (sysstat) does, field by field on
//     DiskUse below (Documentation/admin-guide/iostats.rst lists the counters).
//   - Network: /proc/net/dev byte and drop deltas; link speed from /sys/class/net/IF/speed;
//     utilisation as `sar -n DEV` %ifutil (sysstat's compute_ifutil).
//   - TCP: /proc/net/snmp Tcp RetransSegs; /proc/net/netstat TcpExt ListenOverflows, ListenDrops.
//   - Memory: /proc/meminfo MemAvailable (kB * 1024).
// Unknown values (file absent, counter went backwards, no interval) are NaN (kUnknown); test
// with is_known(). Rates are per second of wall time.
//
// Thread-safety: plain values; share read-only or copy.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace knee::core {

// The value of a figure that could not be measured.
inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// Whether a figure was measured (not NaN).
inline bool is_known(double value) { return !std::isnan(value); }

// A process of the target, when its pid is known: the server under test, or one of the
// processes behind it (a balancer's replicas).
struct ProcessUse {
  int pid = 0;
  // What it is, as the stack names it ("nginx", "app2"); empty for a bare --server-pid.
  std::string name;
  // CPU time (utime + stime) over wall time, in % of one core: 250 = two and a half cores busy.
  double cpu_pct = kUnknown;
  double cpu_max_pct = kUnknown;  // max: the highest cpu_pct of one interval
  // The busiest thread's CPU time over wall time (/proc/PID/task/TID/stat utime + stime), in %
  // of one core, 0..100, taken per interval (the busiest thread of each) and then averaged: an
  // event loop at 100 % is saturated even when other cores idle.
  double busiest_thread_cpu_pct = kUnknown;
  // max: the busiest thread's share in the interval where it was highest, % of one core (the
  // figure --stages reads, when the rate at the top of a ramp matters, not the phase's mean).
  double busiest_thread_cpu_max_pct = kUnknown;
  int threads = 0;  // max: most threads seen (status "Threads:"); 0 = unknown
  // CPUs its affinity lets it run on (status "Cpus_allowed_list:", e.g. 1 under taskset -c 0);
  // max over the intervals; 0 = unknown.
  int cpus_allowed = 0;
  double rss_bytes = kUnknown;      // resident set size (status "VmRSS:"), bytes
  double rss_max_bytes = kUnknown;  // max: largest resident set seen, bytes
  // Requests it answered in the window (the difference of two readings of its /health
  // totalRequests, less the reading itself); NaN when not asked or not answered.
  double requests = kUnknown;
};

// One block device, figures as `iostat -x` prints them (sysstat, compute_ext_disk_stats with
// deltas d over an interval of t seconds; a sector is 512 bytes whatever the device's block size).
// All NaN for an interval in which the device's counters went backwards (device re-added).
struct DiskUse {
  std::string device;             // kernel name as in /proc/diskstats: "sda", "nvme0n1", "vda"
  double reads_per_s = 0;         // r/s      = d(reads completed) / t
  double writes_per_s = 0;        // w/s      = d(writes completed) / t
  double read_merges_per_s = 0;   // rrqm/s   = d(reads merged) / t
  double write_merges_per_s = 0;  // wrqm/s  = d(writes merged) / t
  double read_kb_per_s = 0;       // rkB/s    = d(sectors read) * 512 / 1024 / t
  double write_kb_per_s = 0;      // wkB/s    = d(sectors written) * 512 / 1024 / t
  double read_await_ms = 0;       // r_await  = d(ms reading) / d(reads completed); 0 if no reads
  double write_await_ms = 0;      // w_await  = d(ms writing) / d(writes completed); 0 if none
  double queue_size = 0;          // aqu-sz   = d(weighted ms doing I/O) / (t * 1000)
  double util_pct = 0;            // %util    = d(ms doing I/O) / (t * 1000) * 100, at most 100
  double util_max_pct = 0;        // max: the highest %util of one interval
};

// One network interface of /proc/net/dev. Rates NaN for an interval in which its counters went
// backwards.
struct NetUse {
  std::string interface;      // "eth0", "lo"
  double rx_bytes_per_s = 0;  // received bytes per second
  double tx_bytes_per_s = 0;  // transmitted bytes per second
  // Link speed in Mbit/s from /sys/class/net/IF/speed; -1 when unknown (lo and virtual
  // interfaces, whose speed means nothing, links that are down, drivers that do not report it).
  double speed_mbit = -1;
  // %ifutil of sar -n DEV: max(rx, tx) * 8 / (speed * 1e6) * 100 on a full-duplex link,
  // (rx + tx) * 8 / (speed * 1e6) * 100 on a half-duplex one; NaN when the speed is unknown.
  double util_pct = kUnknown;
  double util_max_pct = kUnknown;  // max: the highest util_pct of one interval
  double drops_per_s = 0;          // received + transmitted packets dropped per second
};

struct ResourceUse {
  double window_s = 0;  // wall time the figures cover, in seconds
  int intervals = 0;    // sampling intervals folded into the figures (0: nothing measured)

  // CPU busy % per CPU, indexed by CPU number ("cpu3" of /proc/stat is [3]), 0..100; NaN for a
  // CPU that was offline. cpu_busy_max_pct: max, the highest busy % of one interval per CPU.
  std::vector<double> cpu_busy_pct;
  std::vector<double> cpu_busy_max_pct;
  double cpu_busy_all_pct = kUnknown;  // all CPUs together ("cpu" line), 0..100
  // PSI cpu "some": share of wall time during which at least one runnable task waited for a
  // CPU, in %, 0..100; NaN where /proc/pressure/cpu is absent (kernels < 4.20, psi=0).
  double cpu_pressure_some_pct = kUnknown;

  // The server process; empty when no pid was given. Its figures are NaN (threads 0) when the
  // process could not be read, for example because it exited.
  std::optional<ProcessUse> server;
  // The processes behind the server (the replicas behind a `knee lab up` balancer), named, in
  // the stack's order; empty when none were given. Each figure as for `server`.
  std::vector<ProcessUse> backends;

  // Whole block devices (partitions, loop, ram and zram devices are left out: probes/use.h).
  std::vector<DiskUse> disks;
  double io_pressure_some_pct = kUnknown;  // PSI io "some", %, 0..100; NaN if absent

  std::vector<NetUse> nets;                  // every interface of /proc/net/dev, lo included
  double tcp_retrans_per_s = kUnknown;       // TCP segments retransmitted per second
  double listen_overflows_per_s = kUnknown;  // accept queue full when a connection completed, /s
  double listen_drops_per_s = kUnknown;      // connection requests dropped at a listener, /s

  double mem_available_bytes = kUnknown;       // MemAvailable, bytes (mean of interval ends)
  double mem_available_min_bytes = kUnknown;   // min: the lowest MemAvailable seen, bytes
  double memory_pressure_some_pct = kUnknown;  // PSI memory "some", %, 0..100; NaN if absent
};

// What knee's own load generator used and saw during the level: the client side of the USE
// question, and the figures only the client can measure (its own sockets, its schedule).
// Unknown figures are NaN.
struct ClientUse {
  // The busiest client worker thread's CPU demand over wall time, 0..1 (1 = a whole core).
  double max_thread_cpu_share = kUnknown;
  // knee's worker threads' CPU over wall time, in cores (0.5 = half a core).
  double cpu_cores = kUnknown;
  // Open loop: the schedule and the pool.
  bool open_loop = false;
  double send_lag_p99_ns = kUnknown;  // actual - intended send, p99
  // Share of the measured sends more than 1 ms late with a connection idle for them
  // (RunStats::late_with_connection_free over sent), 0..1: the lateness that was the client's.
  double late_with_connection_free_share = kUnknown;
  // Share of the measured phase in which every connection of the pool was busy or connecting
  // (exhausted: an arrival had to wait for the server), 0..1.
  double pool_full_share = kUnknown;
  // pool_full_share is the busiest second's (RunStats::max_pool_full_share_1s, --stages), not
  // the phase's.
  bool pool_full_busiest_second = false;
  int pool_connections = 0;          // the pool's cap
  double service_p50_ns = kUnknown;  // actual send to response, median
  // Segments knee's own connections retransmitted and sent (TCP_INFO deltas over the measured
  // requests; core::RunStats::tcp_retransmits).
  uint64_t own_retransmits = 0;
  uint64_t own_segments_out = 0;
  // The target stopped answering (analysis::unreachable_since): seconds from the phase's start
  // of its last connect or response (NaN: it never went away) and the connects that failed
  // after it.
  double unreachable_since_s = kUnknown;
  uint64_t connect_failures_since = 0;
  std::string connect_failure_cause;  // the commonest, e.g. "ECONNREFUSED"; empty if unknown
};

}  // namespace knee::core
