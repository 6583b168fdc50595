#include "cli/progress.h"

namespace knee::cli {

void add_progress_flags(CLI::App& app, ProgressFlags& flags) {
  app.add_flag("-q,--quiet", flags.quiet,
               "No live progress on the terminal (there is none anyway when stderr is not a "
               "terminal); results only");
  app.add_flag("--no-color", flags.no_color,
               "No colour in the output (also NO_COLOR=1); knee prints none, the flag is accepted "
               "for scripts");
}

}  // namespace knee::cli
