// `mpirun -np K knee run|sweep ...`: the command's side of engine/collective.h. Each rank drives
// its part of the plan (engine::part_of by rank), the plan runs on all ranks together, and each
// rank's result document goes to rank 0, which merges them exactly (report/merge.h, with the
// measured clock offsets) and alone prints and writes. Without mpirun every call is a no-op and
// knee runs alone.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/status.h"
#include "engine/collective.h"
#include "engine/load_spec.h"
#include "harness/result_files.h"
#include "report/document.h"

namespace knee::harness {

class Distributed {
 public:
  // Joins the MPI world when started by mpirun, and keeps `outputs` with load's input files
  // (no result file may replace one). Its checks are of the flags, the same on every rank. Errors:
  // started by mpirun without MPI support, --part or --hlog under mpirun,
  // --json-parts without it (kInvalidArgument), MPI failing.
  core::Status join(const engine::LoadSpec& load, const OutputPaths& outputs);
  // A rank's whole setup: its part of `plan` (take_part), `files` opened on rank 0 or alone (the
  // other ranks open none) and, under mpirun, discarded again until the merged result is ready
  // (reopen), then ready(). Errors: the first of those that failed, on any rank.
  // `now_epoch_s` is the wall clock that a relative --start-at (+30s) counts from.
  core::Status prepare(const engine::LoadSpec& load, engine::Plan& plan, bool shared_target,
                       double now_epoch_s, ResultFiles& files);
  bool active() const { return group_ != nullptr; }
  // Rank 0, or the process running alone: the one that prints and writes.
  bool root() const { return group_ == nullptr || group_->rank() == 0; }
  // engine::run_plan, or engine::run_plan_together under mpirun.
  engine::PlanResult run(const engine::Plan& plan, const engine::PlanControl& control);
  // Every rank's document (a run or a sweep) to rank 0, merged there into the whole load's;
  // alone, `mine` itself. Other ranks get nullopt. A sweep's levels are cut to those every rank
  // finished. Errors: the gather failing, or a part that cannot merge (report::merge_documents).
  core::Result<std::optional<report::Document>> merge(const report::Document& mine);
  // Under mpirun, `files` (opened by rank 0 to check its paths, then discarded) are opened
  // again on rank 0, once the merged result is ready to be written. Errors: those of
  // ResultFiles::open.
  core::Status reopen(ResultFiles& files) const { return files.open(outputs_); }

 private:
  // This process's part of every level of `plan`: under mpirun its rank's (engine::split_plan),
  // else the load's --part and --start-at (engine::LoadSpec::part_options). Errors
  // (kInvalidArgument): a part of a target that is not `shared_target` (sweep's built-in server is
  // each process's own); "mpirun -np 4: 2 connections cannot be split over 4 parts: ..."; those
  // of part_options.
  core::Status take_part(const engine::LoadSpec& load, engine::Plan& plan, bool shared_target,
                         double now_epoch_s) const;
  // After each rank's own setup (`local`: its plan split, its files opened): every rank learns of
  // any rank's failure (so none waits for the others in vain), rank 0 checks that the
  // --json-parts files can be written, and the clocks are measured. Returns `local` when it
  // failed, else another rank's failure ("rank 2 on host b: ...", kInvalidArgument), else ok.
  // Alone: `local`.
  core::Status ready(core::Status local);
  std::unique_ptr<engine::Collective> group_;
  std::vector<engine::ClockOffset> offsets_;
  OutputPaths outputs_;  // the result files, opened by rank 0 only (under mpirun: once merged)
  std::vector<std::string> part_paths_;  // --json-parts, on rank 0
};

}  // namespace knee::harness
