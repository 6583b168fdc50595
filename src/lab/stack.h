// The lab stack without Docker: seed 002's topology (app replicas behind a load balancer) as
// plain processes on loopback, from Debian's packages. `knee lab up` starts R replicas (`knee
// serve`, instances app1..appR, each on a free port) and nginx (Debian's nginx-light) with a
// generated configuration in front of them, waits until each answers, and records what it
// started in STATE/stack.json; `knee lab status` says which parts are alive and answering;
// `knee lab down` stops them all (replicas drain on SIGTERM, nginx on SIGQUIT finishes its
// requests) and leaves no process behind.
//
// The parts outlive the command that started them (own session, stdin from /dev/null, output
// to STATE/<part>.log); nothing runs as a service or needs root. A part that fails to start
// stops the parts started before it, and the error carries the last lines of its log.
// Thread-safety: functions of their arguments; one stack per state folder.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace knee::lab {

inline constexpr const char* kBalancingAlgorithms[] = {"round_robin", "least_conn", "random"};

struct StackSpec {
  std::string dir;                      // the state folder: stack.json, configs, logs
  int replicas = 3;                     // 1..32
  std::string balance = "round_robin";  // one of kBalancingAlgorithms
  int port = 8080;                      // the balancer's, on 127.0.0.1
  // Arguments every replica's `knee serve` gets (e.g. --state DIR for the shipment service).
  std::vector<std::string> serve_args;
  // Uneven replicas: replica name ("app2") -> CPU burnt per request (its `knee serve
  // --extra-cpu`), as typed ("1ms").
  std::map<std::string, std::string> extra_cpu;
  std::string knee_binary;  // this binary
  std::string nginx = "/usr/sbin/nginx";
  // Errors (kInvalidArgument, field() "replicas", "balance", "port" or "replica_cost": a name
  // that is not one of app1..appN, a duration that does not parse).
  core::Status validate() const;
};

struct StackPart {
  std::string name;  // "app1".., or "nginx"
  std::string role;  // "replica" or "balancer"
  pid_t pid = 0;
  int port = 0;
  std::string log;  // its stdout and stderr
  bool operator==(const StackPart&) const = default;
};

struct Stack {
  std::string dir;
  std::string balance;
  std::vector<StackPart> parts;  // replicas first, the balancer last
  std::string url() const;       // http://127.0.0.1:PORT/, the balancer's
};

// The nginx configuration for `spec` in front of `replicas`: one worker, an upstream with the
// balancing algorithm and keep-alive connections, retries of idempotent requests on a connect
// error, a timeout or a 502 (proxy_next_upstream), temporary files and logs in spec.dir.
std::string nginx_config(const StackSpec& spec, const std::vector<StackPart>& replicas);

// Starts the stack. Errors: kInvalidArgument for a bad spec or a stack already up in spec.dir
// ("knee lab down" first); kUnavailable when a part does not come up within 10 s (with the last
// lines of its log), after stopping the parts already started; kIoError when fork or a file
// write fails.
core::Result<Stack> stack_up(const StackSpec& spec);

// The stack recorded in `dir`. Errors: kInvalidArgument when none is up there ("start one with
// knee lab up") or stack.json is not one knee wrote.
core::Result<Stack> read_stack(const std::string& dir);

struct PartStatus {
  StackPart part;
  bool alive = false;       // the process exists (and is not a zombie)
  bool answering = false;   // GET /health answered 200 (the balancer: through to a replica)
  long long requests = -1;  // a replica's totalRequests from /health; -1 when unknown
};
std::vector<PartStatus> stack_status(const Stack& stack);

// Stops every part (the balancer first, then the replicas), waiting up to 10 s each before
// SIGKILL, and removes stack.json. A part already gone is fine; a pid that now belongs to
// another program is left alone.
core::Status stack_down(const Stack& stack);

}  // namespace knee::lab
