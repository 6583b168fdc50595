// The subcommand seam of the knee binary: each subcommand lives in its own file under cli/,
// declares its options on a CLI11 sub-app, and runs with them. main.cc holds the table.
//
// Exit codes every subcommand follows: 0 ok; 1 a run that could not happen (target unreachable,
// OS refused); 2 bad input (one line naming the flag and the accepted form); 3 a check failed
// (--strict rate, thresholds).
// Only cli/ prints to the terminal or decides an exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace knee::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitThresholds = 3;
inline constexpr int kExitInterrupted =
    130;  // SIGINT/SIGTERM (128 + SIGINT), after what was measured

class Subcommand {
 public:
  virtual ~Subcommand() = default;
  // Declares the options on `app` (the subcommand's own CLI11 app). Called once, before parsing.
  virtual void add_options(CLI::App& app) = 0;
  // Runs with the parsed options; returns the process exit code.
  virtual int run() = 0;
};

// The flag an option field is set with ("connections" -> "-c/--connections"); the field itself
// when there is none.
std::string flag_of(const std::string& field);

// "<flag>: <message>", or the message alone when the failure names no field: a Status::what() in
// the user's terms.
std::string failure_text(const core::Status& status);

// Prints "knee: <flag>: <message>" (or "knee: <message>") to stderr and returns the exit code
// for it: 2 for bad input (kInvalidArgument), 1 for everything else.
int report_failure(const core::Status& status);
// The same as "knee <command>: ...", for a long-running command whose lines end up in logs
// beside other processes' (`knee serve` under `knee lab up`).
int report_failure(const core::Status& status, std::string_view command);

std::unique_ptr<Subcommand> make_serve_command();
std::unique_ptr<Subcommand> make_run_command();
std::unique_ptr<Subcommand> make_sweep_command();
std::unique_ptr<Subcommand> make_report_command();
std::unique_ptr<Subcommand> make_model_command();
std::unique_ptr<Subcommand> make_capacity_command();
std::unique_ptr<Subcommand> make_ladder_command();
std::unique_ptr<Subcommand> make_probe_command();
std::unique_ptr<Subcommand> make_lab_command();

}  // namespace knee::cli
