// knee-docgen: writes knee's man pages and bash completion from its option table (docgen/docgen.h).
// Run by the build (src/docgen/CMakeLists.txt), not installed.
//   knee-docgen MANDIR COMPLETION   writes MANDIR/knee.1, MANDIR/knee-SUB.1 for each subcommand,
//                                   and the bash completion script to the file COMPLETION; each
//                                   file whole or not at all. Exit 1 when one cannot be written.
#include <fmt/core.h>

#include <cstdio>
#include <string>

#include "cli/app.h"
#include "core/files.h"
#include "core/version.h"
#include "docgen/docgen.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: knee-docgen MANDIR COMPLETION_FILE\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::string completion = argv[2];
  const auto app = knee::cli::make_app();
  const std::string version = knee::core::version_string();
  auto write = [&](const std::string& path, const std::string& text) {
    knee::core::OutputFile file;
    knee::core::Status st = file.open("knee-docgen", path);
    if (st) st = file.write(text);
    if (!st) fmt::print(stderr, "knee-docgen: {}\n", st.message());
    return static_cast<bool>(st);
  };
  bool ok = write(dir + "/knee.1", knee::docgen::man_page(app->cli, nullptr, version));
  for (const CLI::App* sub : app->subs) {
    ok = write(dir + "/knee-" + sub->get_name() + ".1",
               knee::docgen::man_page(app->cli, sub, version)) &&
         ok;
  }
  ok = write(completion, knee::docgen::bash_completion(app->cli)) && ok;
  return ok ? 0 : 1;
}
