#include "lab/stack.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/files.h"
#include "core/units.h"
#include "lab/server_process.h"
#include "net/socket.h"
#include "net/transport.h"

namespace knee::lab {

using core::Result;
using core::Status;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr auto kStartTimeout = 10s;
constexpr auto kStopTimeout = 10s;

std::string stack_file(const std::string& dir) { return dir + "/stack.json"; }

// The last `n` lines of a log, indented, for an error message.
std::string log_tail(const std::string& path, size_t n = 8) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    out += "\n  " + lines[i];
  }
  return out.empty() ? " (its log is empty)" : "; the end of " + path + ":" + out;
}

// Starts `argv` in a session of its own, stdin from /dev/null, stdout and stderr to `log`,
// pinned to `cpu` when it is not -1 (before exec, so that every thread it starts inherits it).
Result<pid_t> spawn(const std::vector<std::string>& argv, const std::string& log, int cpu) {
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return Status::from_errno("open " + log, errno);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0) {
    const int err = errno;
    ::close(out);
    return Status::from_errno("open /dev/null", err);
  }
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    ::close(out);
    ::close(null);
    return Status::from_errno("fork", err);
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    setsid();
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<size_t>(cpu), &set);
      sched_setaffinity(0, sizeof set, &set);
    }
    dup2(null, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  ::close(out);
  ::close(null);
  return pid;
}

// Alive: the process exists and is not a zombie (a part's parent may be gone and init slow to
// reap it).
bool alive(pid_t pid) {
  if (pid <= 0) return false;
  ::waitpid(pid, nullptr, WNOHANG);  // reaps it when it is this process's child (knee lab up's)
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
}

// The program the pid runs now (its executable's name: nginx rewrites its command line), to
// leave alone a pid reused by something else.
std::string program_of(pid_t pid) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  return ec ? "" : exe.filename().string();
}

// GET `path` on 127.0.0.1:port with Connection: close: the status and body, or an error.
Result<std::pair<int, std::string>> http_get(int port, const std::string& path) {
  auto address = net::resolve("127.0.0.1", port);
  if (!address) return address.status();
  // Connected within 1 s or not at all: a listener that never accepts fills its backlog, and a
  // blocking connect to it would wait for the kernel's SYN retries (about two minutes).
  auto fd = net::connect_tcp(*address, net::Blocking::kNo);
  if (!fd) return fd.status();
  pollfd p{fd->get(), POLLOUT, 0};
  if (::poll(&p, 1, 1000) != 1 || net::connect_error(fd->get()) != 0) {
    return Status::unavailable(fmt::format("cannot connect to 127.0.0.1:{} within 1 s", port));
  }
  ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) & ~O_NONBLOCK);
  net::set_io_timeouts(fd->get(), 1s);
  net::TcpTransport t(std::move(fd).value());
  const std::string request =
      fmt::format("GET {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n", path, port);
  if (Status s = net::send_all(t, request, "GET " + path); !s) return s;
  std::string response;
  std::array<char, 4096> buf;
  for (;;) {
    const net::IoResult r = t.recv_some(buf);
    if (r.status != net::IoStatus::kDone || r.bytes == 0) break;
    response.append(buf.data(), r.bytes);
  }
  if (response.size() < 12 || !response.starts_with("HTTP/1.")) {
    return Status::unavailable(fmt::format("no HTTP response from port {}", port));
  }
  const size_t body = response.find("\r\n\r\n");
  return std::pair<int, std::string>(std::atoi(response.c_str() + 9),
                                     body == std::string::npos ? "" : response.substr(body + 4));
}

// The port a `knee serve --port 0` printed first ("listening on 127.0.0.1:PORT"), 0 if not yet.
int listening_port(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  if (!std::getline(in, line) || !line.starts_with("listening on ")) return 0;
  const size_t colon = line.rfind(':');
  return colon == std::string::npos ? 0 : std::atoi(line.c_str() + colon + 1);
}

// What a part's executable is called: another name at its pid is another program.
const char* program_name(const StackPart& p) {
  return p.role == "balancer" ? "nginx"
         : p.role == "cache"  ? "redis"
         : p.role == "db"     ? "postgres"
                              : "knee";
}

void stop_part(const StackPart& p) {
  if (!alive(p.pid)) return;
  const std::string program = program_of(p.pid);
  if (program.find(program_name(p)) == std::string::npos) return;
  // nginx: SIGQUIT, graceful; knee serve and redis: SIGTERM, they drain; the postmaster:
  // SIGINT, PostgreSQL's fast shutdown (clients cut off, then a clean checkpoint).
  ::kill(p.pid, p.role == "balancer" ? SIGQUIT : p.role == "db" ? SIGINT : SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  while (alive(p.pid) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  if (alive(p.pid)) ::kill(p.pid, SIGKILL);
}

json to_json(const Stack& s) {
  json parts = json::array();
  for (const StackPart& p : s.parts) {
    parts.push_back({{"name", p.name},
                     {"role", p.role},
                     {"pid", p.pid},
                     {"port", p.port},
                     {"log", p.log},
                     {"argv", p.argv},
                     {"cpu", p.cpu}});
  }
  return {{"kind", "lab_stack"},
          {"balance", s.balance},
          {"next_upstream", s.next_upstream},
          {"deploys", s.deploys},
          {"parts", parts}};
}

Status write_stack(const Stack& s) {
  core::OutputFile file;
  if (Status st = file.open("stack.json", stack_file(s.dir)); !st) return st;
  return file.write(to_json(s).dump(1) + "\n");
}

// Waits until a replica printed its port (when it asked for port 0) and answers /health.
bool interrupted(const std::atomic<bool>* flag) {
  return flag != nullptr && flag->load(std::memory_order_relaxed);
}

const Status kInterrupted =
    Status::unavailable("interrupted: the parts already started were stopped");

// Redis answers PING with +PONG (RESP, an inline command), within 1 s.
bool redis_pong(int port) {
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, timeval{1, 0});
  bool ok = false;
  if (c != nullptr && c->err == 0) {
    redisSetTimeout(c, timeval{1, 0});
    auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
    ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
    if (reply != nullptr) freeReplyObject(reply);
  }
  if (c != nullptr) redisFree(c);
  return ok;
}

// A loopback port that was free a moment ago (bound to port 0, then closed), for a program that
// cannot pick its own and say which.
Result<int> free_port() {
  auto fd = net::listen_tcp(net::loopback_v4(0), false, 1);
  if (!fd) return fd.status();
  auto address = net::local_address(fd->get());
  if (!address) return address.status();
  return address->port();
}

Status await_cache(const StackPart& p, std::chrono::steady_clock::time_point deadline,
                   const std::atomic<bool>* interrupt) {
  while (!redis_pong(p.port)) {
    if (interrupted(interrupt)) return kInterrupted;
    if (!alive(p.pid) || std::chrono::steady_clock::now() > deadline) {
      return Status::unavailable(fmt::format("redis-server (pid {}) did not answer PING on {}{}",
                                             p.pid, p.port, log_tail(p.log)));
    }
    std::this_thread::sleep_for(20ms);
  }
  return Status::success();
}

// ---- PostgreSQL of the stack's own

// The newest /usr/lib/postgresql/<version>/bin holding initdb, or "".
std::string postgres_bin() {
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string bin = entry.path().string() + "/bin";
    const int version = std::atoi(entry.path().filename().c_str());
    if (std::filesystem::exists(bin + "/initdb") && version > best_version) {
      best_version = version;
      best = bin;
    }
  }
  return best;
}

// The first folder on the way to `dir` that other users cannot enter (no o+x), or "".
std::string closed_to_others(const std::string& dir) {
  for (std::filesystem::path p = std::filesystem::absolute(dir);; p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) return p.string();
    if (p == p.parent_path()) return "";
  }
}

// Runs `argv` to its end, output to `log`, as the user postgres when `as_postgres`.
Status run_to_end(std::vector<std::string> argv, const std::string& log, bool as_postgres) {
  const std::string what = std::filesystem::path(argv[0]).filename().string();
  if (as_postgres) argv.insert(argv.begin(), {"/usr/sbin/runuser", "-u", "postgres", "--"});
  auto pid = spawn(argv, log, -1);
  if (!pid) return pid.status();
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::success();
  return Status::unavailable(fmt::format("{} failed{}", what, log_tail(log)));
}

// initdb, pg_ctl start, and the data set loaded: the database part, and the URL replicas use.
Result<std::pair<StackPart, std::string>> start_postgres(const StackSpec& spec,
                                                         const std::string& knee_binary) {
  const std::string bin = postgres_bin();
  if (bin.empty()) {
    return Status::unavailable(
        "--db postgres: no /usr/lib/postgresql/*/bin/initdb; install Debian's postgresql "
        "(make deps)");
  }
  const bool as_postgres = ::geteuid() == 0;  // PostgreSQL refuses to run as root
  const std::string dir = spec.dir + "/pg";
  if (dir.find_first_of(" '\"\\") != std::string::npos) {
    return Status::invalid_field("db", fmt::format("postgres: the state folder '{}' has a space "
                                                   "or quote; give another --state",
                                                   spec.dir));
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // a fresh cluster every time
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::io_error(fmt::format("cannot create {}: {}", dir, ec.message()));
  if (as_postgres) {
    if (std::string closed = closed_to_others(dir); !closed.empty()) {
      return Status::invalid_field(
          "db", fmt::format("postgres: as root, PostgreSQL runs as the user postgres, who cannot "
                            "enter {}; give --state outside it, e.g. --state /var/tmp/knee-lab",
                            closed));
    }
    const passwd* user = ::getpwnam("postgres");
    if (user == nullptr || ::chown(dir.c_str(), user->pw_uid, user->pw_gid) != 0) {
      return Status::unavailable(
          "--db postgres: as root, but there is no user postgres to run "
          "PostgreSQL as (Debian's postgresql package makes it)");
    }
  }
  if (Status s = run_to_end({bin + "/initdb", "-D", dir + "/data", "-A", "trust", "-U", "knee",
                             "-E", "UTF8", "--no-sync", "--no-instructions"},
                            dir + "/initdb.log", as_postgres);
      !s) {
    return s;
  }
  auto port = free_port();
  if (!port) return port.status();
  StackPart db{"postgres", "db", 0, *port, dir + "/server.log", {bin + "/pg_ctl", dir + "/data"},
               -1};
  if (Status s =
          run_to_end({bin + "/pg_ctl", "-D", dir + "/data", "-l", db.log, "-w", "-t", "30", "-o",
                      fmt::format("-p {} -k {} -c listen_addresses=127.0.0.1 -c "
                                  "max_connections=200",
                                  *port, dir),
                      "start"},
                     dir + "/pg_ctl.log", as_postgres);
      !s) {
    return s;
  }
  std::ifstream pid_file(dir + "/data/postmaster.pid");
  pid_file >> db.pid;
  if (db.pid <= 0) return Status::unavailable("postgres started but wrote no postmaster.pid");
  const std::string url = fmt::format("postgresql://knee@127.0.0.1:{}/postgres", *port);
  if (Status s = run_to_end({knee_binary, "lab", "data", "--db", url, "--records", spec.db_records},
                            dir + "/load.log", false);
      !s) {
    stop_part(db);
    return s;
  }
  return std::pair{db, url};
}

Status await_replica(StackPart& p, std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>* interrupt = nullptr) {
  for (;;) {
    if (interrupted(interrupt)) return kInterrupted;
    if (p.port != 0) {
      auto r = http_get(p.port, "/health");
      if (r && r->first == 200) break;
    }
    if (p.port == 0) p.port = listening_port(p.log);
    if (!alive(p.pid) || std::chrono::steady_clock::now() > deadline) {
      return Status::unavailable(
          fmt::format("{} (knee serve, pid {}) did not come up{}", p.name, p.pid, log_tail(p.log)));
    }
    std::this_thread::sleep_for(20ms);
  }
  return Status::success();
}

}  // namespace

std::vector<int> cpu_plan(const std::vector<int>& allowed, int replicas) {
  const size_t parts = static_cast<size_t>(std::max(replicas, 0)) + 1;
  std::vector<int> plan(parts, -1);
  if (allowed.size() < parts + 1) return plan;
  plan.back() = allowed[0];  // the balancer
  for (size_t i = 0; i + 1 < parts; ++i) plan[i] = allowed[i + 1];
  return plan;
}

std::string Stack::url() const {
  for (const StackPart& p : parts) {
    if (p.role == "balancer") return fmt::format("http://127.0.0.1:{}/", p.port);
  }
  return "";
}

Status StackSpec::add_replica_cost(std::string_view text) {
  const size_t eq = text.find("=cpu:");
  if (eq == std::string_view::npos) {
    return Status::invalid_field(
        "replica_cost", fmt::format("'{}': use NAME=cpu:DURATION, e.g. app2=cpu:1ms", text));
  }
  extra_cpu[std::string(text.substr(0, eq))] = std::string(text.substr(eq + 5));
  return Status::success();
}

Status StackSpec::validate() const {
  if (replicas < 1 || replicas > 32) {
    return Status::invalid_field("replicas", fmt::format("{} replicas; give 1 to 32", replicas));
  }
  if (!cache.empty() && cache != "redis") {
    return Status::invalid_field("cache", fmt::format("'{}': the cache is redis", cache));
  }
  if (!db.empty() && db != "postgres") {
    return Status::invalid_field("db", fmt::format("'{}': the lab starts postgres", db));
  }
  if (!db.empty() && !serve_args.empty()) {
    return Status::invalid_field("db", "postgres, or the state folder's SQLite data: not both");
  }
  if (!cache.empty() && serve_args.empty() && db.empty()) {
    return Status::invalid_field(
        "cache",
        "only with the shipment service's data (--db sqlite): the stand-in endpoints "
        "cache nothing");
  }
  if (std::find(std::begin(kBalancingAlgorithms), std::end(kBalancingAlgorithms), balance) ==
      std::end(kBalancingAlgorithms)) {
    return Status::invalid_field(
        "balance", fmt::format("'{}': use round_robin, least_conn or random", balance));
  }
  for (const auto& [name, cpu] : extra_cpu) {
    const int index = name.starts_with("app") ? std::atoi(name.c_str() + 3) : 0;
    if (index < 1 || index > replicas || name != fmt::format("app{}", index)) {
      return Status::invalid_field(
          "replica_cost",
          fmt::format("'{}' is not a replica: they are app1..app{}", name, replicas));
    }
    if (auto d = core::parse_duration(cpu); !d) {
      return Status::invalid_field("replica_cost",
                                   fmt::format("{}=cpu:{}: {}", name, cpu, d.status().message()));
    }
  }
  if (port < 1 || port > 65535) {
    return Status::invalid_field("port", fmt::format("{}: give a TCP port, 1..65535", port));
  }
  std::istringstream words(next_upstream);
  for (std::string w; words >> w;) {
    static const std::vector<std::string> kConditions = {
        "off",      "error",    "timeout",  "invalid_header", "http_500", "http_502",
        "http_503", "http_504", "http_403", "http_404",       "http_429", "non_idempotent"};
    if (std::find(kConditions.begin(), kConditions.end(), w) == kConditions.end()) {
      return Status::invalid_field(
          "next_upstream",
          fmt::format("'{}' is not one of nginx's proxy_next_upstream conditions (error, timeout, "
                      "http_502, ..., non_idempotent) nor off",
                      w));
    }
  }
  return Status::success();
}

std::string nginx_config(const StackSpec& spec, const std::vector<StackPart>& replicas) {
  std::string servers;
  for (const StackPart& r : replicas) {
    // max_fails=0: a replica is never taken out of rotation for failed requests. nginx's
    // default (1 in 10 s) marks a draining replica down for its one closing-connection race,
    // and a rolling deploy marks them all down in turn: the first graceful deploy measured here
    // answered 59,946 requests with 502 "no live upstreams" in 2 s. Failed attempts are still
    // retried on the next replica (proxy_next_upstream).
    servers += fmt::format("    server 127.0.0.1:{} max_fails=0;\n", r.port);
  }
  const std::string algorithm = spec.balance == "least_conn" ? "    least_conn;\n"
                                : spec.balance == "random"   ? "    random;\n"
                                                             : "";
  return fmt::format(
      "# Generated by knee lab up ({} replicas, {}); rewritten on every start.\n"
      "worker_processes 1;\n"
      "daemon off;\n"
      "pid {dir}/nginx.pid;\n"
      "error_log {dir}/nginx.log warn;\n"
      "events {{ worker_connections 4096; }}\n"
      "http {{\n"
      "  access_log off;\n"
      "  client_body_temp_path {dir}/nginx-tmp/body;\n"
      "  proxy_temp_path {dir}/nginx-tmp/proxy;\n"
      "  upstream knee_app {{\n"
      "{}{}"
      "    keepalive 64;\n"
      "  }}\n"
      "  server {{\n"
      "    listen 127.0.0.1:{};\n"
      "    location / {{\n"
      "      proxy_pass http://knee_app;\n"
      "      proxy_http_version 1.1;\n"
      "      proxy_set_header Connection \"\";\n"
      "      proxy_connect_timeout 1s;\n"
      "      proxy_read_timeout 30s;\n"
      "      proxy_next_upstream {};\n"
      "      proxy_next_upstream_tries 3;\n"
      "    }}\n"
      "  }}\n"
      "}}\n",
      spec.replicas, spec.balance, algorithm, servers, spec.port,
      spec.next_upstream.empty() ? "error timeout http_502" : spec.next_upstream,
      fmt::arg("dir", spec.dir));
}

Result<Stack> stack_up(const StackSpec& asked) {
  if (Status s = asked.validate(); !s) return s;
  // nginx takes the paths in its configuration from its prefix (-p): every path is absolute.
  StackSpec spec = asked;
  spec.dir = std::filesystem::absolute(asked.dir).lexically_normal().string();
  std::error_code ec;
  std::filesystem::create_directories(spec.dir + "/nginx-tmp", ec);
  if (ec) return Status::io_error(fmt::format("cannot create {}: {}", spec.dir, ec.message()));
  if (auto existing = read_stack(spec.dir)) {
    for (const PartStatus& p : stack_status(*existing)) {
      if (p.alive) {
        return Status::invalid_argument(fmt::format(
            "a lab is already up in {} ({} is running, pid {}): run knee lab down first", spec.dir,
            p.part.name, p.part.pid));
      }
    }
  }
  Stack stack{spec.dir, spec.balance, spec.next_upstream, 0, {}};
  const std::vector<int> cpus = spec.pin
                                    ? cpu_plan(allowed_cpus(), spec.replicas)
                                    : std::vector<int>(static_cast<size_t>(spec.replicas) + 1, -1);
  // Whatever fails from here stops what was started.
  auto fail = [&](Status why) {
    for (auto p = stack.parts.rbegin(); p != stack.parts.rend(); ++p) stop_part(*p);
    std::filesystem::remove(stack_file(spec.dir), ec);
    return why;
  };
  std::vector<std::string> serve_args = spec.serve_args;
  if (spec.cache == "redis") {
    auto port = free_port();
    if (!port) return fail(port.status());
    StackPart c{"redis",
                "cache",
                0,
                *port,
                spec.dir + "/redis.log",
                {spec.redis_server, "--port", std::to_string(*port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", spec.dir},
                -1};
    auto pid = spawn(c.argv, c.log, -1);
    if (!pid) return fail(pid.status());
    c.pid = *pid;
    stack.parts.push_back(c);
    if (Status s = await_cache(c, std::chrono::steady_clock::now() + kStartTimeout, spec.interrupt);
        !s) {
      return fail(s);
    }
    serve_args.insert(serve_args.end(), {"--cache", fmt::format("redis://127.0.0.1:{}", *port)});
  }
  if (spec.db == "postgres") {
    if (interrupted(spec.interrupt)) return fail(kInterrupted);
    auto db = start_postgres(spec, spec.knee_binary);
    if (!db) return fail(db.status());
    stack.parts.push_back(db->first);
    serve_args.insert(serve_args.end(), {"--db", db->second});
  }
  for (int i = 1; i <= spec.replicas; ++i) {
    StackPart p{
        fmt::format("app{}", i), "replica", 0, 0, fmt::format("{}/app{}.log", spec.dir, i), {}};
    p.argv = {spec.knee_binary, "serve", "--host",     "127.0.0.1",
              "--port",         "0",     "--instance", p.name};
    p.argv.insert(p.argv.end(), serve_args.begin(), serve_args.end());
    if (auto cost = spec.extra_cpu.find(p.name); cost != spec.extra_cpu.end()) {
      p.argv.insert(p.argv.end(), {"--extra-cpu", cost->second});
    }
    if (interrupted(spec.interrupt)) return fail(kInterrupted);
    p.cpu = cpus[static_cast<size_t>(i - 1)];
    auto pid = spawn(p.argv, p.log, p.cpu);
    if (!pid) return fail(pid.status());
    p.pid = *pid;
    stack.parts.push_back(p);
  }
  // Each replica prints its port first, then answers /health.
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  for (StackPart& p : stack.parts) {
    if (p.role != "replica") continue;
    if (Status s = await_replica(p, deadline, spec.interrupt); !s) return fail(s);
  }
  if (Status s = write_stack(stack); !s) return fail(s);
  const std::string config_path = spec.dir + "/nginx.conf";
  {
    core::OutputFile config;
    if (Status s = config.open("nginx.conf", config_path); !s) return fail(s);
    std::vector<StackPart> replicas;
    for (const StackPart& p : stack.parts) {
      if (p.role == "replica") replicas.push_back(p);
    }
    if (Status s = config.write(nginx_config(spec, replicas)); !s) return fail(s);
  }
  StackPart lb{"nginx",
               "balancer",
               0,
               spec.port,
               spec.dir + "/nginx.out",
               {spec.nginx, "-e", spec.dir + "/nginx.log", "-c", config_path, "-p", spec.dir}};
  lb.cpu = cpus.back();
  auto pid = spawn(lb.argv, lb.log, lb.cpu);
  if (!pid) return fail(pid.status());
  lb.pid = *pid;
  stack.parts.push_back(lb);
  // Up when it answers and its pid file names it (nginx writes it once it holds its port): a 200
  // from an nginx of another stack on the port is not this one coming up.
  const auto lb_deadline = std::chrono::steady_clock::now() + kStartTimeout;
  for (;;) {
    auto r = http_get(lb.port, "/health");
    std::ifstream pid_file(spec.dir + "/nginx.pid");
    pid_t written = 0;
    pid_file >> written;
    if (r && r->first == 200 && written == lb.pid && alive(lb.pid)) break;
    if (interrupted(spec.interrupt)) return fail(kInterrupted);
    if (!alive(lb.pid) || std::chrono::steady_clock::now() > lb_deadline) {
      std::string why = log_tail(lb.log) + log_tail(spec.dir + "/nginx.log");
      return fail(Status::unavailable(
          fmt::format("nginx (pid {}) did not come up on 127.0.0.1:{}{}", lb.pid, lb.port, why)));
    }
    std::this_thread::sleep_for(20ms);
  }
  if (Status s = write_stack(stack); !s) return fail(s);
  return stack;
}

bool stack_recorded(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::exists(stack_file(dir), ec);
}

Result<Stack> read_stack(const std::string& dir) {
  std::ifstream in(stack_file(dir));
  if (!in) {
    return Status::invalid_argument(
        fmt::format("no lab is up in {}: start one with knee lab up", dir));
  }
  const json j = json::parse(in, nullptr, false);
  const Status bad = Status::invalid_argument(
      fmt::format("{} is not a lab stack knee wrote; remove it", stack_file(dir)));
  if (!j.is_object() || !j.contains("parts") || !j.at("parts").is_array()) return bad;
  try {
    if (j.value("kind", "") != "lab_stack") return bad;
    Stack s{dir, j.value("balance", ""), j.value("next_upstream", ""), j.value("deploys", 0), {}};
    for (const json& p : j.at("parts")) {
      if (!p.is_object()) return bad;
      s.parts.push_back(StackPart{p.value("name", ""), p.value("role", ""), p.value("pid", 0),
                                  p.value("port", 0), p.value("log", ""),
                                  p.value("argv", std::vector<std::string>{}), p.value("cpu", -1)});
    }
    return s;
  } catch (const json::exception&) {  // a field of the wrong type
    return bad;
  }
}

namespace {

// totalRequests of a /health body; -1 when absent or not a count.
long long total_requests(const std::string& body) {
  const json h = json::parse(body, nullptr, false);
  if (!h.is_object()) return -1;
  const auto it = h.find("totalRequests");
  return it != h.end() && it->is_number_unsigned() ? it->get<long long>() : -1;
}

}  // namespace

std::string part_line(const StackPart& p) {
  return fmt::format("{:<6} {:<8} pid {:<7} {}://127.0.0.1:{}/  log {}{}", p.name, p.role, p.pid,
                     p.role == "cache" ? "redis"
                     : p.role == "db"  ? "postgresql"
                                       : "http",
                     p.port, p.log, p.cpu >= 0 ? fmt::format("  CPU {}", p.cpu) : "");
}

std::string status_line(const PartStatus& s) {
  return fmt::format("{:<6} {:<8} pid {:<7} port {:<5}  {}{}{}", s.part.name, s.part.role,
                     s.part.pid, s.part.port,
                     !s.alive                 ? "DOWN"
                     : s.answering            ? "up"
                     : s.part.role == "cache" ? "alive, not answering PING"
                     : s.part.role == "db"    ? "alive, not accepting connections"
                                              : "alive, not answering /health",
                     s.requests >= 0 ? fmt::format(", {} requests served", s.requests) : "",
                     s.part.cpu >= 0 ? fmt::format(", CPU {}", s.part.cpu) : "");
}

std::vector<PartStatus> stack_status(const Stack& stack) {
  std::vector<PartStatus> out;
  for (const StackPart& p : stack.parts) {
    PartStatus st{p, alive(p.pid), false, -1};
    if (st.alive && p.role == "cache") {
      st.answering = redis_pong(p.port);
    } else if (st.alive && p.role == "db") {
      st.answering = net::check_reachable(net::loopback_v4(p.port), 1s).is_ok();
    } else if (st.alive) {
      auto r = http_get(p.port, "/health");
      st.answering = r && r->first == 200;
      if (st.answering && p.role == "replica") st.requests = total_requests(r->second);
    }
    out.push_back(st);
  }
  return out;
}

pid_t working_pid(const StackPart& part) {
  if (part.role != "balancer") return part.pid;
  std::ifstream children(fmt::format("/proc/{}/task/{}/children", part.pid, part.pid));
  pid_t worker = 0;
  return children >> worker && worker > 0 ? worker : part.pid;
}

namespace {

// Each replica's /health totalRequests by name, -1 where unknown.
std::map<std::string, long long> served_by(const Stack& stack) {
  std::map<std::string, long long> out;
  for (const StackPart& p : stack.parts) {
    if (p.role == "replica") out[p.name] = requests_served(p);
  }
  return out;
}

}  // namespace

void ServedCounter::start() { before_ = served_by(stack_); }

void ServedCounter::finish(std::vector<core::ProcessUse>& backends) const {
  const std::map<std::string, long long> after = served_by(stack_);
  auto now = read_stack(stack_.dir);
  for (core::ProcessUse& b : backends) {
    const auto a = after.find(b.name);
    const auto s = before_.find(b.name);
    if (a == after.end() || s == before_.end()) continue;  // not a replica
    bool same = false;
    if (now) {
      for (const StackPart& p : now->parts) same |= p.name == b.name && p.pid == b.pid;
    }
    if (same && s->second >= 0 && a->second > s->second) {
      b.requests = static_cast<double>(a->second - s->second - 1);
    }
  }
}

long long requests_served(const StackPart& replica) {
  auto r = http_get(replica.port, "/health");
  return r && r->first == 200 ? total_requests(r->second) : -1;
}

Result<std::vector<DeployStep>> stack_deploy(Stack& stack, DeployMode mode, core::Nanos pause,
                                             const std::function<void(const DeployStep&)>& on_step,
                                             const std::atomic<bool>* interrupt) {
  std::vector<DeployStep> steps;
  ++stack.deploys;
  bool first = true;
  for (StackPart& current : stack.parts) {
    if (current.role != "replica") continue;
    if (!first) {
      // The pause in slices, so that an interrupt is not kept waiting.
      const auto until = std::chrono::steady_clock::now() + pause;
      while (!interrupted(interrupt) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(
            std::min<core::Nanos>(until - std::chrono::steady_clock::now(), 20ms));
      }
    }
    if (interrupted(interrupt)) break;
    first = false;
    const auto began = std::chrono::steady_clock::now();
    const StackPart old = current;
    StackPart next = old;
    next.log = fmt::format("{}/{}.{}.log", stack.dir, old.name, stack.deploys);
    next.port = 0;  // known once it printed its listening line
    auto port_arg = std::find(next.argv.begin(), next.argv.end(), "--port");
    if (port_arg == next.argv.end() || port_arg + 1 == next.argv.end()) {
      return Status::invalid_argument(fmt::format(
          "{}: stack.json holds no --port in its argv; knee lab down, then up", old.name));
    }
    // The new one takes the port nginx knows: knee serve listens with SO_REUSEPORT, so while
    // both run the kernel spreads new connections over the two.
    *(port_arg + 1) = std::to_string(old.port);
    if (mode == DeployMode::kGraceful &&
        std::find(next.argv.begin(), next.argv.end(), "--share-port") == next.argv.end()) {
      next.argv.push_back("--share-port");
    }
    if (mode == DeployMode::kAbrupt && alive(old.pid)) {
      if (program_of(old.pid).find("knee") == std::string::npos) {
        return Status::unavailable(fmt::format(
            "{}: pid {} now runs another program; knee lab down, then up", old.name, old.pid));
      }
      ::kill(old.pid, SIGKILL);  // with whatever it had in flight
      const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
      while (alive(old.pid)) {
        if (std::chrono::steady_clock::now() > deadline) {
          return Status::unavailable(
              fmt::format("{} (pid {}) outlived SIGKILL for 10 s", old.name, old.pid));
        }
        std::this_thread::sleep_for(1ms);
      }
    }
    auto pid = spawn(next.argv, next.log, next.cpu);
    if (!pid) return pid.status();
    next.pid = *pid;
    if (Status s = await_replica(next, began + kStartTimeout); !s) {
      stop_part(next);
      return s;
    }
    current = next;  // the stack lists the new replica from here on
    if (mode == DeployMode::kGraceful) stop_part(old);  // SIGTERM: stops accepting, drains
    steps.push_back(
        {old.name, old.pid, next.pid, old.port, next.port,
         std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count()});
    if (Status s = write_stack(stack); !s) return s;
    if (on_step) on_step(steps.back());
  }
  return steps;
}

Status stack_down(const Stack& stack) {
  // The balancer first, so nothing is routed to a replica that is going away.
  for (auto p = stack.parts.rbegin(); p != stack.parts.rend(); ++p) stop_part(*p);
  for (const StackPart& p : stack.parts) {
    if (alive(p.pid) && program_of(p.pid).find(program_name(p)) != std::string::npos) {
      // stack.json stays, so knee lab down can be tried again.
      return Status::io_error(fmt::format("{} (pid {}) is still running", p.name, p.pid));
    }
  }
  std::error_code ec;
  std::filesystem::remove(stack_file(stack.dir), ec);
  return Status::success();
}

}  // namespace knee::lab
