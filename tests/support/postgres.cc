#include "support/postgres.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "support/subprocess.h"

namespace knee::testing {
namespace {

// The newest /usr/lib/postgresql/<version>/bin holding initdb.
std::string find_bin() {
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string bin = entry.path().string() + "/bin";
    if (!std::filesystem::exists(bin + "/initdb")) continue;
    const int version = std::atoi(entry.path().filename().c_str());
    if (version > best_version) {
      best_version = version;
      best = bin;
    }
  }
  return best;
}

}  // namespace

bool PostgresServer::run_as_owner(const std::string& command, std::string* output) const {
  // Quoted for sh; the paths are ours (a temp folder, Debian's bin), with no quotes in them.
  const std::string line =
      (as_postgres_ ? "/usr/sbin/runuser -u postgres -- /bin/sh -c '" + command + "'" : command) +
      " 2>&1";
  FILE* p = ::popen(line.c_str(), "r");
  if (p == nullptr) return false;
  char buf[512];
  std::string out;
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = ::pclose(p);
  if (output != nullptr) *output = out;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::unique_ptr<PostgresServer> PostgresServer::start(std::string& error) {
  std::unique_ptr<PostgresServer> pg(new PostgresServer());
  pg->bin_ = find_bin();
  if (pg->bin_.empty()) {
    error = "no /usr/lib/postgresql/*/bin/initdb: install Debian's postgresql (make deps)";
    return nullptr;
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "knee-pg-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    error = "mkdtemp";
    return nullptr;
  }
  pg->dir_ = pattern;
  pg->as_postgres_ = ::geteuid() == 0;
  if (pg->as_postgres_) {
    const passwd* user = ::getpwnam("postgres");
    if (user == nullptr || ::chown(pg->dir_.c_str(), user->pw_uid, user->pw_gid) != 0) {
      error = "running as root, but there is no user postgres to run PostgreSQL as";
      return nullptr;
    }
  }
  pg->port_ = free_loopback_port();
  std::string out;
  if (!pg->run_as_owner(pg->bin_ + "/initdb -D " + pg->dir_ + "/data -A trust -U knee -E UTF8 " +
                            "--no-sync --no-instructions",
                        &out)) {
    error = "initdb failed: " + out;
    return nullptr;
  }
  // The watchdog: a child that waits for this process's end (EOF on the pipe) and stops the
  // server then, whatever the test binary died of.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = "pipe";
    return nullptr;
  }
  // Built before fork(): the child of a threaded process may only make async-signal-safe calls.
  const std::string stop_line = (pg->as_postgres_ ? "/usr/sbin/runuser -u postgres -- " : "") +
                                pg->bin_ + "/pg_ctl -D " + pg->dir_ +
                                "/data -m immediate stop >/dev/null 2>&1; rm -rf " + pg->dir_;
  const pid_t watchdog = ::fork();
  if (watchdog == 0) {
    // Only its own pipe: an inherited write end of another server's pipe would keep that
    // watchdog's read from ever seeing EOF.
    ::dup2(fds[0], 3);
    ::close_range(4, ~0U, 0);
    fds[0] = 3;
    char byte;
    while (::read(fds[0], &byte, 1) > 0) {
    }
    ::execl("/bin/sh", "sh", "-c", stop_line.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(fds[0]);
  pg->watchdog_fd_ = fds[1];
  pg->watchdog_ = watchdog;
  if (!pg->restart()) {
    error = "pg_ctl start failed; its log: " + pg->dir_ + "/log";
    return nullptr;
  }
  return pg;
}

bool PostgresServer::restart() {
  return run_as_owner(bin_ + "/pg_ctl -D " + dir_ + "/data -l " + dir_ + "/log -w -t 60 -o \"-p " +
                      std::to_string(port_) + " -k " + dir_ +
                      " -c listen_addresses=127.0.0.1 -c max_connections=200\" start");
}

bool PostgresServer::stop() {
  return run_as_owner(bin_ + "/pg_ctl -D " + dir_ + "/data -m fast -w stop");
}

PostgresServer::~PostgresServer() {
  if (!dir_.empty() && std::filesystem::exists(dir_ + "/data/postmaster.pid")) stop();
  if (watchdog_fd_ >= 0) ::close(watchdog_fd_);  // the watchdog's stop finds nothing running
  if (watchdog_ > 0) ::waitpid(watchdog_, nullptr, 0);
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

std::string PostgresServer::url(const std::string& database) const {
  return "postgresql://knee@127.0.0.1:" + std::to_string(port_) + "/" + database;
}

std::string PostgresServer::create_database(const std::string& name) {
  PGconn* c = PQconnectdb(url().c_str());
  bool ok = PQstatus(c) == CONNECTION_OK;
  if (ok) {
    PGresult* r = PQexec(c, ("CREATE DATABASE " + name).c_str());
    ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
  }
  PQfinish(c);
  return ok ? url(name) : "";
}

}  // namespace knee::testing
