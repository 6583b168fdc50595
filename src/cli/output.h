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
  // Writes the runs' per-second latency intervals, [level][repeat], in HdrHistogram's interval
  // log format (report::write_levels_log), then renames it into place.
  core::Status write_hlog(const std::vector<std::vector<core::RunResult>>& levels, bool sweep);

 private:
  // Closes the temporary file and renames it over path_.
  core::Status commit();

  std::string flag_;
  std::string path_;
  std::string temp_path_;  // empty once committed (or for stdout)
  std::ofstream file_;
};

// The whole of file `path`. Errors: kInvalidArgument "<flag>: cannot read '<path>': <why>".
core::Result<std::string> read_text_file(std::string_view flag, const std::string& path);

// The document's JSON as written to --json files and stdout: 2-space indented, one newline.
std::string json_text(const report::Document& doc);

}  // namespace knee::cli
