// `knee model sim`'s flags and run: the Traffic Lab page (report/sim.h), written whole to -o.
// A part of `knee model` (cli/model_command.cc adds it as a sub-subcommand).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "report/sim.h"

namespace knee::cli {

class ModelSimFlags {
 public:
  // Adds `sim` with its flags to `model`.
  void add_to(CLI::App& model);
  bool parsed() const { return app_ != nullptr && app_->parsed(); }
  // Validates (exit 2 naming the flag), reads --from, writes the page; the exit code.
  int run();

 private:
  CLI::App* app_ = nullptr;
  std::string output_;
  std::optional<std::string> from_, service_time_, delay_;
  std::optional<double> rate_rps_;
  std::optional<int> workers_, concurrency_;
  report::SimSettings settings_;
};

}  // namespace knee::cli
