// TtlLruCache: the shipment service's in-process read cache, string keys to values, bounded in
// entries (least recently used evicted first) and in age (an entry older than the TTL is a miss
// and is dropped). Hits and misses are counted for /health and /metrics.
//
// The time is passed in by the caller (a core::TimePoint), so tests move it without sleeping.
// Thread-safety: every member may be called from any thread; the entries are split over 16
// shards by key hash, each behind its own mutex, so the lab's loop threads and store threads
// rarely wait for one another.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/clock.h"

namespace knee::lab {

template <typename V>
class TtlLruCache {
 public:
  // `capacity` entries in all (0: every lookup misses, nothing is kept), each kept for at most
  // `ttl` after it was put.
  TtlLruCache(size_t capacity, core::Nanos ttl)
      : per_shard_(capacity == 0 ? 0 : std::max<size_t>(1, capacity / kShards)), ttl_(ttl) {}

  // The value under `key` when present and younger than the TTL at `now` (it becomes the most
  // recently used); nullopt otherwise. Counts a hit or a miss.
  std::optional<V> get(std::string_view key, core::TimePoint now) {
    Shard& s = shard_of(key);
    {
      std::lock_guard lock(s.mutex);
      auto it = s.index.find(key);
      if (it != s.index.end()) {
        if (now - it->second->put_at < ttl_) {
          s.order.splice(s.order.begin(), s.order, it->second);
          ++s.hits;
          return it->second->value;
        }
        s.order.erase(it->second);
        s.index.erase(it);
      }
      ++s.misses;
    }
    return std::nullopt;
  }

  // Keeps `value` under `key` from `now`, replacing what was there and evicting the least
  // recently used entry of its shard when full.
  void put(std::string_view key, V value, core::TimePoint now) {
    put_if(key, std::move(value), now, [](const V&) { return true; });
  }

  // put(), except that an entry already there and fresh at `now` is replaced only when
  // `replace(existing)` says so (a write-through that must not undo a newer value). Counts
  // neither a hit nor a miss.
  template <typename Replace>
  void put_if(std::string_view key, V value, core::TimePoint now, Replace replace) {
    if (per_shard_ == 0) return;
    Shard& s = shard_of(key);
    std::lock_guard lock(s.mutex);
    auto it = s.index.find(key);
    if (it != s.index.end()) {
      if (now - it->second->put_at < ttl_ && !replace(std::as_const(it->second->value))) return;
      it->second->value = std::move(value);
      it->second->put_at = now;
      s.order.splice(s.order.begin(), s.order, it->second);
      return;
    }
    if (s.index.size() >= per_shard_) {
      s.index.erase(std::string_view(s.order.back().key));
      s.order.pop_back();
    }
    s.order.push_front(Entry{std::string(key), std::move(value), now});
    s.index.emplace(std::string_view(s.order.front().key), s.order.begin());
  }

  // Replaces the value under `key` only when an entry is there, fresh at `now`, and
  // `replace(existing)` says so; never adds one. A write-through that knows it has a newer value
  // than what is cached, but not that it has the newest of all (an event may arrive out of
  // order): a missing entry is left to the next read, which takes it from the store.
  template <typename Replace>
  void refresh_if(std::string_view key, V value, core::TimePoint now, Replace replace) {
    Shard& s = shard_of(key);
    std::lock_guard lock(s.mutex);
    auto it = s.index.find(key);
    if (it == s.index.end() || now - it->second->put_at >= ttl_) return;
    if (!replace(std::as_const(it->second->value))) return;
    it->second->value = std::move(value);
    it->second->put_at = now;
    s.order.splice(s.order.begin(), s.order, it->second);
  }

  uint64_t hits() const { return sum(&Shard::hits); }
  uint64_t misses() const { return sum(&Shard::misses); }
  // Entries held now (some may have outlived the TTL and not been looked up since).
  size_t size() const {
    size_t n = 0;
    for (const Shard& s : shards_) {
      std::lock_guard lock(s.mutex);
      n += s.index.size();
    }
    return n;
  }

 private:
  static constexpr size_t kShards = 16;
  struct Entry {
    std::string key;
    V value;
    core::TimePoint put_at;
  };
  struct Shard {
    mutable std::mutex mutex;
    std::list<Entry> order;  // most recently used first
    // Keys view the entries' own strings, which a std::list never moves.
    std::unordered_map<std::string_view, typename std::list<Entry>::iterator> index;
    // Counted under the shard's mutex, already held: no shared counter on the read path.
    uint64_t hits = 0;
    uint64_t misses = 0;
  };
  uint64_t sum(uint64_t Shard::*counter) const {
    uint64_t n = 0;
    for (const Shard& s : shards_) {
      std::lock_guard lock(s.mutex);
      n += s.*counter;
    }
    return n;
  }
  Shard& shard_of(std::string_view key) {
    return shards_[std::hash<std::string_view>{}(key) % kShards];
  }

  size_t per_shard_;
  core::Nanos ttl_;
  std::array<Shard, kShards> shards_;
};

}  // namespace knee::lab
