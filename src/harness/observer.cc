#include "harness/observer.h"

#include <fmt/core.h>
#include <signal.h>

#include <cerrno>

namespace knee::harness {

using core::Status;

namespace {

// --server-pid PID names a running process: kInvalidArgument naming the flag otherwise.
Status check_server_pid(std::optional<int> pid) {
  if (!pid) return Status::success();
  if (*pid <= 0 || (::kill(*pid, 0) != 0 && errno == ESRCH)) {
    return Status::invalid_argument(fmt::format(
        "--server-pid: no process {} is running; give the pid of the server under test, e.g. "
        "--server-pid $(pgrep -o nginx)",
        *pid));
  }
  return Status::success();
}

}  // namespace

core::Result<WatchedTarget> resolve_target(const TargetSpec& spec, const std::string& state_dir) {
  const auto& [server_pid, stack, lab_state] = spec;
  if (Status s = check_server_pid(server_pid); !s) return s;
  if (!stack) {
    if (!lab_state.empty()) {
      return Status::invalid_argument("--lab-state: only with --stack; add --stack");
    }
    std::optional<int> server = server_pid;
    if (server) {  // a pre-fork master is followed to its worker
      auto worker = probes::working_process(probes::FsReader(), *server);
      if (!worker) return worker.status().with_context("--server-pid");
      server = *worker;
    }
    return WatchedTarget{probes::WatchedProcesses::server_only(server), std::nullopt};
  }
  if (server_pid) {
    return Status::invalid_argument(
        "--server-pid and --stack: give one; --stack follows the stack's balancer and replicas");
  }
  auto up = lab::read_stack((lab_state.empty() ? state_dir : lab_state) + "/stack");
  if (!up) return up.status().with_context("--stack");
  probes::WatchedProcesses w;
  for (const lab::StackPart& p : up->parts) {
    const probes::WatchedProcess process{p.name, static_cast<int>(lab::working_pid(p))};
    // The database is left out: the postmaster forks a process per connection, and its own
    // CPU says nothing of theirs (the host's figures hold them).
    if (p.role == "balancer") {
      w.server = process;
    } else if (p.role != "db") {
      w.backends.push_back(process);
    }
  }
  return WatchedTarget{std::move(w), std::move(up).value()};
}

HostObserver::HostObserver(probes::WatchedProcesses processes, std::optional<lab::Stack> stack,
                           std::chrono::milliseconds every)
    : processes_(std::move(processes)), sampler_(probes::FsReader("/"), every) {
  if (stack) served_.emplace(std::move(*stack));
}

void HostObserver::start() {
  if (served_) served_->start();
  sampler_.start(processes_);
}

core::ResourceUse HostObserver::stop() {
  core::ResourceUse use = sampler_.stop();
  if (served_) served_->finish(use.backends);
  return use;
}

}  // namespace knee::harness
