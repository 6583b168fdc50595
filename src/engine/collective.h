// Processes that drive one load together: `mpirun -np K knee run|sweep ...` starts K of them
// (on this host or across a hostfile's), each drives its part of the load (part_of(options,
// rank, K)), all begin every run together, and rank 0 gathers what each measured and reports the
// exact merge (report/merge.h). This is the seam: `Collective` is what the plan needs of the
// group (rank, size, agreeing to go on, gathering bytes, clock offsets); `join_mpi_world()` gives
// the OpenMPI one (engine/mpi_world.cc, built when CMake finds MPI: KNEE_MPI), and tests can
// give their own.
//
// Failure: before each run every rank says whether it can go on (its last run's error, or
// none); when any cannot, every rank stops with the first failure, naming its rank and host
// ("rank 2 on host b: cannot connect to ..."), so no part goes on alone and nothing half
// merged is presented as whole. A rank that dies is mpirun's to notice: it ends the job
// (naming the node and rank), and rank 0 writes nothing.
//
// Thread-safety: a Collective is used by the thread that runs the plan, and every rank calls
// the same collective operations in the same order.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/plan.h"

namespace knee::engine {

// One rank's clock against rank 0's, measured by round trips (Cristian 1989, "Probabilistic
// clock synchronization"): offset = its clock at the midpoint of the fastest round trip minus
// rank 0's, error at most half that round trip.
struct ClockOffset {
  double offset_s = 0;
  double round_trip_s = 0;
};

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's machine ("vm", "loadgen-2").
  virtual std::string host() const = 0;
  // Every rank passes its failure ("" for none); every rank gets the first failure of the lowest
  // rank that has one, prefixed "rank R on host H: ", or "" when all can go on. Returns after
  // every rank has called it (a barrier). Errors: kInternal when the transport fails.
  virtual core::Result<std::string> agree(const std::string& failure) = 0;
  // Rank 0 gets every rank's bytes in rank order; the others get an empty list. Errors: kInternal.
  virtual core::Result<std::vector<std::string>> gather(const std::string& mine) = 0;
  // The smallest of every rank's value, on every rank. Errors: kInternal.
  virtual core::Result<int64_t> min_all(int64_t mine) = 0;
  // Rank 0 gets each rank's clock offset (rank 0's own is 0); the others an empty list.
  virtual core::Result<std::vector<ClockOffset>> clock_offsets() = 0;
};

// The MPI world when this process was started by mpirun (OMPI_COMM_WORLD_SIZE or PMIX_RANK in
// its environment), else nullptr: knee runs alone. Errors: kInvalidArgument when started by
// mpirun but built without MPI (the message says how to build with it); kInternal when MPI
// cannot start.
core::Result<std::unique_ptr<Collective>> join_mpi_world();

// Whether this knee was built with MPI support.
bool built_with_mpi();
// The MPI world itself (engine/mpi_world.cc, only in builds with MPI): MPI_Init, then
// MPI_COMM_WORLD with errors returned. Errors: kInternal when MPI cannot start.
core::Result<std::unique_ptr<Collective>> make_mpi_world();

// Runs `plan` on every rank of `group` together: before each run all ranks agree to go on (and
// leave together), and after the plan every rank agrees once more, so a failure anywhere ends
// the plan everywhere, with the failing rank and host in PlanResult::failed (kUnavailable), and
// an interruption anywhere ends it as interrupted (PlanResult::interrupted) everywhere; the
// gate is its own (control.gate is not called); the
// levels every rank finished before it are kept (the same number on every rank). `plan` is this
// rank's part already (part_of).
PlanResult run_plan_together(const Plan& plan, const PlanControl& control, Collective& group);

}  // namespace knee::engine
