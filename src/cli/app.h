// The knee command line as one CLI::App: every subcommand with its options, built the same way
// for the binary (main.cc) and for the generators of its man pages and bash completion
// (docgen/docgen.h), so `man knee-sweep` and tab completion cannot drift from `knee sweep --help`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <vector>

#include "cli/command.h"

namespace knee::cli {

struct KneeApp {
  CLI::App cli{"knee: finds where a server saturates, and says which resource did it"};
  std::vector<std::unique_ptr<Subcommand>> commands;  // commands[i] runs subs[i]
  std::vector<CLI::App*> subs;
};

// The app with every subcommand's options declared and --version set; not parsed yet.
std::unique_ptr<KneeApp> make_app();

}  // namespace knee::cli
