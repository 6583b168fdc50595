// The result files a measuring command writes (--json, --html, --hlog), each opened before
// anything is measured so a bad path costs nothing, and written whole or not at all
// (core::OutputFile); "-" is stdout for --json and --html.
//
// Decision: these write to stdout themselves (the text, or --json -), the one place below cli/
// that does (with the progress line, progress.h). Every measuring command writes the same way,
// and a stream handed in would carry one value, stdout, at every call.
//
// Thread-safety: none; one command's thread (HlogOutput::write is called on the thread that runs
// the plan, engine::PlanControl::on_interval).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/files.h"
#include "core/status.h"
#include "engine/intervals.h"
#include "engine/plan.h"
#include "report/document.h"
#include "report/hlog.h"

namespace knee::harness {

// The paths of run's and sweep's result files: json "" not asked, "-" stdout, else a file.
struct OutputPaths {
  std::string json;
  std::string html;
  std::string hlog;
  std::string json_parts;  // under mpirun, each rank's own result too: PREFIX.RANK.json
  // Files the command reads (engine::LoadSpec::input_files): none of the outputs may be one.
  std::vector<std::string> inputs;
  // Whether a file that keeps per-second figures is asked for (json, html, hlog).
  bool per_second() const { return !json.empty() || !html.empty() || !hlog.empty(); }
};

// An output file named by a flag (core::OutputFile: written whole or not at all), or stdout
// for "-".
class FileOrStdout {
 public:
  // Errors: those of core::OutputFile::open.
  core::Status open(std::string_view flag, std::string path,
                    const std::vector<std::string>& inputs = {});
  bool wanted() const { return to_stdout_ || file_.wanted(); }
  // Writes `text` to stdout, or the whole file. Errors: those of core::OutputFile::write.
  core::Status write(const std::string& text);
  std::ostream& stream() { return file_.stream(); }  // a file's temporary stream (not stdout)
  core::Status commit() { return file_.commit(); }
  void discard() { file_.discard(); }

 private:
  bool to_stdout_ = false;
  core::OutputFile file_;
};

// --hlog FILE written while the runs go on: each interval becomes one line of HdrHistogram's
// interval log as it completes (engine::IntervalRecord), tagged with the run it belongs to
// (report::interval_log_tag), so a run of any length holds nothing but the file; StartTime is
// the first run's measured start. The file is renamed into place by finish().
class HlogOutput {
 public:
  // Errors: those of core::OutputFile::open for --hlog (one of `inputs` among them); "-" (the
  // log goes to a file, the text to stdout).
  core::Status open(std::string path, const std::vector<std::string>& inputs = {});
  bool wanted() const { return file_.wanted(); }
  // The run now starting: its intervals get `tag`.
  void set_tag(std::string tag) { tag_ = std::move(tag); }
  // Writes one interval; the first error is kept for finish().
  void write(const engine::IntervalRecord& record);
  // The first write error, or the file committed into place.
  core::Status finish();

 private:
  core::OutputFile file_;
  std::optional<report::HlogWriter> writer_;
  double start_epoch_s_ = 0;
  std::string tag_;
  core::Status error_;
};

// The result files of run and sweep (--json, --html, --hlog), opened together before anything
// is measured and written together after it.
class ResultFiles {
 public:
  // Errors (kInvalidArgument naming both flags): two of them naming the same file, or --json
  // and --html both "-" (one stdout); else the first that cannot be opened or is one of
  // paths.inputs (FileOrStdout::open).
  core::Status open(const OutputPaths& paths);
  // Whether per-second data is needed (every one of the three charts or logs it).
  bool per_second() const { return json.wanted() || html.wanted() || hlog.wanted(); }
  // Sends completed intervals to the --hlog file, when one is wanted: `control` keeps a pointer
  // to this, which must outlive the plan's run.
  void connect(engine::PlanControl& control);
  // Commits --hlog, prints `text` on stdout unless the JSON or the HTML goes there, writes the
  // JSON and, for a run or a sweep, the HTML. Errors: the first file that could not be written.
  core::Status write(const report::Document& doc, const std::string& text);
  // Removes the --json and --html temporaries (checked by open(); open again when the result is
  // ready: mpirun, where a rank's death kills rank 0 before it writes).
  void discard() {
    json.discard();
    html.discard();
  }

  FileOrStdout json, html;
  HlogOutput hlog;

 private:
  bool document_to_stdout_ = false;  // --json - or --html -: the text is not printed
};

// The document's JSON as written to --json files and stdout: 2-space indented, one newline.
std::string json_text(const report::Document& doc);

}  // namespace knee::harness
