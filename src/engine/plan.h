// The plan runner: every measuring command's loop over levels x repeats x scenarios, in one
// place. `knee run` is one level of one scenario, repeated; `knee sweep` many levels of one
// scenario; `knee run --scenario ...` one level of several scenarios run at once (the
// interference experiment of seed 002, section 2.2).
//
// Order: level by level; within a level, repeat by repeat; within a repeat, every scenario at
// once, each on its own thread calling run_load() with the same phases (they start within a few
// milliseconds of each other, each first checking that its target is reachable, and end
// together). A failure of one scenario ends the others of that step early.
//
// Stopping: the interrupt flag ends the current runs early (marked interrupted) and the plan
// after them; a run that fails (its target unreachable, the OS refusing) ends the plan. Levels
// finished before either are kept in the result, the unfinished level is left out.
//
// Hooks run on the calling thread, except the measure hooks, which run on the thread of
// scenario 0's run (the calling thread when there is one scenario); all must return quickly.
// Thread-safety: run_plan() blocks and owns the threads it starts.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/resource_use.h"
#include "core/run_stats.h"
#include "core/status.h"
#include "engine/live.h"
#include "engine/load.h"

namespace knee::engine {

struct Plan {
  // levels[l][s]: the load of scenario s at level l; every level has the same scenarios (>= 1).
  std::vector<std::vector<LoadOptions>> levels;
  int repeats = 1;  // runs per level, >= 1
  // Names of the scenarios, for errors ("scenario fast: cannot reach ..."); may be empty.
  std::vector<std::string> scenario_names;
  // --start-at: run k of the plan (levels x repeats, from 0) begins at the wall-clock time
  // start_at_epoch_s + k * run_slot_s (seconds since the Unix epoch), so that processes started
  // apart (parts of one load on several machines) run each level together; run_slot_s is the
  // longest run's warm-up + measured phase + grace, plus 2 s for connecting, rounded up to a
  // whole second (plan_run_slot_s). A run that is due already starts at once. Empty: no waiting.
  std::optional<double> start_at_epoch_s;
  double run_slot_s = 0;
};

// The slot each run of `plan` gets under --start-at (Plan::run_slot_s), seconds.
double plan_run_slot_s(const Plan& plan);

// Every level's options of `plan` made part `index` of `count` (part_of). Errors: part_of's.
core::Status split_plan(Plan& plan, int index, int count);

// Every load of `plan` sent to `url` instead (a target known only once the plan is built, such as
// a child server's port); `verify_tls` false for a server whose certificate knee made itself.
void aim_plan(Plan& plan, const http::Url& url, bool verify_tls);

// Where the plan is: level l of n, repeat k of K (from 0), and the planned time (warm-up plus
// measured phase) of this run and of the runs still to come after it.
struct PlanPosition {
  size_t level = 0;
  size_t levels = 0;
  int repeat = 0;
  int repeats = 0;
  core::Nanos planned{0};
  core::Nanos after{0};
};

// Samples the host over a run's measured phase (harness::HostObserver, harness/observer.h, over
// probes/use.h).
class MeasureObserver {
 public:
  virtual ~MeasureObserver() = default;
  virtual void start() = 0;
  // The figures of the window since start().
  virtual core::ResourceUse stop() = 0;
};

struct PlanControl {
  const core::ClockSource* clock = &core::steady_clock_source();
  const std::atomic<bool>* interrupt = nullptr;
  // Sampled over scenario 0's measured phase of every run, into its RunResult::use; none when
  // null.
  MeasureObserver* observer = nullptr;
  // Before each run (a step of every scenario).
  std::function<void(const PlanPosition&)> on_run_start;
  // Live progress of scenario 0's run (engine/live.h).
  std::function<void(const LiveSnapshot&)> on_progress;
  // After each finished level: its results, [scenario][repeat].
  std::function<void(size_t level, const std::vector<std::vector<core::RunResult>>&)> on_level_done;
  // Each completed interval of scenario 0's run, as it completes (RunControl::on_interval).
  std::function<void(const IntervalRecord&)> on_interval;
  // Just before each run (after on_run_start and any --start-at wait): a Status ends the plan
  // there, as PlanResult::failed, without running it (engine/collective.h: another rank failed).
  std::function<std::optional<core::Status>(const PlanPosition&)> gate;
};

struct PlanResult {
  // [level][scenario][repeat] for the levels that finished, in order.
  std::vector<std::vector<std::vector<core::RunResult>>> levels;
  bool interrupted = false;
  // Why the plan ended early: the first failing run's error (in scenario order), with
  // "scenario NAME" as context when the plan names its scenarios.
  std::optional<core::Status> failed;
};

// A sweep's plan: one level per concurrency N (closed loop) or arrival rate in req/s (open loop,
// `by_rate`), each a copy of `base` (whose max_connections caps an open-loop pool) with its
// threads capped at the level's connections. Errors: a level's invalid options, with field()
// "levels" where the level's concurrency, or "rates" where its rate, made them invalid.
core::Result<Plan> sweep_plan(const LoadOptions& base, const std::vector<int64_t>& levels,
                              bool by_rate, int repeats);

// Runs the plan. Never fails as a whole: a failed run is reported in PlanResult::failed, with
// the levels before it.
PlanResult run_plan(const Plan& plan, const PlanControl& control);

}  // namespace knee::engine
