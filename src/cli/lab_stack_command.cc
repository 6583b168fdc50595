// knee lab up|status|deploy|down: the lab stack (lab/stack.h) from the command line.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/lab_stack.h"
#include "core/units.h"
#include "lab/server_process.h"
#include "lab/stack.h"
#include "lab/state_folder.h"

namespace knee::cli {

using core::Status;

void LabStackCommands::add_to(CLI::App& lab) {
  up_ = lab.add_subcommand("up",
                           "Start the lab stack: --replicas knee serve processes behind nginx "
                           "on 127.0.0.1:--port, as seed 002's compose stack without Docker");
  status_ = lab.add_subcommand("status", "Say which parts of the lab stack are alive and answer");
  down_ = lab.add_subcommand("down", "Stop every part of the lab stack; none is left running");
  deploy_ = lab.add_subcommand(
      "deploy",
      "Replace every replica in turn by a new process while the stack serves (a rolling "
      "deploy): --graceful or --abrupt");
  for (CLI::App* sub : {up_, status_, down_, deploy_}) {
    sub->add_option("--state", state_,
                    "The lab's state folder (default $XDG_STATE_HOME/knee/lab); the stack's "
                    "files are in its stack/ folder")
        ->type_name("DIR");
  }
  up_->add_option("--replicas", replicas_, "App replicas (knee serve), instances app1..appN")
      ->capture_default_str();
  up_->add_option("--lb", lb_, "The load balancer: nginx (Debian's nginx-light)")
      ->capture_default_str()
      ->check(CLI::IsMember({"nginx"}));
  up_->add_option("--balance", balance_, "round_robin, least_conn or random")
      ->capture_default_str()
      ->check(CLI::IsMember({"round_robin", "least_conn", "random"}));
  up_->add_option("--port", port_, "The balancer's port on 127.0.0.1")->capture_default_str();
  up_->add_option("--nginx", nginx_, "The nginx binary")->capture_default_str();
  up_->add_option("--cache", cache_,
                  "redis: start a redis-server (Debian's) beside the replicas, which cache "
                  "tracking reads in it (with --db sqlite or postgres)")
      ->check(CLI::IsMember({"redis"}));
  up_->add_flag("--no-pin", no_pin_,
                "Do not pin the parts to CPUs (by default each gets one of its own when there "
                "are at least replicas + 2: the balancer's, one per replica, one for the load)");
  up_->add_option("--db", db_,
                  "sqlite: the replicas serve the shipment service on the state folder's data "
                  "set (make it with knee lab data); postgres: on a PostgreSQL the lab starts "
                  "and loads (--records); default the stand-in endpoints only")
      ->check(CLI::IsMember({"sqlite", "postgres"}));
  up_->add_option("--records", records_, "With --db postgres: the data set's shipments")
      ->capture_default_str();
  up_->add_option("--next-upstream", next_upstream_,
                  "nginx's proxy_next_upstream: when a failed request goes to another replica "
                  "('off': never, so a replica's death shows as 502s)")
      ->capture_default_str();
  auto* graceful = deploy_->add_flag(
      "--graceful", graceful_,
      "Start the new replica on the old one's port (SO_REUSEPORT), then let the old one drain "
      "(SIGTERM)");
  auto* abrupt = deploy_->add_flag(
      "--abrupt", abrupt_, "Kill the old replica (SIGKILL), then start the new one on its port");
  graceful->excludes(abrupt);
  deploy_->add_flag("--rolling", rolling_, "One replica at a time (the only way, the default)");
  deploy_->add_option("--pause", pause_, "Wait between two replicas")->capture_default_str();
  up_->add_option("--replica-cost", replica_costs_,
                  "Make a replica slower: NAME=cpu:DURATION burns that much CPU before each "
                  "answer (e.g. app2=cpu:1ms; repeatable), seed 002's uneven node");
}

std::optional<int> LabStackCommands::run() {
  if (up_->parsed()) return run_up();
  if (status_->parsed()) return run_status();
  if (down_->parsed()) return run_down();
  if (deploy_->parsed()) return run_deploy();
  return std::nullopt;
}

std::string LabStackCommands::dir() const {
  return (state_.empty() ? lab::default_state_dir() : state_) + "/stack";
}

int LabStackCommands::run_up() {
  lab::StackSpec spec;
  spec.dir = dir();
  spec.replicas = replicas_;
  spec.balance = balance_;
  spec.port = port_;
  spec.next_upstream = next_upstream_;
  spec.nginx = nginx_;
  spec.cache = cache_;
  spec.pin = !no_pin_;
  // Ctrl-C while the parts come up stops those started: no process is left behind.
  spec.interrupt = &install_interrupt_handler();
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return report_failure(Status::from_errno("readlink /proc/self/exe", errno));
  spec.knee_binary = std::string(self, static_cast<size_t>(n));
  if (db_ == "sqlite") {
    const std::string data = std::filesystem::path(spec.dir).parent_path().string();
    if (!std::filesystem::exists(lab::database_in(data))) {
      return report_failure(Status::invalid_argument(fmt::format(
          "--db sqlite: no data set in {}; make one with knee lab data --state {}", data, data)));
    }
    spec.serve_args = {"--state", data};
  } else if (db_ == "postgres") {
    spec.db = "postgres";
    spec.db_records = records_;
  }
  for (const std::string& cost : replica_costs_) {
    if (Status s = spec.add_replica_cost(cost); !s) return report_failure(s);
  }
  if (Status s = spec.validate(); !s) return report_failure(s);
  fmt::print("lab up: starting {}{}{} replicas and nginx in {}\n",
             cache_.empty() ? "" : cache_ + ", ", spec.db.empty() ? "" : spec.db + ", ", replicas_,
             spec.dir);
  std::fflush(stdout);
  auto stack = lab::stack_up(spec);
  if (!stack && interrupt_requested()) {
    fmt::print(stderr, "knee: {}\n", stack.status().message());
    return kExitInterrupted;
  }
  if (!stack) return report_failure(stack.status());
  for (const lab::StackPart& p : stack->parts) fmt::print("{}\n", lab::part_line(p));
  const size_t cpus = lab::allowed_cpus().size();
  if (stack->parts.back().cpu >= 0) {
    fmt::print("pinned: each part to a CPU of its own; pin the load to the others (taskset)\n");
  } else {
    fmt::print("not pinned: {}; the parts share the CPUs with each other and with the load\n",
               no_pin_ ? "--no-pin"
                       : fmt::format("{} CPUs, fewer than {} replicas + a balancer + one for "
                                     "the load",
                                     cpus, replicas_));
  }
  fmt::print("lab up: {} ({} replicas, {}); knee lab status, knee lab down\n", stack->url(),
             replicas_, balance_);
  return kExitOk;
}

int LabStackCommands::run_status() {
  // No lab is a status, not a bad input: it says so and exits 1, as for a part that is down.
  if (!lab::stack_recorded(dir())) {
    fmt::print("no lab is up in {}; knee lab up starts one\n", dir());
    return kExitRunFailed;
  }
  auto stack = lab::read_stack(dir());
  if (!stack) return report_failure(stack.status());
  bool all = true;
  for (const lab::PartStatus& s : lab::stack_status(*stack)) {
    all = all && s.alive && s.answering;
    fmt::print("{}\n", lab::status_line(s));
  }
  return all ? kExitOk : kExitRunFailed;
}

int LabStackCommands::run_deploy() {
  if (graceful_ == abrupt_) {
    return report_failure(Status::invalid_argument(
        "knee lab deploy: say how: --graceful (no request need fail) or --abrupt (kill -9)"));
  }
  auto pause = core::parse_duration(pause_);
  if (!pause) return report_failure(Status::invalid_field("pause", pause.status().message()));
  auto stack = lab::read_stack(dir());
  if (!stack) return report_failure(stack.status());
  auto steps = lab::stack_deploy(
      *stack, graceful_ ? lab::DeployMode::kGraceful : lab::DeployMode::kAbrupt, *pause,
      [](const lab::DeployStep& s) {
        fmt::print("{:<6} pid {} -> {} on port {}, {:.3f} s\n", s.replica, s.old_pid, s.new_pid,
                   s.new_port, s.seconds);
        std::fflush(stdout);
      },
      &install_interrupt_handler());
  if (!steps) return report_failure(steps.status());
  fmt::print("lab deploy ({}): {} replicas replaced{}\n", graceful_ ? "graceful" : "abrupt",
             steps->size(),
             interrupt_requested() ? "; interrupted, the rest left as they were" : "");
  return interrupt_requested() ? kExitInterrupted : kExitOk;
}

int LabStackCommands::run_down() {
  // Stopping what is not running succeeds, so a clean-up script may call it unconditionally.
  if (!lab::stack_recorded(dir())) {
    fmt::print("lab down: no lab is up in {}; nothing to stop\n", dir());
    return kExitOk;
  }
  auto stack = lab::read_stack(dir());
  if (!stack) return report_failure(stack.status());
  if (Status s = lab::stack_down(*stack); !s) return report_failure(s);
  fmt::print("lab down: {} parts stopped\n", stack->parts.size());
  return kExitOk;
}

}  // namespace knee::cli
