// `knee sweep --exec 'COMMAND with {N}'`: an external benchmark (fio, pgbench, redis-benchmark,
// or a command printing one JSON object) run once per level and repeat, the host sampled while
// it runs, analysed as an HTTP sweep is (report/external.h). Flags here; the runner is
// engine/external.h.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/load_flags.h"
#include "cli/output.h"
#include "cli/progress.h"

namespace knee::cli {

struct ExecSweepFlags {
  std::string command;  // --exec; "" for an HTTP sweep
  std::string adapter;  // --adapter; "" by the command's first word

  void add_to(CLI::App& app);
  // --exec was on the command line (an empty command is refused later, not an HTTP sweep).
  bool given(const CLI::App& app) const { return app.count("--exec") > 0; }
  // For an HTTP sweep: --adapter without --exec is refused (kInvalidArgument).
  static core::Status check_unused(const CLI::App& app) {
    if (app.count("--adapter") == 0) return core::Status::success();
    return core::Status::invalid_argument(
        "--adapter: only with --exec 'COMMAND with {N}' (an HTTP sweep reads its own responses)");
  }
};

// What the exec sweep shares with the HTTP sweep's flags.
struct ExecSweepContext {
  const CLI::App* app = nullptr;
  std::string levels;
  int repeats = 1;
  std::string timeout;  // --timeout when given; "" for the default (10 minutes)
  std::string sample_every;
  const OutputFlags* outputs = nullptr;
  const TargetFlags* target = nullptr;
  const ProgressFlags* progress = nullptr;
};

// Runs the sweep, prints and writes the report; returns the exit code. Flags an HTTP sweep has
// that mean nothing here (a URL, --rate, -c, the built-in server's, --stack, --threshold) are
// refused, exit 2.
int run_exec_sweep(const ExecSweepFlags& flags, const ExecSweepContext& context);

}  // namespace knee::cli
