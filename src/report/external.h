// An external benchmark's sweep (`knee sweep --exec`): from the runs engine/external.h measured
// to an ExternalSweepDocument (the knee, Little's law, USL, the limit of each level), and its
// text.
//
// The analysis is the HTTP sweep's, on the tool's own figures (seed 004's fio table): the knee
// by analysis::find_knee on (N, throughput, p99; the mean latency where the tool gives no p99),
// Little's law N = X * mean R with the N the tool kept in flight (fio iodepth x numjobs, pgbench
// clients, redis-benchmark -c x -P), the USL fit on (N, throughput), and each level's limit by
// analysis::name_external_limit. The knee's `saturated` is the verdict of the level after the
// knee, where going deeper stopped paying (the knee's own level still gained).
//
// Pure functions of their inputs. Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/external_run.h"
#include "probes/host_context.h"
#include "report/document.h"

namespace knee::report {

// What the sweep was, as asked, and where its files are.
struct ExternalSweepSetup {
  std::string command;  // the template, with {N}
  std::string adapter;  // fio, pgbench, redis-benchmark, json
  std::string started_at;
  int repeats = 1;
  double timeout_s = 0;
  std::optional<std::string> device;   // the block device behind the files
  std::optional<std::string> fs_type;  // their filesystem
  bool files_in_memory = false;        // tmpfs or ramfs
  std::optional<std::string> failed;   // the error that stopped the sweep
  bool interrupted = false;
};

// The levels, each a list of repeats, in increasing N. Levels may be empty (nothing measured).
ExternalSweepDocument analyse_external_sweep(
    ExternalSweepSetup setup, const std::vector<std::vector<core::ExternalRun>>& levels,
    const probes::HostContext& host);

// The name of the level in the texts: the option the template puts {N} into ("--iodepth={N}":
// "iodepth"; "-c {N}": "clients"), else "level".
std::string level_name_of(const std::string& command_template);

// The table, one row per level, then the knee, USL, limits and warnings.
std::string render_external_sweep_text(const ExternalSweepDocument& d);

// One run in a line, as it finishes ("iodepth 16: 41234 IOPS, mean 0.39 ms, p99 1.20 ms (5.1 s)").
std::string external_live_line(const std::string& level_name, const core::ExternalRun& run);

}  // namespace knee::report
