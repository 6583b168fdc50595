// ExternalRun: what one run of an external benchmark measured (`knee sweep --exec`: fio,
// pgbench, redis-benchmark, or a command that prints one JSON object), as its adapter read the
// tool's own output (engine/external.h), with what knee saw of the command (wall time, its CPU
// from wait4's rusage) and of the host while it ran (ResourceUse). The knee, Little's law, USL
// and the saturated resource are computed from these by report/analyse_external.h.
//
// Units: throughput is per second in the tool's own unit (`unit`: "IOPS", "tps", "ops/s"), never
// converted; bandwidth bytes per second; latencies ns; CPU % of one core. Unknown figures are NaN
// (kUnknown, core/resource_use.h).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/resource_use.h"

namespace knee::core {

// One job of the tool (a fio job, a redis-benchmark test) or the run's total.
struct ExternalFigures {
  std::string name;                         // the job's or test's name; "" for the total
  double throughput = kUnknown;             // operations per second, in ExternalMeasurement::unit
  double bandwidth_bytes_per_s = kUnknown;  // fio: read + write + trim bytes per second
  double latency_mean_ns = kUnknown;        // from submission to completion
  double latency_p50_ns = kUnknown;
  double latency_p90_ns = kUnknown;
  double latency_p99_ns = kUnknown;
  double latency_p999_ns = kUnknown;
  double latency_max_ns = kUnknown;
  // Operations the tool kept in flight (Little's N): fio iodepth x numjobs, pgbench's clients,
  // redis-benchmark's -c x -P.
  double in_flight = kUnknown;
  double cpu_pct =
      kUnknown;         // the tool's own CPU for this job (fio usr_cpu + sys_cpu), % of a core
  uint64_t errors = 0;  // failed operations or transactions, as the tool counts them
};

// What the adapter read from the tool's output.
struct ExternalMeasurement {
  std::string unit;       // "IOPS", "tps", "ops/s", or the generic adapter's "unit"
  ExternalFigures total;  // the run: throughput summed over jobs; latency of all of them
  std::vector<ExternalFigures> jobs;  // each job or test, when the tool reports several
  double runtime_s = kUnknown;        // the tool's own measured time
  int threads = 0;                    // the tool's threads or processes doing the work; 0 unknown
  std::vector<std::string> files;     // fio: the files the jobs read or wrote
  std::vector<std::string> notes;     // what the adapter noticed ("iodepth > 1 with psync")
};

// One run of the command at one level.
struct ExternalRun {
  int level = 0;        // the N put into {N}
  std::string command;  // as run, {N} replaced
  double wall_s = 0;    // from start to exit
  // The command's CPU (user + system of it and every descendant it waited for, wait4's rusage)
  // over wall time, in cores.
  double tool_cpu_cores = kUnknown;
  ExternalMeasurement measured;
  std::optional<ResourceUse> use;  // the host while it ran; empty when not sampled
};

}  // namespace knee::core
