// The latency ladder: operations measured on this host, from nanoseconds (a cache read) to
// milliseconds (a durable write, a table scan), each with its method, so a design can be checked
// against this machine's orders of magnitude instead of a copied table (seed 001, issue 6).
//
// Four groups of rungs are measured here (the distance floor of the network is computed by
// analysis/network_floor.h and added by the CLI):
//   inprocess  hash-map lookup, empty out-of-line call, SHA-256 of 1 KiB (OpenSSL EVP), JSON parse
//              (nlohmann::json), sort of 1,000 integers, random read from a cache-sized and a
//              DRAM-sized array, uncontended mutex lock/unlock, a trivial system call
//   sqlite     in-memory SQLite, users(id INTEGER PRIMARY KEY, email, name): read by primary key,
//              by unindexed email (a scan), by email after CREATE INDEX; EXPLAIN QUERY PLAN of each
//   disk       4 KiB appends to a file in a directory: OS cache only, + fdatasync, + fsync,
//              O_DSYNC; with the filesystem and block device behind the directory
//   loopback   TCP ping-pong of 16 bytes on 127.0.0.1, and socket + connect + accept + close
//
// Every measured rung comes from ladder_timing.h's measure(): warm-up, batching of operations
// shorter than the clock can time, repeats, an HDR histogram (core::Histogram) of sample times
// in ns; statistics are per operation in ns.
//
// Errors: functions that touch the OS return Result; a failure names the operation, the input
// and the OS error. Nothing here prints.
// Thread-safety: each function owns everything it creates (run_loopback starts and joins one
// echo thread); call them from one thread at a time, since they measure the machine they share.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "probes/fs_reader.h"
#include "probes/host_context.h"
#include "probes/ladder_timing.h"

namespace knee::probes {

// The clock every rung is timed with, measured.
struct ClockInfo {
  int64_t getres_ns = 0;         // clock_getres(CLOCK_MONOTONIC): the kernel's stated resolution
  int64_t smallest_step_ns = 0;  // smallest nonzero difference of two consecutive
                                 // steady_clock::now() calls: the finest time actually observable
  double now_cost_ns = 0;        // mean cost of one steady_clock::now() (a batch of 10,000)
  int64_t target_sample_ns = 0;  // 100 x max(smallest_step_ns, getres_ns), at least 1,000 ns:
                                 // operations shorter than this are timed in batches
};

// Measures the clock: 100,000 consecutive now() pairs (or 50 ms) for the smallest step.
ClockInfo measure_clock();

// One measured operation.
struct Rung {
  std::string group;     // "inprocess", "sqlite", "disk", "loopback"
  std::string id;        // stable key: "hash_map_lookup", "sqlite_scan", "write_fdatasync", ...
  std::string name;      // what was done, in words
  std::string method;    // how it was timed, in words (batching, what the timer includes)
  int64_t batch = 1;     // operations per timed sample
  int64_t samples = 0;   // timed samples in the histogram
  int64_t ops = 0;       // operations timed: samples * batch
  int repeats = 0;       // repeats the samples came from
  double median_ns = 0;  // per operation, from the histogram of sample times / batch
  double p99_ns = 0;     // per operation (p99 of batch means when batch > 1)
  double min_ns = 0;     // fastest sample / batch
  double best_ns = 0;    // best of repeats: the fastest repeat's mean per operation
  double ops_per_s = 0;  // 1e9 / median_ns: one at a time, on one thread
  std::string plan;      // sqlite only: EXPLAIN QUERY PLAN detail, rows joined by "; "
};

// Statistics of a measure() result as a Rung (group, id, name, method are the caller's).
Rung summarise(const Samples& samples, int repeats);

// Shared options of the measured groups. Defaults give the full ladder in well under a minute;
// tests shrink the counts and the DRAM array.
struct LadderOptions {
  TimingLimits timing;                      // in-process, sqlite and loopback rungs
  int64_t dram_bytes = int64_t{1} << 30;    // power of two >= 1 MiB: the "DRAM" array (1 GiB)
  int64_t cache_bytes = int64_t{16} << 10;  // power of two >= 64: the "cache" array (16 KiB)
  int sqlite_rows = 20'000;                 // >= 1
  TimingLimits disk_timing{.repeats = 5,
                           .max_samples = 40,
                           .max_time = std::chrono::milliseconds(600),
                           .warmup = std::chrono::milliseconds(0),
                           .target_sample_ns = 0,
                           .fixed_batch = 1};  // one write at a time, up to 5 x 40 per mode
  std::string dir = ".";                       // where the disk rungs write their file
};

// The in-process rungs, in the order listed above. `target_sample_ns` of options.timing decides
// batching (take it from measure_clock()). Errors: kIoError when OpenSSL cannot hash or the DRAM
// array cannot be allocated; kInvalidArgument for array sizes that are not powers of two.
core::Result<std::vector<Rung>> run_inprocess(const LadderOptions& options);

// The SQLite rungs with their plans, and the ratios the seed prints.
struct SqliteLadder {
  std::string version;         // sqlite3_libversion()
  int rows = 0;                // rows in users
  std::vector<Rung> rungs;     // ids sqlite_primary_key, sqlite_scan, sqlite_index
  double scan_over_key = 0;    // median scan / median primary-key read
  double scan_over_index = 0;  // median scan / median indexed read
};

// Builds the in-memory table (one transaction of prepared inserts) and times the three reads with
// prepared statements (bind, step, read the name, reset). Errors: kIoError naming the SQLite call
// and sqlite3_errmsg.
core::Result<SqliteLadder> run_sqlite(const LadderOptions& options);

// What stands behind a directory: filesystem and block device.
struct DiskTarget {
  std::string dir;           // as given
  std::string path;          // realpath of dir
  std::string fs_type;       // mountinfo's type of the mount holding path ("ext4"); else from
                             // statfs f_type (fs_type_name), or "unknown (statfs magic 0x...)"
  std::string mount_point;   // longest mount point of /proc/self/mountinfo containing path
  std::string source;        // mount source ("/dev/vda", "tmpfs", "overlay")
  std::string device;        // block device under /sys/block ("vda", "nvme0n1"); "" if none
  std::string device_model;  // /sys/block/DEV/device/model; "" if the driver gives none
  int rotational = -1;       // /sys/block/DEV/queue/rotational: 1 rotating disk (or a virtual disk
                             // that says so), 0 not rotating (SSD, NVMe), -1 unknown
  bool memory = false;       // tmpfs, ramfs, zram, or overlay whose upper layer is in memory
  std::vector<std::string> warnings;  // plain words: durability numbers that mean nothing
};

// One mount of /proc/self/mountinfo (proc(5)).
struct MountInfo {
  std::string major_minor;    // "254:0"
  std::string mount_point;    // "/" (octal escapes such as \040 decoded)
  std::string fs_type;        // "ext4"
  std::string source;         // "/dev/vda"
  std::string super_options;  // "rw,discard"
};

// The mount holding `path` (absolute, already resolved): the entry with the longest mount point
// that is `path` or a parent of it; later entries win ties (they are mounted on top). Errors:
// kParseError when no line of the text is a mount that holds `path`.
core::Result<MountInfo> mount_of(std::string_view mountinfo_text, std::string_view path);

// The filesystem name for a statfs(2) f_type magic ("ext4", "tmpfs", "xfs", ...); "" if unknown.
std::string fs_type_name(int64_t magic);

// Describes `dir` (statfs, mountinfo and /sys/dev/block read through `fs`). Errors:
// kInvalidArgument when dir is not a directory (names it and the OS error).
core::Result<DiskTarget> describe_dir(const FsReader& fs, const std::string& dir);

// The disk behind the files a tool used (an external benchmark's, `knee sweep --exec`): each
// file's directory (made absolute against the working folder) described in turn, the first with
// a block device returned; when none has one, the last described (its filesystem, e.g. tmpfs);
// nullopt when no directory could be described (all missing).
std::optional<DiskTarget> disk_behind(const FsReader& fs, const std::vector<std::string>& files);

struct DiskLadder {
  DiskTarget target;
  int64_t block_bytes = 4096;
  std::vector<Rung> rungs;  // ids write_cache, write_fdatasync, write_fsync, write_odsync
};

// Appends 4 KiB blocks to a fresh file in options.dir per mode (knee-ladder-<pid>.tmp, removed
// afterwards), timing each write (and its flush) one at a time. Errors: kInvalidArgument naming
// --dir when dir is not a directory or no file can be created in it (/proc, read-only); kIoError
// naming the file and the OS error when writing fails (EIO, ENOSPC, out of descriptors).
core::Result<DiskLadder> run_disk(const FsReader& fs, const LadderOptions& options);

// Loopback TCP: ids tcp_round_trip, tcp_connect_accept. Everything on 127.0.0.1 with an ephemeral
// port; every socket has 2 s send/receive timeouts so nothing can hang. Errors: kIoError naming the
// socket call and the OS error.
core::Result<std::vector<Rung>> run_loopback(const LadderOptions& options);

// The measured groups of rungs, in the order kLadderGroups names them (the network floor is
// computed, not measured: analysis/network_floor.h).
inline constexpr const char* kLadderGroups[] = {"inprocess", "sqlite", "disk", "loopback"};

// Everything one ladder measured, with the context that makes it true.
struct LadderRun {
  HostContext host;
  ClockInfo clock;
  LadderOptions options;    // as used: batching from the clock, the DRAM array capped
  std::vector<Rung> rungs;  // every measured rung, sorted by median
  std::optional<SqliteLadder> sqlite;
  std::optional<DiskLadder> disk;
  std::vector<std::string> warnings;  // the host's, the memory cap's, then the disk's
};

// Measures the clock, then the `groups` asked for (names of kLadderGroups) in that order;
// `on_group` (optional) is told each group's words before it runs ("SQLite reads"). The DRAM
// array is capped at a quarter of the memory available (a power of two, at least 1 MiB), so a
// small VM is not pushed into the OOM killer by a measurement; the cap is warned about. The disk
// group's directory is checked first, so a wrong one costs nothing. Errors: those of the groups.
core::Result<LadderRun> run_ladder(const FsReader& fs, LadderOptions options,
                                   const std::vector<std::string>& groups,
                                   const std::function<void(const char*)>& on_group = {});

}  // namespace knee::probes
