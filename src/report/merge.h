// `knee report merge`: results that separate processes wrote of one load, each driving its part
// of it (`--part I/K`, one pod of a Kubernetes Indexed Job, or a knee started by hand on
// another load host), merged into the result of the whole load, exactly: every repeat's record
// (report/record.h) is merged with core::merge_parts (counts add, histograms merge), then the
// merged runs go through the same analysis as a single process's (knee, Little's law with the
// total N, USL, verdicts), and each level keeps a table of its parts (throughput, errors, client
// CPU, start offset and verdict per host).
//
// What must agree, else kInvalidArgument naming the file: every document is a run, or every one
// a sweep; same URL and settings (LoadParams but part and threads), mode, number of levels and
// repeats; measured phases that overlap (a part that began after the first part's phase ended is
// of another run); every level holds a record per repeat
// (files of knee before records cannot merge); with --part, the same count in all and every
// index exactly once (a missing part is named: a half-merged result is never written as whole).
// The same part given twice (its records equal) is refused too.
//
// The merged document's host figures are the first part's; its params are the first part's with
// `part` cleared and `merged_from` set; started_at is the earliest part's.
// Pure functions. Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "report/document.h"

namespace knee::report {

struct MergePart {
  std::string source;  // the file name (or "rank N"), for errors and the parts table
  Document doc;
  // Its machine's clock minus the first part's, s, when measured (MPI ranks: engine::ClockOffset);
  // start offsets are then on one clock. Empty: each machine's own clock (separate processes).
  std::optional<double> clock_offset_s = std::nullopt;
};

// The merged run or sweep, as a Document holding a RunDocument or a SweepDocument. At least two
// parts (one part of a --part split is refused naming the missing ones). Errors: see above, one
// line naming the source.
core::Result<Document> merge_documents(const std::vector<MergePart>& parts);

}  // namespace knee::report
