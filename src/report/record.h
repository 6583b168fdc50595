// The exact record of a run: every count, histogram and host figure of a core::RunResult, kept
// in each level of a saved run or sweep (`records`, one per repeat) so that results measured by
// separate processes merge exactly (`knee report merge`, core::merge_parts), where the summaries
// beside them (percentiles) cannot be added.
//
// Layout: a JSON object whose keys are the C++ member names of core::RunResult, core::RunStats
// and the structs they hold (docs/output.md, "records"). Histograms are objects
//   {"hdr": base64 of the compressed HdrHistogram V2 encoding (report/hlog.h), "min": ns,
//    "max": ns, "clamped": count}
// because V2 keeps the counters but not the exact min and max. Unknown host figures (NaN in
// core::ResourceUse) are null. Status counts are an object by code ("200": n), zeros left out.
//
// Equality compares the JSON texts (NaN figures make member-wise == false on a copy of itself).
// Thread-safety: plain values.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/run_stats.h"
#include "core/status.h"

namespace knee::report {

struct RunRecord {
  core::RunResult result;
  std::string host;  // the hostname of the machine whose process measured it
  // The part this process drove of a load split over `parts` processes (--part or the rank,
  // from 0); 0 of 1 for a whole run. Kept with the record so that a record read alone still says
  // what it is a part of.
  int part = 0;
  int parts = 1;
  bool operator==(const RunRecord& o) const;
};

// The record as JSON, and back. from_json_value fails (false) on a missing or mistyped member,
// an undecodable histogram, or min/max outside its counters (core::Histogram::restore_extremes).
nlohmann::json to_json_value(const RunRecord& r);
bool from_json_value(const nlohmann::json& j, RunRecord& r);

// One line of JSON text, and back (for exchanging a record between processes). Errors:
// kParseError saying where the text or record was wrong.
std::string encode_record(const RunRecord& r);
core::Result<RunRecord> decode_record(std::string_view text);

}  // namespace knee::report
