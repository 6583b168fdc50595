#include "cli/output.h"

#include "cli/command.h"
#include "lab/state_folder.h"

namespace knee::cli {

void TargetFlags::add_to(CLI::App& app) {
  app.add_option("--server-pid", server_pid,
                 "The server's process id, to report its CPU, threads and memory and name the "
                 "saturated resource; a pre-fork master with one worker of its name (nginx's) is "
                 "followed to that worker");
  app.add_flag("--stack", stack,
               "The target is the stack `knee lab up` started: follow its balancer and every "
               "replica (CPU, threads, memory, requests each answered from its /health), name "
               "which one saturated, and print requests per replica");
  app.add_option("--lab-state", lab_state,
                 "With --stack: the lab's state folder, as given to knee lab up --state "
                 "(default $XDG_STATE_HOME/knee/lab)")
      ->type_name("DIR");
}

core::Result<harness::WatchedTarget> TargetFlags::resolve() const {
  return harness::resolve_target(*this, lab::default_state_dir());
}

}  // namespace knee::cli
