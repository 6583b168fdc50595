// Man pages and bash completion generated from the CLI11 option table (cli/app.h), at build time
// by the knee-docgen tool (main.cc), so neither can drift from --help.
//
// Man pages are roff for man(7): knee(1) lists the subcommands, knee-SUB(1) documents one
// subcommand with every option and, where it has its own subcommands (lab, model), a subsection
// for each. Completion is a bash function for bash-completion's loader (`complete -F _knee
// knee`): subcommands, flags, and the values of enumerated flags, which come from the option
// table too (an IsMember validator, or a type name such as "uniform|poisson").
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace knee::docgen {

// The values an option accepts when they are a fixed set ({"uniform", "poisson"}); empty when
// any value goes. Read from an IsMember validator ("TEXT:{a,b}") or a type name "a|b".
std::vector<std::string> option_choices(const CLI::Option& option);

// The page of knee(1) (`sub` null) or of knee-SUB(1); `version` goes in the page footer.
std::string man_page(const CLI::App& root, const CLI::App* sub, const std::string& version);

// The bash completion script for the whole command line.
std::string bash_completion(const CLI::App& root);

}  // namespace knee::docgen
