// What the measuring subcommands share around a measurement (harness/): the target to follow
// (--server-pid, --stack), and the names cli/ uses for the harness's result files, host
// observer and load record.
#pragma once

#include <CLI/CLI.hpp>

#include "core/files.h"
#include "harness/load_params.h"
#include "harness/observer.h"
#include "harness/result_files.h"

namespace knee::cli {

using core::read_text_file;
using harness::FileOrStdout;
using harness::HostObserver;
using harness::json_text;
using harness::load_params;
using harness::now_iso8601;
using harness::ResultFiles;

// --server-pid PID, or --stack (with --lab-state DIR, as given to `knee lab up --state`).
struct TargetFlags : harness::TargetSpec {
  void add_to(CLI::App& app);
  // harness::resolve_target in the lab's default state folder (lab::default_state_dir()).
  core::Result<harness::WatchedTarget> resolve() const;
};

}  // namespace knee::cli
