// The shipment service's read cache in Redis (`knee serve --cache redis://HOST:PORT`), through
// hiredis, used from the store threads (each with its own connection) since its calls block:
// GET on a read, SET ... PX ttl NX after a store read, DEL after a committed event (the event
// may be older than the shipment's latest state, which only the store knows). A value is the JSON
// body /tracking/{no} answers, so a hit is answered as it is. Keys: "knee:tracking:<no>".
//
// A Redis that is away costs a miss, never a failed request: the read goes to the store, and
// the connection is re-established on a later call (at most once per second). One that hangs
// costs each store thread at most one 100 ms call timeout per second.
// Thread-safety: one RedisCache per thread; only errors() may be read from any.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

struct redisContext;

namespace knee::lab {

// The parts of a redis://HOST[:PORT][/DB] URL (port 6379, database 0 by default).
struct RedisAddress {
  std::string host;
  int port = 6379;
  int database = 0;
};

// Errors: kInvalidArgument naming what is wrong and the accepted form.
core::Result<RedisAddress> parse_redis_url(std::string_view url);

class RedisCache {
 public:
  // Connects (1 s timeout) and selects the database. Errors: kUnavailable with hiredis's reason.
  static core::Result<std::unique_ptr<RedisCache>> connect(const RedisAddress& address,
                                                           core::Nanos ttl);
  ~RedisCache();
  RedisCache(const RedisCache&) = delete;
  RedisCache& operator=(const RedisCache&) = delete;

  // The cached body for `tracking_no`; nullopt on a miss or while Redis is away.
  std::optional<std::string> get(std::string_view tracking_no);
  // SET with the TTL; `only_if_absent` adds NX. Failures are dropped (a cache is optional).
  void put(std::string_view tracking_no, std::string_view body, bool only_if_absent);
  // DEL: the next read takes the state from the store. Failures are dropped.
  void forget(std::string_view tracking_no);

  // Calls that failed (Redis away, an error reply), any thread may read.
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }

 private:
  RedisCache(RedisAddress address, core::Nanos ttl) : address_(std::move(address)), ttl_(ttl) {}
  bool ready();  // connected, or reconnected now; false while away

  RedisAddress address_;
  core::Nanos ttl_;
  redisContext* context_ = nullptr;
  core::TimePoint retry_at_{};
  std::atomic<uint64_t> errors_{0};  // written by the owning thread only
};

}  // namespace knee::lab
