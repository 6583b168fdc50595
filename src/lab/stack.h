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

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/resource_use.h"
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
  // "redis": a redis-server (Debian's) on a free loopback port, started before the replicas,
  // which cache tracking reads in it (knee serve --cache redis://...; only the shipment
  // service, so serve_args must name a data set); "": none.
  std::string cache;
  std::string redis_server = "/usr/bin/redis-server";
  // "postgres": a PostgreSQL cluster of the stack's own (Debian's; initdb in STATE/stack/pg,
  // fresh on every up, a free loopback port), loaded with `knee lab data --db URL --records
  // db_records`, which the replicas serve (knee serve --db URL). As root it runs as the user
  // postgres, who must be able to enter the state folder. "": none.
  std::string db;
  std::string db_records = "100k";
  // Pin each part to a CPU of its own when there are enough (cpu_plan); false: never.
  bool pin = true;
  // Set (by SIGINT/SIGTERM) while the stack starts: no further part is started, those started
  // are stopped, and stack_up fails with "interrupted". nullptr: never.
  const std::atomic<bool>* interrupt = nullptr;
  // nginx's proxy_next_upstream: when a request goes to the next replica ("off": never, so a
  // replica that dies answers its requests with 502).
  std::string next_upstream = "error timeout http_502";
  // Errors (kInvalidArgument, field() "replicas", "balance", "port", "next_upstream" (not off
  // nor nginx's conditions) or "replica_cost": a name that is not one of app1..appN, a duration
  // that does not parse).
  core::Status validate() const;
  // One --replica-cost as typed, NAME=cpu:DURATION ("app2=cpu:1ms"), into extra_cpu; the name and
  // the duration are checked by validate(). Errors: kInvalidArgument, field() "replica_cost",
  // when the text has no "=cpu:".
  core::Status add_replica_cost(std::string_view text);
};

struct StackPart {
  std::string name;  // "app1".., "nginx", "redis" or "postgres"
  std::string role;  // "replica", "balancer", "cache" or "db"
  pid_t pid = 0;
  int port = 0;
  std::string log;                // its stdout and stderr
  std::vector<std::string> argv;  // how it was started (a deploy starts it again so)
  int cpu = -1;                   // the CPU it is pinned to; -1: not pinned
  bool operator==(const StackPart&) const = default;
};

// The CPU of each part, replicas first and the balancer last (the order of Stack::parts), from
// the CPUs this process may use: the balancer on the first, replica i on the (i+1)-th, and at
// least one left over for the load generator; all -1 when there are fewer than replicas + 2
// (the parts then share the CPUs with each other and with knee's client).
std::vector<int> cpu_plan(const std::vector<int>& allowed, int replicas);

struct Stack {
  std::string dir;
  std::string balance;
  std::string next_upstream;
  int deploys = 0;  // deploys done: the replicas' logs of deploy k are NAME.k.log
  // The cache and the database first when there are, then the replicas, the balancer last.
  std::vector<StackPart> parts;
  std::string url() const;  // http://127.0.0.1:PORT/, the balancer's
};

// The nginx configuration for `spec` in front of `replicas`: one worker, an upstream with the
// balancing algorithm and keep-alive connections, retries of idempotent requests on a connect
// error, a timeout or a 502 (proxy_next_upstream), temporary files and logs in spec.dir.
std::string nginx_config(const StackSpec& spec, const std::vector<StackPart>& replicas);

// Starts the stack. Errors: kInvalidArgument for a bad spec or a stack already up in spec.dir
// ("knee lab down" first); kUnavailable when a part does not come up within 10 s (with the last
// lines of its log) or spec.interrupt was set, after stopping the parts already started;
// kIoError when fork or a file write fails.
core::Result<Stack> stack_up(const StackSpec& spec);

// The stack recorded in `dir`. Errors: kInvalidArgument when none is up there ("start one with
// knee lab up") or stack.json is not one knee wrote.
core::Result<Stack> read_stack(const std::string& dir);

// Whether a stack is recorded in `dir` (its stack.json exists), whatever state its parts are in.
bool stack_recorded(const std::string& dir);

struct PartStatus {
  StackPart part;
  bool alive = false;  // the process exists (and is not a zombie)
  // GET /health answered 200 (the balancer: through to a replica); the cache: PING, PONG; the
  // database: its port accepts a connection.
  bool answering = false;
  long long requests = -1;  // a replica's totalRequests from /health; -1 when unknown
};
std::vector<PartStatus> stack_status(const Stack& stack);

// One line per part for `knee lab up` and `knee lab status`, columns aligned across parts:
// "app1   replica  pid 4242    http://127.0.0.1:8081/  log DIR/app1.log  CPU 1" (up: where it is)
// and "app1   replica  pid 4242    port 8081   up, 12 requests served, CPU 1" (status: whether it
// answers). No newline.
std::string part_line(const StackPart& part);
std::string status_line(const PartStatus& status);

// A replica's totalRequests from its /health (the reading itself counted: two readings differ by
// the requests between them plus one); -1 when it does not answer with a 200 and that field
// within 1 s.
long long requests_served(const StackPart& replica);

// The requests each replica of a stack answered between start() and finish(), by two readings
// of its /health (requests_served). Blocking: one GET per replica, at most 1 s each.
class ServedCounter {
 public:
  explicit ServedCounter(Stack stack) : stack_(std::move(stack)) {}
  void start();
  // Sets each replica's requests in `backends` (matched by name and pid) to its count since
  // start(), less the reading itself; left unknown for a replica that did not answer or that
  // stack.json no longer lists with that pid (a deploy replaced it on its port), and for
  // backends that are not replicas (the cache).
  void finish(std::vector<core::ProcessUse>& backends) const;

 private:
  Stack stack_;
  std::map<std::string, long long> before_;  // replica name -> count, -1 unknown
};

// The process that does a part's work: nginx's one worker (the first child of the master
// recorded in stack.json, from /proc/PID/task/PID/children), a replica itself. The part's own
// pid when it has no child or the file cannot be read.
pid_t working_pid(const StackPart& part);

// A rolling deploy (seed 002, lesson 3): every replica in turn is replaced by a new process on
// the same port (knee serve listens with SO_REUSEPORT; nginx's configuration stays as it is).
// Graceful: the new one starts and answers, then the old one gets SIGTERM: it stops accepting,
// finishes what it has and closes; nginx retries what met a closing connection
// (proxy_next_upstream), so no request need fail. Abrupt: the old one is killed (SIGKILL) with
// whatever it had in flight, then the new one starts; until it answers nginx meets reset and
// refused connections, which proxy_next_upstream may hide (idempotent requests, retries on) or
// not (--next-upstream off, or POSTs).
enum class DeployMode { kGraceful, kAbrupt };
struct DeployStep {
  std::string replica;
  pid_t old_pid = 0, new_pid = 0;
  int old_port = 0, new_port = 0;
  double seconds = 0;  // from the start of its replacement to the new one answering and the
                       // old one gone
};
// Restarts the replicas one by one, `pause` between them, calling `on_step` after each and
// rewriting stack.json as it goes; once `interrupt` is set (nullptr: never) it finishes the
// replica in hand and stops there, the steps done returned. Errors: kUnavailable when a new
// replica does not come up within 10 s (graceful: the old one then still serves), kIoError for
// fork or file writes.
core::Result<std::vector<DeployStep>> stack_deploy(
    Stack& stack, DeployMode mode, core::Nanos pause,
    const std::function<void(const DeployStep&)>& on_step,
    const std::atomic<bool>* interrupt = nullptr);

// Stops every part (the balancer first, then the replicas), waiting up to 10 s each before
// SIGKILL, and removes stack.json. A part already gone is fine; a pid that now belongs to
// another program is left alone.
core::Status stack_down(const Stack& stack);

}  // namespace knee::lab
