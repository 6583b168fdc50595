#include "engine/collective.h"

#include <cstdlib>

namespace knee::engine {

using core::Status;

namespace {

bool started_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace

#ifdef KNEE_WITH_MPI
bool built_with_mpi() { return true; }
#else
bool built_with_mpi() { return false; }
#endif

core::Result<std::unique_ptr<Collective>> join_mpi_world() {
  if (!started_by_mpirun()) return std::unique_ptr<Collective>();
#ifdef KNEE_WITH_MPI
  return make_mpi_world();
#else
  return Status::invalid_argument(
      "started by mpirun, but this knee was built without MPI: install libopenmpi-dev "
      "(scripts/install-deps.sh does) and rebuild, or run knee without mpirun");
#endif
}

PlanResult run_plan_together(const Plan& plan, const PlanControl& control, Collective& group) {
  PlanControl together = control;
  bool stopped_by_gate = false;
  std::optional<Status> group_failure;
  together.gate = [&](const PlanPosition& p) -> std::optional<Status> {
    if (control.gate) {
      if (auto stop = control.gate(p)) return stop;
    }
    auto agreed = group.agree("");
    if (!agreed) {
      stopped_by_gate = true;
      return agreed.status();
    }
    if (!agreed->empty()) {
      stopped_by_gate = true;
      return Status::unavailable(*agreed);
    }
    return std::nullopt;
  };
  PlanResult result = run_plan(plan, together);
  if (!stopped_by_gate) {
    // The last word: this rank's own failure, if any, reaches the others waiting to go on (or,
    // after the last run, waiting here), and theirs reaches it.
    auto agreed = group.agree(result.failed        ? result.failed->what()
                              : result.interrupted ? std::string("interrupted")
                                                   : std::string());
    if (!agreed) {
      result.failed = agreed.status();
    } else if (!agreed->empty()) {
      result.failed = Status::unavailable(*agreed);
    }
  }
  // A rank that failed inside a level has one level fewer than those that finished it.
  if (auto common = group.min_all(static_cast<int64_t>(result.levels.size())); !common) {
    result.failed = common.status();
  } else if (static_cast<size_t>(*common) < result.levels.size()) {
    result.levels.resize(static_cast<size_t>(*common));
  }
  return result;
}

}  // namespace knee::engine
