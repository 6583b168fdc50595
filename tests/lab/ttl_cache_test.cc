#include "lab/ttl_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace knee::lab {
namespace {

using namespace std::chrono_literals;

const core::TimePoint kT0{std::chrono::seconds(100)};

TEST(TtlLruCache, HitsWithinTheTtlAndMissesAfter) {
  TtlLruCache<int> cache(100, 5s);
  EXPECT_FALSE(cache.get("a", kT0));
  cache.put("a", 1, kT0);
  EXPECT_EQ(cache.get("a", kT0 + 4999ms), 1);
  EXPECT_FALSE(cache.get("a", kT0 + 5s)) << "at the TTL the entry is stale";
  EXPECT_FALSE(cache.get("a", kT0 + 4s)) << "a stale entry is dropped, not revived";
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 3u);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(TtlLruCache, EvictsTheLeastRecentlyUsedWhenFull) {
  // 16 shards of one entry each: keys that share a shard evict each other.
  TtlLruCache<int> cache(16, 60s);
  std::vector<std::string> keys;
  for (int i = 0; i < 400; ++i) keys.push_back("k" + std::to_string(i));
  for (int i = 0; i < 400; ++i) cache.put(keys[static_cast<size_t>(i)], i, kT0);
  EXPECT_LE(cache.size(), 16u);
  EXPECT_EQ(cache.get(keys.back(), kT0), 399) << "the newest entry is kept";
}

TEST(TtlLruCache, AGetMakesAnEntryRecentlyUsed) {
  TtlLruCache<int> cache(32, 60s);  // two entries per shard
  // Three keys of one shard: after a, b, get(a), c, the evicted one is b.
  std::vector<std::string> same;
  const size_t shard = std::hash<std::string_view>{}("seed") % 16;
  for (int i = 0; same.size() < 3; ++i) {
    std::string k = "x" + std::to_string(i);
    if (std::hash<std::string_view>{}(k) % 16 == shard) same.push_back(k);
  }
  cache.put(same[0], 0, kT0);
  cache.put(same[1], 1, kT0);
  EXPECT_EQ(cache.get(same[0], kT0), 0);
  cache.put(same[2], 2, kT0);
  EXPECT_EQ(cache.get(same[0], kT0), 0);
  EXPECT_FALSE(cache.get(same[1], kT0));
  EXPECT_EQ(cache.get(same[2], kT0), 2);
}

TEST(TtlLruCache, PutIfKeepsANewerFreshValue) {
  TtlLruCache<int> cache(100, 5s);
  cache.put("a", 10, kT0);
  cache.put_if("a", 5, kT0 + 1s, [](int old) { return old <= 5; });
  EXPECT_EQ(cache.get("a", kT0 + 1s), 10);
  cache.put_if("a", 20, kT0 + 1s, [](int old) { return old <= 20; });
  EXPECT_EQ(cache.get("a", kT0 + 1s), 20);
  // A stale entry is replaced whatever it holds.
  cache.put_if("a", 1, kT0 + 10s, [](int) { return false; });
  EXPECT_EQ(cache.get("a", kT0 + 10s), 1);
}

TEST(TtlLruCache, ZeroCapacityKeepsNothing) {
  TtlLruCache<int> cache(0, 5s);
  cache.put("a", 1, kT0);
  EXPECT_FALSE(cache.get("a", kT0));
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace knee::lab
