// A redis-server of the test's own (Debian's), on a free loopback port, no persistence, in a
// temporary folder; SIGTERM and the folder removed by the destructor.
#pragma once

#include <memory>
#include <string>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee::testing {

class RedisServer {
 public:
  // Starts it and waits (up to 10 s) until it answers PING. On failure returns null and says why.
  static std::unique_ptr<RedisServer> start(std::string& error);
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  // Stops it (SIGTERM, waited for).
  void stop() { process_.reset(); }

 private:
  RedisServer() = default;
  TempDir dir_{"knee-redis"};
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

}  // namespace knee::testing
