// What the measuring subcommands share around a measurement: the start time, the load as the
// report records it, host sampling over each measured phase, and writing the result files
// (JSON, HTML, HdrHistogram log), each opened before anything is measured so a bad path costs
// nothing.
#pragma once

#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "engine/load.h"
#include "engine/plan.h"
#include "probes/use.h"
#include "report/document.h"
#include "report/hlog.h"

namespace knee::cli {

// The current time as ISO 8601 UTC, "2026-11-29T17:52:00Z".
std::string now_iso8601();

// The report's record of the load the engine ran with.
report::LoadParams load_params(const engine::LoadOptions& o, const std::string& url_template,
                               int repeats);

// Samples the host (probes/use.h) over each run's measured phase, following the server process
// when its pid is known.
class HostObserver final : public engine::MeasureObserver {
 public:
  HostObserver(std::optional<int> server_pid, std::chrono::milliseconds every);
  void start() override { sampler_.start(server_pid_); }
  core::ResourceUse stop() override { return sampler_.stop(); }

 private:
  std::optional<int> server_pid_;
  probes::UseSampler sampler_;
};

// --server-pid PID names a running process: kInvalidArgument naming the flag otherwise.
core::Status check_server_pid(std::optional<int> pid);

// An output file named by a flag, written whole or not at all: open() creates a temporary file
// beside the path (".NAME.XXXXXX", so a bad path is found before anything is measured), the
// write goes there and is renamed over the path only once it is complete. An interrupted or
// failed command leaves the path as it was (the destructor removes the temporary file); the
// file gets the existing file's mode, or 0666 less the umask.
class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Opens `path` when it is not empty ("-" is stdout). `inputs`: the files the command reads;
  // an output that is one of them (the same file, by device and inode) is refused. Errors:
  // kInvalidArgument naming `flag`: the path is an input, a directory, or not writable.
  core::Status open(std::string_view flag, std::string path,
                    const std::vector<std::string>& inputs = {});
  bool wanted() const { return !path_.empty(); }
  // Writes `text` (to stdout for "-"), then renames it into place. Errors: kIoError naming the
  // flag and the path.
  core::Status write(const std::string& text);
  // The temporary file, for output written as it comes; commit() when it is complete.
  std::ostream& stream() { return file_; }
  // Closes the temporary file and renames it over the path. Errors: kIoError naming the flag.
  core::Status commit();

 private:
  std::string flag_;
  std::string path_;
  std::string temp_path_;  // empty once committed (or for stdout)
  std::ofstream file_;
};

// --hlog FILE written while the runs go on: each interval becomes one line of HdrHistogram's
// interval log as it completes (engine::IntervalRecord), tagged with the run it belongs to
// (report::interval_log_tag), so a run of any length holds nothing but the file; StartTime is
// the first run's measured start. The file is renamed into place by finish().
class HlogOutput {
 public:
  // Errors: those of OutputFile::open for --hlog.
  core::Status open(std::string path) { return file_.open("--hlog", std::move(path)); }
  bool wanted() const { return file_.wanted(); }
  // The run now starting: its intervals get `tag`.
  void set_tag(std::string tag) { tag_ = std::move(tag); }
  // Writes one interval; the first error is kept for finish().
  void write(const engine::IntervalRecord& record);
  // The first write error, or the file committed into place.
  core::Status finish();

 private:
  OutputFile file_;
  std::optional<report::HlogWriter> writer_;
  double start_epoch_s_ = 0;
  std::string tag_;
  core::Status error_;
};

// The whole of file `path`. Errors: kInvalidArgument "<flag>: cannot read '<path>': <why>".
core::Result<std::string> read_text_file(std::string_view flag, const std::string& path);

// The document's JSON as written to --json files and stdout: 2-space indented, one newline.
std::string json_text(const report::Document& doc);

}  // namespace knee::cli
