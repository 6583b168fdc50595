#include "lab/redis_cache.h"

#include <fmt/core.h>
#include <hiredis/hiredis.h>

#include <charconv>

namespace knee::lab {

using core::Result;
using core::Status;

namespace {

constexpr std::string_view kKeyPrefix = "knee:tracking:";

std::string key_of(std::string_view no) { return std::string(kKeyPrefix) + std::string(no); }

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

redisContext* open_context(const RedisAddress& a, std::string& error) {
  redisContext* c = redisConnectWithTimeout(a.host.c_str(), a.port, timeval{1, 0});
  if (c == nullptr) {
    error = "out of memory";
    return nullptr;
  }
  if (c->err != 0) {
    error = c->errstr;
    redisFree(c);
    return nullptr;
  }
  // A Redis that hangs (rather than refusing) costs at most this per call, and then nothing for
  // a second (ready() waits that long to reconnect): a read never waits long for a cache.
  redisSetTimeout(c, timeval{0, 100'000});
  if (a.database != 0) {
    Reply r(static_cast<redisReply*>(redisCommand(c, "SELECT %d", a.database)));
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      error = r != nullptr ? std::string(r->str, r->len) : std::string(c->errstr);
      redisFree(c);
      return nullptr;
    }
  }
  return c;
}

}  // namespace

Result<RedisAddress> parse_redis_url(std::string_view url) {
  const Status bad = Status::invalid_argument(fmt::format(
      "'{}' is not a Redis URL; give redis://HOST[:PORT][/DB], e.g. redis://127.0.0.1:6379", url));
  constexpr std::string_view kScheme = "redis://";
  if (!url.starts_with(kScheme)) return bad;
  std::string_view rest = url.substr(kScheme.size());
  RedisAddress a;
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), a.database);
    if (db.empty() || ec != std::errc() || p != db.data() + db.size() || a.database < 0) return bad;
    rest = rest.substr(0, slash);
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    const std::string_view port = rest.substr(colon + 1);
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
    if (ec != std::errc() || p != port.data() + port.size() || a.port < 1 || a.port > 65535) {
      return bad;
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty() || rest.find('@') != std::string_view::npos) return bad;
  a.host = std::string(rest);
  return a;
}

Result<std::unique_ptr<RedisCache>> RedisCache::connect(const RedisAddress& address,
                                                        core::Nanos ttl) {
  std::unique_ptr<RedisCache> cache(new RedisCache(address, ttl));
  std::string error;
  cache->context_ = open_context(address, error);
  if (cache->context_ == nullptr) {
    return Status::unavailable(fmt::format("redis {}:{}: {}", address.host, address.port, error));
  }
  Reply pong(static_cast<redisReply*>(redisCommand(cache->context_, "PING")));
  if (pong == nullptr || pong->type == REDIS_REPLY_ERROR) {
    return Status::unavailable(fmt::format("redis {}:{}: PING: {}", address.host, address.port,
                                           pong != nullptr ? pong->str : cache->context_->errstr));
  }
  return cache;
}

RedisCache::~RedisCache() {
  if (context_ != nullptr) redisFree(context_);
}

bool RedisCache::ready() {
  if (context_ != nullptr && context_->err == 0) return true;
  const core::TimePoint now = core::Clock::now();
  if (now < retry_at_) return false;
  retry_at_ = now + std::chrono::seconds(1);
  if (context_ != nullptr) redisFree(context_);
  std::string error;
  context_ = open_context(address_, error);
  return context_ != nullptr;
}

std::optional<std::string> RedisCache::get(std::string_view tracking_no) {
  if (!ready()) return std::nullopt;
  const std::string key = key_of(tracking_no);
  Reply r(static_cast<redisReply*>(redisCommand(context_, "GET %b", key.data(), key.size())));
  if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  if (r->type != REDIS_REPLY_STRING) return std::nullopt;
  return std::string(r->str, r->len);
}

void RedisCache::put(std::string_view tracking_no, std::string_view body, bool only_if_absent) {
  if (!ready()) return;
  const std::string key = key_of(tracking_no);
  const long long ttl_ms =
      std::max<long long>(1, std::chrono::duration_cast<std::chrono::milliseconds>(ttl_).count());
  Reply r(static_cast<redisReply*>(
      only_if_absent ? redisCommand(context_, "SET %b %b PX %lld NX", key.data(), key.size(),
                                    body.data(), body.size(), ttl_ms)
                     : redisCommand(context_, "SET %b %b PX %lld", key.data(), key.size(),
                                    body.data(), body.size(), ttl_ms)));
  if (r == nullptr || r->type == REDIS_REPLY_ERROR) errors_.fetch_add(1, std::memory_order_relaxed);
}

void RedisCache::forget(std::string_view tracking_no) {
  if (!ready()) return;
  const std::string key = key_of(tracking_no);
  Reply r(static_cast<redisReply*>(redisCommand(context_, "DEL %b", key.data(), key.size())));
  if (r == nullptr || r->type == REDIS_REPLY_ERROR) errors_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace knee::lab
