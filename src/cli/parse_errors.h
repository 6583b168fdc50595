// CLI11's parse errors in knee's words: what was wrong, how to fix it, and where the accepted
// options are listed (`knee sweep --help`), on stderr with exit code 2.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/app.h"

namespace knee::cli {

// Prints `e` (a ParseError other than the calls for help or version, which CLI::App::exit
// prints) as one line naming the flag or value and one naming the help to read, and returns
// kExitBadInput. Rewrites CLI11's wording where knee knows better: an unknown command, a value
// out of a flag's range ("Could not convert", CLI/Error.hpp's ConversionError), and a flag of
// another command (ExtrasError: "`knee sweep` does not take --stages; it is a flag of
// `knee run`"). argc/argv as main() got them.
int report_parse_error(const CLI::ParseError& e, const KneeApp& knee_app, int argc, char** argv);

}  // namespace knee::cli
