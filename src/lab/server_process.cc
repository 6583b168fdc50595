#include "lab/server_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace knee::lab {

using core::Result;
using core::Status;

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(static_cast<size_t>(c), &set)) out.push_back(c);
  }
  return out;
}

Status pin_to(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(static_cast<size_t>(c), &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return Status::from_errno("sched_setaffinity", errno);
  return Status::success();
}

Result<ServerProcess> ServerProcess::start(const std::vector<std::string>& serve_args,
                                           int server_cpu) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return Status::from_errno("pipe2", errno);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return Status::from_errno("readlink /proc/self/exe", errno);
  self[n] = '\0';

  std::vector<std::string> args = {self, "serve", "--host", "127.0.0.1", "--port", "0"};
  args.insert(args.end(), serve_args.begin(), serve_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return Status::from_errno("fork", errno);
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (server_cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<size_t>(server_cpu), &set);
      sched_setaffinity(0, sizeof set, &set);
    }
    dup2(pipefd[1], STDOUT_FILENO);
    execv(self, argv.data());
    _exit(127);
  }
  close(pipefd[1]);
  ServerProcess child(pid, 0, pipefd[0]);

  // Read "listening on HOST:PORT\n" within 10 s.
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (line.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return Status::io_error("knee serve: no 'listening on' line within 10 s");
    pollfd p{child.out_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[256];
    ssize_t r = read(child.out_fd_, buf, sizeof buf);
    if (r <= 0) return Status::io_error("knee serve exited before it was listening");
    line.append(buf, static_cast<size_t>(r));
  }
  size_t colon = line.rfind(':', line.find('\n'));
  if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos) {
    return Status::io_error("knee serve printed an unexpected first line: " + line);
  }
  child.port_ = std::atoi(line.c_str() + colon + 1);
  return child;
}

ServerProcess::ServerProcess(ServerProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), port_(o.port_), out_fd_(std::exchange(o.out_fd_, -1)) {}

void ServerProcess::stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
  }
  if (out_fd_ >= 0) {
    close(out_fd_);
    out_fd_ = -1;
  }
}

ServerProcess::~ServerProcess() { stop(); }

Result<BuiltinServer> start_builtin_server(const std::string& wait, const std::string& cpu,
                                           int threads, bool tls) {
  const std::vector<int> cpus = allowed_cpus();
  const int server_cpu = cpus.size() >= 2 ? cpus.front() : -1;
  std::vector<std::string> args = {"--wait", wait,        "--cpu",
                                   cpu,      "--threads", std::to_string(threads)};
  if (tls) args.emplace_back("--tls");
  auto child = ServerProcess::start(args, server_cpu);
  if (!child) return child.status();
  std::string pinning = "server and client share the CPUs (fewer than 2 available)";
  if (server_cpu >= 0) {
    const std::vector<int> client(cpus.begin() + 1, cpus.end());
    if (Status s = pin_to(client); !s) return s;
    pinning = fmt::format("server pinned to CPU {}, client to CPU {}", server_cpu,
                          client.size() == 1 ? std::to_string(client[0]) : "the others");
  }
  std::string description = fmt::format(
      "built-in lab server (knee serve{}, pid {}): {} event-loop thread{}, each tracking request "
      "waits {} on a timer then burns {} of CPU; {}",
      tls ? " --tls" : "", child->pid(), threads, threads == 1 ? "" : "s", wait, cpu, pinning);
  const int port = child->port();
  return BuiltinServer{std::move(child).value(), std::move(description), builtin_url(tls, port)};
}

std::string builtin_url(bool tls, int port) {
  return fmt::format("{}://127.0.0.1:{}/tracking?no=G{{conn}}-{{seq}}", tls ? "https" : "http",
                     port);
}

}  // namespace knee::lab
