// --quiet and --no-color: how much of harness::Progress (harness/progress.h) the terminal gets.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/progress.h"

namespace knee::cli {

struct ProgressFlags : harness::ProgressOptions {
  bool no_color = false;  // --no-color (knee prints no colour anyway)
};
using harness::Progress;

// Declares --quiet and --no-color on `app`.
void add_progress_flags(CLI::App& app, ProgressFlags& flags);

}  // namespace knee::cli
