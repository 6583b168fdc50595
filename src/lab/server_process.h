// ServerProcess: the lab server as a child process, for `knee sweep` without a URL (and the lab
// stack to come): started as `knee serve --port 0 ...` from this same binary, its port read from
// the first line it prints, pinned to its own CPU, and stopped (SIGTERM, then waited for) when
// its owner is done. Also the CPU-affinity helpers that keep the server and the client apart.
//
// Ownership: a ServerProcess owns its child; destroying it stops it (and the child gets SIGTERM
// if this process dies first, PR_SET_PDEATHSIG). Thread-safety: one owner thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace knee::lab {

class ServerProcess {
 public:
  // Starts `<this binary> serve --host 127.0.0.1 --port 0 <serve_args...>`. server_cpu >= 0
  // pins the child to that CPU. Errors: kIoError when fork/exec fails or the child does not
  // print "listening on HOST:PORT" within 10 s.
  static core::Result<ServerProcess> start(const std::vector<std::string>& serve_args,
                                           int server_cpu);

  ServerProcess(ServerProcess&& o) noexcept;
  ServerProcess& operator=(ServerProcess&&) = delete;
  ServerProcess(const ServerProcess&) = delete;
  ~ServerProcess();

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then waits up to 10 s for the drain, then SIGKILL. Idempotent.
  void stop();

 private:
  ServerProcess(pid_t pid, int port, int out_fd) : pid_(pid), port_(port), out_fd_(out_fd) {}
  pid_t pid_ = -1;
  int port_ = 0;
  int out_fd_ = -1;
};

// The built-in lab server of `knee sweep` without a URL: `knee serve` with the tracking
// endpoint's wait, CPU share (as typed: "3ms", "0.2ms") and event-loop threads, pinned to the
// first CPU this process may use while this process is pinned to the others (when there are two
// or more). `description` says all that in words, for the report's target.
struct BuiltinServer {
  ServerProcess process;
  std::string description;
  std::string url;  // builtin_url() with the child's port
};
// The URL knee sweep measures the built-in server on: its tracking endpoint with one tracking
// number per connection and request ("http://127.0.0.1:PORT/tracking?no=G{conn}-{seq}", the
// seed's tracking client; https with `tls`). Port 1 before the child has one.
std::string builtin_url(bool tls, int port);
// `tls`: served over TLS with a self-signed certificate (knee serve --tls).
core::Result<BuiltinServer> start_builtin_server(const std::string& wait, const std::string& cpu,
                                                 int threads, bool tls = false);

// CPUs this process may run on (sched_getaffinity), in increasing order.
std::vector<int> allowed_cpus();
// Pins the calling process (and the threads it starts later) to `cpus`. Errors: kIoError.
core::Status pin_to(const std::vector<int>& cpus);

}  // namespace knee::lab
