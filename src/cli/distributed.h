// `mpirun -np K knee run|sweep ...`: the command's side of engine/collective.h. Each rank drives
// its part of the plan (engine::part_of by rank), the plan runs on all ranks together, and each
// rank's result document goes to rank 0, which merges them exactly (report/merge.h, with the
// measured clock offsets) and alone prints and writes. Without mpirun every call is a no-op and
// knee runs alone.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "cli/command.h"
#include "cli/load_flags.h"
#include "cli/output.h"
#include "core/status.h"
#include "engine/collective.h"
#include "report/document.h"

namespace knee::cli {

class Distributed {
 public:
  // Joins the MPI world when started by mpirun. Its checks are of the flags, the same on every
  // rank. Errors: started by mpirun without MPI support, --part or --hlog under mpirun,
  // --json-parts without it (kInvalidArgument), MPI failing.
  core::Status join(const LoadFlags& flags, const OutputFlags& outputs);
  // After each rank's own setup (`local`: its plan split, its files opened): every rank learns of
  // any rank's failure (so none waits for the others in vain), rank 0 checks that the
  // --json-parts files can be written, and the clocks are measured. Returns `local` when it
  // failed, else another rank's failure ("rank 2 on host b: ...", kInvalidArgument), else ok.
  // Alone: `local`.
  core::Status ready(core::Status local);
  bool active() const { return group_ != nullptr; }
  // Rank 0, or the process running alone: the one that prints and writes.
  bool root() const { return group_ == nullptr || group_->rank() == 0; }
  // This rank's part of every level of `plan` (engine::split_plan). Errors: kInvalidArgument,
  // "mpirun -np 4: 2 connections cannot be split over 4 parts: ...".
  core::Status split(engine::Plan& plan) const;
  // engine::run_plan, or engine::run_plan_together under mpirun.
  engine::PlanResult run(const engine::Plan& plan, const engine::PlanControl& control);
  // Every rank's document (a run or a sweep) to rank 0, merged there into the whole load's;
  // alone, `mine` itself. Other ranks get nullopt. A sweep's levels are cut to those every rank
  // finished. Errors: the gather failing, or a part that cannot merge (report::merge_documents).
  core::Result<std::optional<report::Document>> merge(const report::Document& mine);
  // report_failure(), printed by rank 0 only (every rank has the same agreed failure).
  int fail(const core::Status& status) const {
    return root() ? report_failure(status) : kExitRunFailed;
  }
  // merge() for a command's document: on rank 0 (or alone) `doc` becomes the merged one and the
  // result is nullopt; on other ranks (or when merging fails, printed) the exit code to leave
  // with.
  // Under mpirun `files` (opened, then discarded at the start) are opened again on rank 0 here,
  // once the merged result is ready.
  template <class Doc>
  std::optional<int> finish(Doc& doc, bool failed, ResultFiles& files) {
    if (!group_) return std::nullopt;
    auto merged = merge(report::Document(doc));
    if (!merged) return report_failure(merged.status());
    if (!*merged) return failed ? kExitRunFailed : kExitOk;
    doc = std::get<Doc>(std::move(**merged));
    if (core::Status s = files.open(outputs_); !s) return report_failure(s);
    return std::nullopt;
  }

 private:
  std::unique_ptr<engine::Collective> group_;
  std::vector<engine::ClockOffset> offsets_;
  OutputFlags outputs_;                  // rank 0's result files, opened once the merge is ready
  std::vector<std::string> part_paths_;  // --json-parts, on rank 0
};

}  // namespace knee::cli
