// A PostgreSQL of the test's own: initdb in a temporary folder, postgres on a free loopback port
// (and a Unix socket in that folder), trust authentication for the user "knee", no root service.
// Debian's binaries (/usr/lib/postgresql/<version>/bin). As root (CI) it runs as the user
// postgres, since PostgreSQL refuses to run as root.
//
// Stopped, and its folder removed, by the destructor; and by a watchdog process should the test
// binary die first (a crash, an abort from a sanitizer), so no server outlives the test.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace knee::testing {

class PostgresServer {
 public:
  // Starts a fresh cluster. On failure returns null and says why in `error`.
  static std::unique_ptr<PostgresServer> start(std::string& error);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  // postgresql://knee@127.0.0.1:PORT/DB
  std::string url(const std::string& database = "postgres") const;
  // Creates a new, empty database; returns its URL (an empty string on failure).
  std::string create_database(const std::string& name);

  // Stops the server (pg_ctl stop -m fast) and starts it again on the same port and data.
  bool stop();
  bool restart();

 private:
  PostgresServer() = default;
  bool run_as_owner(const std::string& command, std::string* output = nullptr) const;

  std::string dir_;
  std::string bin_;
  int port_ = 0;
  bool as_postgres_ = false;
  int watchdog_fd_ = -1;
  pid_t watchdog_ = -1;
};

}  // namespace knee::testing
