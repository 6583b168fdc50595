// USE sampling: the counters of the host's resources read at two instants, and the
// utilisation, saturation and error rates between them (core::ResourceUse), so that a level of a
// sweep can say which resource limited it (seed 004, Brendan Gregg's USE method).
//
// A UseSnapshot holds raw cumulative counters and the steady_clock instant they were read;
// use_between() is pure arithmetic on two snapshots; average() folds the intervals of one level;
// UseSampler does both on a background thread every 250 ms while a level runs.
//
// Sources (all read through FsReader, so tests run on fixture trees; see proc(5)):
//   /proc/stat                  "cpu" and "cpuN" lines: user nice system idle iowait irq
//                               softirq steal (clock ticks); guest time is already in user/nice.
//                               busy = user + nice + system + irq + softirq + steal, that is
//                               total - idle - iowait; busy % = d(busy) / d(total) * 100.
//   /proc/pressure/{cpu,io,memory}  "some ... total=US" (Documentation/accounting/psi.rst):
//                               microseconds with at least one task stalled; % = d(total) / wall.
//   /proc/PID/stat              utime (field 14) + stime (field 15), clock ticks
//                               (sysconf(_SC_CLK_TCK)); cpu % = d(ticks) / ticks_per_s / wall.
//   /proc/PID/task/TID/stat     the same per thread, for the busiest thread (at most
//                               kMaxServerTasks threads are read; beyond that it is unknown).
//   /proc/PID/status            "Threads:" and "VmRSS: N kB".
//   /proc/diskstats             fields 4..14 as in Documentation/admin-guide/iostats.rst;
//                               r/s, w/s, rrqm/s, wrqm/s, rkB/s, wkB/s, r_await, w_await, aqu-sz
//                               and %util computed as `iostat -x` (sysstat) does: see
//                               core::DiskUse. Devices kept: those with a /sys/block/NAME entry
//                               ('/' in NAME read as '!', like cciss!c0d0), which leaves out
//                               partitions, and whose name does not start with "loop", "ram" or
//                               "zram" (backed by files or memory, not by a device that can
//                               saturate). device-mapper and md devices are kept.
//   /proc/net/dev               receive bytes (1st field) and drop (4th), transmit bytes (9th)
//                               and drop (12th) of every interface.
//   /sys/class/net/IF/speed     link speed in Mbit/s, and /sys/class/net/IF/duplex ("half" or
//                               else full). Unknown (-1) for "lo", for interfaces with an entry
//                               in /sys/devices/virtual/net (veth, bridges, tun: their speed is
//                               a made-up number), and when the file is unreadable or <= 0.
//   /proc/net/snmp              Tcp: RetransSegs.
//   /proc/net/netstat           TcpExt: ListenOverflows, ListenDrops.
//   /proc/meminfo               MemAvailable (kB).
// A file that is missing or malformed leaves its counters empty, and the figures computed from
// them unknown (NaN): sampling never fails. A counter that went backwards (device re-added,
// 32-bit wrap on old kernels) gives an unknown figure for that interval, never a negative rate.
//
// Thread-safety: take_snapshot, use_between and average share no state and are safe from any
// thread. A UseSampler is driven by one thread (start, stop, destruction); its background
// thread only reads files and never touches the load engine.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/resource_use.h"
#include "probes/fs_reader.h"

namespace knee::probes {

// Threads of the server process read per snapshot for its busiest thread.
inline constexpr size_t kMaxServerTasks = 512;

// Cumulative time of one /proc/stat cpu line, in clock ticks.
struct CpuTicks {
  uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total = 0;  // busy + idle + iowait
};

// Cumulative counters of one /proc/diskstats line (units as the kernel counts them).
struct DiskCounters {
  std::string device;
  uint64_t reads = 0;            // reads completed
  uint64_t reads_merged = 0;     // adjacent reads merged into one
  uint64_t sectors_read = 0;     // 512-byte sectors
  uint64_t read_ms = 0;          // ms spent by all reads (from issue to completion)
  uint64_t writes = 0;           // writes completed
  uint64_t writes_merged = 0;    // adjacent writes merged into one
  uint64_t sectors_written = 0;  // 512-byte sectors
  uint64_t write_ms = 0;         // ms spent by all writes
  uint64_t io_ms = 0;            // ms during which at least one I/O was in flight (io_ticks)
  uint64_t weighted_io_ms = 0;   // ms of I/O weighted by the number in flight (time_in_queue)
};

// Cumulative counters of one /proc/net/dev line, with the link's speed.
struct NetCounters {
  std::string interface;
  uint64_t rx_bytes = 0;
  uint64_t rx_drops = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_drops = 0;
  int64_t speed_mbit = -1;   // -1: unknown (see the header comment)
  bool half_duplex = false;  // /sys/class/net/IF/duplex is "half"
};

// One thread of the server process: its id and utime + stime in clock ticks.
struct TaskTicks {
  int tid = 0;
  uint64_t cpu_ticks = 0;
};

// Raw counters of one process of the target at one instant.
struct ProcessCounters {
  std::string name;                   // as asked (WatchedProcess::name)
  int pid = 0;                        // the pid asked for, readable or not
  std::optional<uint64_t> cpu_ticks;  // utime + stime
  std::vector<TaskTicks> tasks;       // empty when unreadable or above kMaxServerTasks
  std::optional<int> threads;         // status "Threads:"
  std::optional<int> cpus_allowed;    // status "Cpus_allowed_list:", counted
  std::optional<uint64_t> rss_bytes;  // status "VmRSS:" * 1024
};

// The target's processes to follow: the server knee sends to, and those behind it (a
// balancer's replicas), each with the name the report gives it.
struct WatchedProcess {
  std::string name;  // "" for a bare --server-pid; "nginx", "app1" for a lab stack's parts
  int pid = 0;
};
struct WatchedProcesses {
  std::optional<WatchedProcess> server;
  std::vector<WatchedProcess> backends;
  // Just a server, unnamed, when its pid is known.
  static WatchedProcesses server_only(std::optional<int> pid) {
    WatchedProcesses w;
    if (pid) w.server = WatchedProcess{"", *pid};
    return w;
  }
};

// Raw counters of the host at one instant. Empty optionals and vectors: not readable.
struct UseSnapshot {
  core::TimePoint at{};             // steady_clock instant the snapshot was taken
  int64_t clock_ticks_per_s = 100;  // sysconf(_SC_CLK_TCK), the unit of /proc/PID/stat times

  std::optional<CpuTicks> cpu_all;               // the "cpu" line
  std::vector<std::optional<CpuTicks>> cpus;     // "cpuN" at [N]; empty for CPUs not listed
  std::optional<uint64_t> cpu_pressure_some_us;  // PSI "some total=", microseconds
  std::optional<uint64_t> io_pressure_some_us;
  std::optional<uint64_t> memory_pressure_some_us;

  std::optional<ProcessCounters> server;  // the server asked for, readable or not
  std::vector<ProcessCounters> backends;  // the processes behind it, in the order asked

  std::vector<DiskCounters> disks;  // whole devices only, in /proc/diskstats order
  std::vector<NetCounters> nets;    // in /proc/net/dev order

  std::optional<uint64_t> tcp_retrans_segs;      // Tcp RetransSegs
  std::optional<uint64_t> tcp_listen_overflows;  // TcpExt ListenOverflows
  std::optional<uint64_t> tcp_listen_drops;      // TcpExt ListenDrops
  std::optional<uint64_t> mem_available_bytes;   // MemAvailable * 1024
};

// Reads every counter above from the host behind `fs`, stamping the snapshot with `now`.
// processes: the target's processes to follow (none, a server, the processes behind it). Never
// fails; see the header comment.
UseSnapshot take_snapshot(const FsReader& fs, const WatchedProcesses& processes,
                          core::TimePoint now);
inline UseSnapshot take_snapshot(const FsReader& fs, std::optional<int> server_pid,
                                 core::TimePoint now) {
  return take_snapshot(fs, WatchedProcesses::server_only(server_pid), now);
}

// The process that does the work of the server at `pid`: `pid` itself, or its only child when
// that child has the same command name (/proc/PID/comm): a pre-fork server's master hands the
// work to its worker (nginx, a gunicorn or php-fpm master), and following the master would
// measure a process that idles. Children are those of every thread (/proc/PID/task/*/children).
// Errors: kInvalidArgument when `pid` has several children of its name (knee follows one
// process), the message naming them ("1230 is the master of 4 nginx processes (1231, 1232,
// 1233, 1234): give the one under test").
core::Result<int> working_process(const FsReader& fs, int pid);

// The figures of the interval from `a` to `b` (b taken after a), as one interval of a
// core::ResourceUse: rates per second of b.at - a.at, max fields equal to the figure itself,
// gauges (threads, RSS, MemAvailable) as read in b. Disks and interfaces present in both
// snapshots, in b's order. An interval that is not positive gives a ResourceUse with
// intervals = 0 and every figure unknown.
core::ResourceUse use_between(const UseSnapshot& a, const UseSnapshot& b);

// Folds the intervals of one level into one ResourceUse: each figure is the mean of the
// intervals that measured it, weighted by their duration (r_await and w_await by their number
// of reads and writes), so that folding contiguous intervals gives the rates and awaits of the
// whole window; max fields take the maximum, mem_available_min_bytes the minimum, threads the
// maximum. window_s and intervals are sums. Disks and interfaces are matched by name, in order
// of first appearance. An empty span gives a default ResourceUse.
core::ResourceUse average(std::span<const core::ResourceUse> intervals);

// average() one interval at a time: add() each, result() the fold so far. Holds one running
// sum per figure, disk and interface, whatever the number of intervals.
class UseFold {
 public:
  UseFold();
  ~UseFold();
  UseFold(UseFold&&) noexcept;
  UseFold& operator=(UseFold&&) noexcept;
  void add(const core::ResourceUse& interval);
  core::ResourceUse result() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Samples the host every `interval` on a background thread between start() and stop(), and
// returns the window's figures folded with average(). Intervals are contiguous: the window
// starts with a snapshot taken in start() and ends with one taken in stop(); a last interval
// shorter than half of `interval` is merged into the one before it so that no maximum comes
// from a sliver of time (the gauges read at the end of the merged one keep their extremes).
class UseSampler {
 public:
  // fs: where /proc and /sys are read ("/" on a real host); interval: time between snapshots.
  explicit UseSampler(FsReader fs = FsReader("/"),
                      std::chrono::milliseconds interval = std::chrono::milliseconds(250));
  UseSampler(const UseSampler&) = delete;
  UseSampler& operator=(const UseSampler&) = delete;
  ~UseSampler();  // stops a running sampler and discards its figures

  // Takes the first snapshot and starts the background thread. processes: the target's
  // processes to follow, if known. Calling start() while running is a broken invariant
  // (assert).
  void start(WatchedProcesses processes);
  void start(std::optional<int> server_pid) { start(WatchedProcesses::server_only(server_pid)); }

  // Wakes the background thread, joins it, takes the last snapshot and returns the figures of
  // the window since start(). Returns promptly: the thread sleeps on a condition variable.
  // Without a running sampler: a default ResourceUse.
  core::ResourceUse stop();

  bool running() const { return thread_.joinable(); }

 private:
  void run();
  // Appends the interval from last_ to `next`; merges a short final interval into the one before.
  void add_interval(UseSnapshot next, bool final);

  FsReader fs_;
  std::chrono::milliseconds interval_;
  WatchedProcesses processes_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_requested_ = false;  // guarded by mu_
  // Owned by the background thread while it runs, by the caller of start() and stop() otherwise
  // (thread creation and join order the accesses).
  UseSnapshot last_;                                // end of the last interval
  std::optional<UseSnapshot> before_last_;          // start of the last interval
  UseFold folded_;                                  // every interval before the last
  std::optional<core::ResourceUse> last_interval_;  // kept apart: a short final one merges in
  std::thread thread_;
};

// The number of CPUs in a /proc/PID/status list field such as "Cpus_allowed_list:\t0-3,8"
// (5); nullopt when `key` is absent or its list malformed.
std::optional<int> cpus_in_list(std::string_view status, std::string_view key);

}  // namespace knee::probes
