// A measurement's view of the host: the processes of the target it follows and the sampler of
// probes/use.h over each run's measured phase (engine::MeasureObserver).
//
// Thread-safety: none; the thread that runs the plan calls start() and stop().
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/status.h"
#include "engine/plan.h"
#include "lab/stack.h"
#include "probes/use.h"

namespace knee::harness {

// The target a measurement follows: a server's pid (--server-pid), or the stack `knee lab up`
// started (--stack, read from the lab's state folder --lab-state).
struct TargetSpec {
  std::optional<int> server_pid;
  bool stack = false;
  std::string lab_state;  // "" = the caller's default state folder
};

// The target's processes, and the stack when it is one.
struct WatchedTarget {
  probes::WatchedProcesses processes;  // with a stack: the balancer as server, replicas as backends
  std::optional<lab::Stack> stack;
};

// The processes `spec` names; a stack is read from STATE/stack/stack.json, STATE spec.lab_state,
// else `state_dir`. The database of a stack is left out (a process per connection: its own CPU
// says nothing). Errors (kInvalidArgument, the flag named in the message): --server-pid of no
// running process, or of a master of several workers (probes::working_process; the master of one
// is followed to it); --stack with --server-pid; --lab-state without --stack; --stack with no
// stack up in the state folder.
core::Result<WatchedTarget> resolve_target(const TargetSpec& spec, const std::string& state_dir);

// Samples the host (probes/use.h) over each run's measured phase, following the target's
// processes when known; with a lab stack, also counts the requests each replica answered in the
// phase (two readings of its /health, ProcessUse::requests), unknown for a replica that was
// replaced (another pid in stack.json) or did not answer.
class HostObserver final : public engine::MeasureObserver {
 public:
  HostObserver(probes::WatchedProcesses processes, std::optional<lab::Stack> stack,
               std::chrono::milliseconds every);
  void start() override;
  core::ResourceUse stop() override;

 private:
  probes::WatchedProcesses processes_;
  std::optional<lab::ServedCounter> served_;
  probes::UseSampler sampler_;
};

}  // namespace knee::harness
