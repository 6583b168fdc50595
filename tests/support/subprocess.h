// Running the real knee binary from end-to-end tests: run to completion capturing stdout, stderr
// and the exit code, or start in the background (a server) and read its first stdout line.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace knee::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] with argv, waits at most `timeout` (then SIGKILL, exit_code -1).
ProcessResult run_process(const std::vector<std::string>& argv,
                          std::chrono::seconds timeout = std::chrono::seconds(120));

// A process in the background whose first stdout line is read at start. SIGTERM on destruction.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::vector<std::string>& argv);
  ~BackgroundProcess();
  const std::string& first_line() const { return first_line_; }
  pid_t pid() const { return pid_; }
  // Sends `signal` (SIGTERM by default) and waits up to `timeout`, then SIGKILL; returns the
  // exit code (128 + signal when killed).
  int terminate(std::chrono::seconds timeout = std::chrono::seconds(10), int signal = SIGTERM);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string first_line_;
};

// The port in a "listening on HOST:PORT" line, or -1.
int port_of_listening_line(const std::string& line);

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0 and closed), for a server
// that cannot pick its own and print it; -1 on failure.
int free_loopback_port();

}  // namespace knee::testing
