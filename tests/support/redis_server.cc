#include "support/redis_server.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <thread>

namespace knee::testing {

std::unique_ptr<RedisServer> RedisServer::start(std::string& error) {
  std::unique_ptr<RedisServer> r(new RedisServer());
  r->port_ = free_loopback_port();
  // sh prints the line BackgroundProcess waits for, then becomes redis-server (same pid).
  r->process_ = std::make_unique<BackgroundProcess>(std::vector<std::string>{
      "/bin/sh", "-c",
      "echo starting; exec /usr/bin/redis-server --port " + std::to_string(r->port_) +
          " --bind 127.0.0.1 --save '' --appendonly no --daemonize no --dir " + r->dir_.path() +
          " --logfile " + r->dir_.file("redis.log")});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    redisContext* c = redisConnectWithTimeout("127.0.0.1", r->port_, timeval{0, 200'000});
    if (c != nullptr && c->err == 0) {
      auto* pong = static_cast<redisReply*>(redisCommand(c, "PING"));
      const bool ok = pong != nullptr && pong->type == REDIS_REPLY_STATUS;
      if (pong != nullptr) freeReplyObject(pong);
      redisFree(c);
      if (ok) return r;
    } else if (c != nullptr) {
      redisFree(c);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  error = "redis-server did not answer PING on port " + std::to_string(r->port_) +
          " (is Debian's redis-server installed? make deps)";
  return nullptr;
}

}  // namespace knee::testing
