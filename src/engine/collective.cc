#include "engine/collective.h"

#include <cstdlib>
#include <string_view>

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

// What a rank that was interrupted tells the others: they stop too, as interrupted, not failed.
constexpr std::string_view kInterrupted = "interrupted by a signal";

PlanResult run_plan_together(const Plan& plan, const PlanControl& control, Collective& group) {
  PlanControl together = control;
  bool stopped_by_gate = false;
  bool interrupted_elsewhere = false;
  // Another rank's word, as this rank's result: an interruption or a failure.
  auto heard = [&](const std::string& agreed) -> std::optional<Status> {
    if (agreed.empty()) return std::nullopt;
    if (agreed.ends_with(kInterrupted)) interrupted_elsewhere = true;
    return Status::unavailable(agreed);
  };
  together.gate = [&](const PlanPosition&) -> std::optional<Status> {
    auto agreed = group.agree("");
    if (!agreed) {
      stopped_by_gate = true;
      return agreed.status();
    }
    auto stop = heard(*agreed);
    stopped_by_gate = stop.has_value();
    return stop;
  };
  PlanResult result = run_plan(plan, together);
  if (!stopped_by_gate) {
    // The last word: this rank's own failure or interruption, if any, reaches the others waiting
    // to go on (or, after the last run, waiting here), and theirs reaches it.
    auto agreed = group.agree(result.failed        ? result.failed->what()
                              : result.interrupted ? std::string(kInterrupted)
                                                   : std::string());
    if (!agreed) {
      result.failed = agreed.status();
    } else if (auto stop = heard(*agreed)) {
      result.failed = std::move(stop);
    }
  }
  if (interrupted_elsewhere && result.failed && result.failed->what().ends_with(kInterrupted)) {
    result.failed.reset();
    result.interrupted = true;
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
