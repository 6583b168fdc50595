#include "cli/report_inputs.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "core/files.h"

namespace knee::cli {

using core::Status;

Status check_report_inputs(const std::vector<std::string>& files, const std::string& output) {
  if (files.front() == "compare" || files.front() == "diff") {  // a new user's guess
    return Status::invalid_argument(fmt::format(
        "report: there is no '{}' word; give the two results: knee report a.json b.json",
        files.front()));
  }
  // Regression (a new user's trial): `knee report DIR` said DIR was "not an .hlog file".
  for (const std::string& f : files) {
    std::error_code ec;
    if (std::filesystem::is_directory(f, ec)) {
      return Status::invalid_argument(fmt::format(
          "report: '{}' is a folder; give the files in it (knee report {}/*.hlog, or a.json "
          "[b.json])",
          f, f));
    }
  }
  const bool all_json = std::all_of(files.begin(), files.end(),
                                    [](const std::string& f) { return f.ends_with(".json"); });
  // Regressions (a new user's trial): -o y.json wrote HTML; -o with logs said to give logs.
  if (!output.empty() && (!all_json || (output != "-" && !output.ends_with(".html")))) {
    return Status::invalid_argument(
        !all_json ? "-o: knee report writes HTML from JSON results only; for .hlog logs leave -o "
                    "out (the summary prints on stdout, as JSON with --json)"
                  : fmt::format("-o: '{}' is not an .html name; knee report -o writes HTML "
                                "(merge writes JSON: knee report merge a.json ... -o all.json)",
                                output));
  }
  // Regression (a new user's trial): `knee report r.json --json r.json` (--json takes no file)
  // compared the file with itself without a word, where two logs given twice are refused.
  if (all_json && files.size() == 2 && core::same_file(files[0], files[1])) {
    return Status::invalid_argument(fmt::format(
        "report: '{}' is given twice: compared with itself it shows no difference; give two "
        "results (a.json b.json), or one to re-render it (--json prints it as JSON on stdout: "
        "it takes no file)",
        files[1]));
  }
  return Status::success();
}

}  // namespace knee::cli
