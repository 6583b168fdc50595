// `mpirun -np K knee run|sweep ...`: the exit codes of harness::Distributed (harness/
// distributed.h), which joins the ranks, runs the plan on all of them and merges their results
// on rank 0.
#pragma once

#include <optional>
#include <variant>

#include "cli/command.h"
#include "harness/distributed.h"

namespace knee::cli {

using harness::Distributed;

// report_failure(), printed by rank 0 only (every rank has the same agreed failure); exit 1
// elsewhere.
inline int fail_agreed(const Distributed& group, const core::Status& status) {
  return group.root() ? report_failure(status) : kExitRunFailed;
}

// Distributed::merge() for a command's document: on rank 0 (or alone) `doc` becomes the merged
// one, `files` are opened again (Distributed::reopen) and the result is nullopt; on other ranks,
// or when merging or opening fails (printed), the exit code to leave with (`failed`: this run
// failed, exit 1).
template <class Doc>
std::optional<int> take_merged(Distributed& group, Doc& doc, bool failed,
                               harness::ResultFiles& files) {
  if (!group.active()) return std::nullopt;
  auto merged = group.merge(report::Document(doc));
  if (!merged) return report_failure(merged.status());
  if (!*merged) return failed ? kExitRunFailed : kExitOk;
  doc = std::get<Doc>(std::move(**merged));
  if (core::Status s = group.reopen(files); !s) return report_failure(s);
  return std::nullopt;
}

}  // namespace knee::cli
