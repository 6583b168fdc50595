// Small helpers shared by the measuring subcommands.
#pragma once

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "engine/load.h"
#include "report/model.h"

namespace knee::cli {

// The current time as ISO 8601 UTC, "2026-11-29T17:52:00Z".
std::string now_iso8601();

// LoadParams for the report from the options the engine ran with.
report::LoadParams load_params(const engine::LoadOptions& o, const std::string& url_template);

// One run's intervals in an HdrHistogram log, under `tag` (empty: untagged).
struct TaggedRun {
  const core::RunResult* run;
  std::string tag;
};

// Writes the runs' per-second latency intervals to `path` in HdrHistogram's interval log format
// (report/hlog.h), StartTime the first run's measured start. Errors: kIoError naming the path.
core::Status write_hlog(const std::string& path, const std::vector<TaggedRun>& runs);

// Opens `path` for writing when it is not empty (an empty path leaves `file` closed), before
// anything is measured, so a bad path costs nothing. Errors: kInvalidArgument naming `flag` and
// the path.
core::Status open_output(std::string_view flag, const std::string& path, std::ofstream& file);

}  // namespace knee::cli
