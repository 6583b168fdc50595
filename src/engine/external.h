// External benchmarks as a load source (`knee sweep --exec 'COMMAND with {N}'`): the command is
// run once per level and repeat with {N} replaced by the level, through /bin/sh -c in a process
// group of its own, while a MeasureObserver samples the host; an adapter reads the tool's
// output into a core::ExternalMeasurement.
//
// Adapters (each reads what the tool prints on stdout):
//   fio              --output-format=json (fio's HOWTO, "Normal output"/JSON): per job, read,
//                    write and trim "iops", "bw_bytes", "lat_ns" (submission to completion:
//                    mean, max, and percentiles when fio ran with --lat_percentiles=1), else
//                    "clat_ns" percentiles (completion latency: the time from submission to
//                    the device's taking it is left out); usr_cpu + sys_cpu; "job options"
//                    iodepth, numjobs, filename, ioengine. The total adds IOPS and bandwidth
//                    over jobs and directions; its mean latency is the operation-weighted mean;
//                    its percentiles are the highest job's (fio's percentiles of separate jobs
//                    cannot be merged; --group_reporting makes one job of them).
//   pgbench          its summary lines (pgbench(1), "Output"): "tps = T (without initial
//                    connection time)", "latency average = L ms", "number of clients: N",
//                    "number of threads: J", "number of failed transactions: F".
//   redis-benchmark  --csv (redis 7): "test","rps","avg_latency_ms","min_latency_ms",
//                    "p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms", one row
//                    per test. The total adds rps; latency is the rps-weighted mean and the
//                    highest p50/p99/max. In flight: -c (default 50) x -P (default 1) read from
//                    the command line.
//   json             the last line of stdout that is a JSON object: "throughput" (required, per
//                    second), "unit" (default "ops/s"), "latency_mean_ms", "latency_p50_ms",
//                    "latency_p90_ms", "latency_p99_ms", "latency_p999_ms", "latency_max_ms",
//                    "concurrency", "errors" (each optional, numbers).
// The adapter is named by --adapter, else by the command's first word (fio, pgbench,
// redis-benchmark; anything else: json).
//
// Thread-safety: the parsers are pure; run_external_level and run_external_sweep block their
// caller and use no shared state but the interrupt flag they read.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/external_run.h"
#include "core/status.h"
#include "engine/plan.h"

namespace knee::engine {

enum class Adapter { kFio, kPgbench, kRedisBenchmark, kJson };
std::string_view to_text(Adapter a);  // "fio", "pgbench", "redis-benchmark", "json"
std::optional<Adapter> adapter_named(std::string_view name);
// The adapter for a command by its first word's file name ("/usr/bin/fio --name=x" -> fio).
Adapter adapter_for(std::string_view command);

// Each returns kParseError with one line naming what was missing or malformed
// ("fio output: no jobs", "pgbench output: no 'tps = ' line").
core::Result<core::ExternalMeasurement> parse_fio_json(std::string_view out);
core::Result<core::ExternalMeasurement> parse_pgbench(std::string_view out);
// command: the command as run, for -c and -P.
core::Result<core::ExternalMeasurement> parse_redis_benchmark_csv(std::string_view out,
                                                                  std::string_view command);
core::Result<core::ExternalMeasurement> parse_json_line(std::string_view out);
core::Result<core::ExternalMeasurement> parse_external(Adapter a, std::string_view out,
                                                       std::string_view command);

// The template with every {N} replaced by `level`. A template without {N} is refused by
// check_template (kInvalidArgument naming the template).
std::string expand_level(std::string_view command_template, int level);
core::Status check_template(std::string_view command_template);

// How a command ended. Output beyond kMaxOutputBytes is dropped (stdout's tail kept for the
// adapters that read the last line), stderr keeps its last kStderrTailBytes.
struct CommandResult {
  int exit_code = -1;        // the exit status; -1 when killed by a signal or timed out
  int signal = 0;            // the signal that ended it, 0 if none
  bool timed_out = false;    // killed after `timeout`
  bool interrupted = false;  // killed because the interrupt flag was set
  std::string out;           // stdout
  std::string err_tail;      // the end of stderr
  double wall_s = 0;
  // User + system CPU of the command and its waited-for descendants, s; -1 unknown.
  double cpu_s = -1;
};
inline constexpr size_t kMaxOutputBytes = 16 << 20;
inline constexpr size_t kStderrTailBytes = 2048;

// Runs `command` with /bin/sh -c in a new process group, stdin from /dev/null, collecting
// stdout and stderr. After `timeout`, or once *interrupt is set (checked every 50 ms), the
// group gets SIGTERM and, 2 s later, SIGKILL. Once the command itself has exited, its output is
// read for 500 ms more; what it left holding stdout or stderr is then not waited for (in its
// process group it gets SIGTERM; a process that left the group with setsid is beyond reach).
// Errors: only when it could not be started (pipe, fork); a command that fails is a
// CommandResult.
core::Result<CommandResult> run_command(const std::string& command, core::Nanos timeout,
                                        const std::atomic<bool>* interrupt);

struct ExternalSweepSpec {
  std::string command_template;  // with {N}
  Adapter adapter = Adapter::kJson;
  std::vector<int> levels;  // increasing
  int repeats = 1;
  core::Nanos timeout{std::chrono::minutes(10)};  // per run of the command
};

// Callbacks of a sweep; each may be empty.
struct ExternalSweepControl {
  const std::atomic<bool>* interrupt = nullptr;
  MeasureObserver* observer = nullptr;  // started and stopped around each run
  std::function<void(int level, int repeat, const std::string& command)> on_run_start;
  std::function<void(const core::ExternalRun&)> on_run_done;
};

// levels[i][k]: repeat k of spec.levels[i], for the levels measured whole; `error` set when a
// run failed (the levels before it kept), `interrupted` when the interrupt stopped it.
struct ExternalSweepResult {
  std::vector<std::vector<core::ExternalRun>> levels;
  core::Status error;
  bool interrupted = false;
};

// One run: the command at `level`, sampled, parsed. Errors, one line naming the level and the
// command, with stderr's tail: kIoError when it could not start, exited non-zero, was killed by
// a signal or ran past the timeout; kParseError when it printed nothing the adapter could read;
// kInternal when the interrupt stopped it.
core::Result<core::ExternalRun> run_external_level(const ExternalSweepSpec& spec, int level,
                                                   const ExternalSweepControl& control);

// Every level, repeat after repeat, in order; stops at the first failure or interrupt.
ExternalSweepResult run_external_sweep(const ExternalSweepSpec& spec,
                                       const ExternalSweepControl& control);

}  // namespace knee::engine
