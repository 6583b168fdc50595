// The shipment tracking service (seed 000's read and write flows) behind the lab server's
// GET /tracking/{no} and POST /events, on a real store (store/store.h).
//
// The event loops never block on the store: a request that needs it is handed to the service's
// store threads (a pool of readers, each with its own connection, and one writer that commits
// events in groups), and the answer comes back through the loop's ReplyQueue, which wakes it.
// Reads go through a cache first: a TtlLruCache in process (checked on the loop thread), or Redis
// (checked on the store thread, lab/redis_cache.h). A committed event refreshes a cached state
// older than itself (in process) or deletes it (Redis), so a read after a 201 sees the event
// unless the shipment already had a newer one.
//
// Group commit (seed 001's trade): the writer takes up to `commit_batch` queued events into one
// transaction, one fsync for all of them. With `commit_delay` 0 it commits what is queued at once;
// otherwise it waits up to `commit_delay` after the oldest queued event for the batch to fill.
// A 201 leaves only after the commit that made its event durable returned.
//
// Ownership: the service owns its threads and stores; destroying it finishes the work queued
// (every request gets its reply) and joins them. Thread-safety: every public member may be
// called from any thread.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "lab/metrics.h"
#include "lab/redis_cache.h"
#include "lab/ttl_cache.h"
#include "net/event_loop.h"
#include "store/store.h"

namespace knee::lab {

// The store threads' answer to one request: whose it is (the connection's slot and generation),
// the HTTP status and the JSON body.
struct StoreReply {
  net::EventTag tag;
  int status = 200;
  std::string body;
};

// A loop thread's inbox for StoreReply: store threads push, the loop takes.
class ReplyQueue {
 public:
  // `wake` makes the owning loop return from its wait (net::EventLoop::wake).
  explicit ReplyQueue(std::function<void()> wake) : wake_(std::move(wake)) {}
  void push(StoreReply reply);
  // Moves the waiting replies into `out` (emptied first); one atomic load when there are none.
  void take(std::vector<StoreReply>& out);

 private:
  std::function<void()> wake_;
  std::mutex mutex_;
  std::vector<StoreReply> items_;
  std::atomic<bool> pending_{false};
};

struct ServiceOptions {
  std::string database;  // the store: an SQLite file or a postgresql:// URL (store::open_store)
  int readers = 4;       // store threads for reads, 1..64
  // Read cache: in process (empty), or Redis at a redis://HOST:PORT[/DB] URL (lab/redis_cache.h).
  std::string cache_url;
  // The in-process cache's entries (0: none), and how long an entry stays fresh (both caches).
  size_t cache_entries = 100'000;
  core::Nanos cache_ttl = std::chrono::seconds(5);
  int commit_batch = 1;         // events per commit at most, 1..10000
  core::Nanos commit_delay{0};  // how long a commit may wait for its batch to fill
};

class ShipmentService {
 public:
  // Checks the options, opens one store per thread (so a missing or foreign database fails here,
  // before the server listens) and starts the threads. Errors: kInvalidArgument for options out
  // of range or a database that is not a knee data set; those of store::open_store;
  // kUnavailable for a Redis cache that does not answer.
  static core::Result<std::unique_ptr<ShipmentService>> start(const ServiceOptions& options);
  ~ShipmentService();
  ShipmentService(const ShipmentService&) = delete;
  ShipmentService& operator=(const ShipmentService&) = delete;

  // GET /tracking/{no} from the cache: true, with the 200 body appended to `body`, on a hit.
  bool read_cached(std::string_view tracking_no, std::string& body);
  // GET /tracking/{no} from the store (after a miss): the reply, 200, 404 (no such shipment) or
  // 503 (the store failed, with its reason), goes to `replies` with `tag`.
  void read(ReplyQueue& replies, net::EventTag tag, std::string tracking_no);
  // POST /events: the reply, 201 once the event is durable, 404 for an unknown tracking number or
  // 503, goes to `replies` with `tag`.
  void write(ReplyQueue& replies, net::EventTag tag, store::Event event);

  // POST /billing/run: the batch flow for `date` by `method` on a thread and store connection of
  // its own, so reads and writes go on meanwhile (their latency then shows the batch's cost).
  // The reply, 200 with the run's figures (append_billing_json), 400 for a bad date, 409 while
  // another run is going, or 503, goes to `replies` with `tag`.
  void bill(ReplyQueue& replies, net::EventTag tag, std::string date, store::BillingMethod method);

  // The service's part of /metrics (lab/metrics.h): knee_lab_cache_{hits,misses}_total,
  // knee_lab_cache_entries, knee_lab_store_{reads,commits,events_committed,errors}_total,
  // knee_lab_commit_batch_size (a histogram of events per commit) and
  // knee_lab_store_duration_seconds{op="read"|"commit"|"billing"}.
  void append_metrics(std::string& out) const;

  // The service's part of /health: ,"store":{...},"cache":{...} (a leading comma, no braces
  // around it), from relaxed counters.
  void append_health(std::string& out) const;

 private:
  struct ReadJob {
    ReplyQueue* replies;
    net::EventTag tag;
    std::string tracking_no;
  };
  struct WriteJob {
    ReplyQueue* replies;
    net::EventTag tag;
    store::Event event;
    core::TimePoint queued;
  };

  explicit ShipmentService(const ServiceOptions& options);
  void read_loop(store::Store& store, RedisCache* redis);
  void write_loop(store::Store& store, RedisCache* redis);
  uint64_t cache_hits() const;
  uint64_t cache_misses() const;

  ServiceOptions options_;
  std::string kind_;
  TtlLruCache<store::TrackingState> cache_;
  std::vector<std::unique_ptr<store::Store>> stores_;  // readers, then the writer
  std::vector<std::unique_ptr<RedisCache>> redis_;     // likewise, with --cache redis://
  std::vector<std::thread> threads_;

  std::mutex read_mutex_;
  std::condition_variable read_ready_;
  std::deque<ReadJob> reads_;
  std::mutex write_mutex_;
  std::condition_variable write_ready_;
  std::deque<WriteJob> writes_;
  bool stopping_ = false;  // under both mutexes

  std::mutex billing_mutex_;
  std::thread billing_thread_;    // the last run's, joined before the next and at the end
  bool billing_running_ = false;  // under billing_mutex_
  // The running job's store, under billing_mutex_: a stop interrupts it rather than waiting.
  store::Store* billing_store_ = nullptr;

  // Events per commit: 1 to 1024 in powers of two.
  static constexpr std::array<double, 11> kBatchBounds = {1,  2,   4,   8,   16,  32,
                                                          64, 128, 256, 512, 1024};
  Histogram<11> batch_sizes_;
  Histogram<kLatencyBucketsS.size()> read_ns_, commit_ns_, billing_ns_;

  std::atomic<uint64_t> redis_hits_{0};
  std::atomic<uint64_t> redis_misses_{0};
  std::atomic<uint64_t> store_reads_{0};
  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> events_committed_{0};
  std::atomic<uint64_t> store_errors_{0};
};

// Parses POST /events' body, a JSON object: "no" (tracking number), "state", "zone" (strings of
// 1 to 64 bytes), "step" (an integer 1..1000) and optionally "atMs" (Unix ms; default now).
// Errors: kInvalidArgument with the reason the 400 carries ("missing field 'state'").
core::Result<store::Event> parse_event(std::string_view json);

// Appends a billing run as POST /billing/run answers it: {"date":..,"method":"row"|"set",
// "windowStartMs":..,"windowEndMs":..,"records":N,"sellers":S,"amountCents":A,"seconds":T,
// "recordsPerSecond":R}.
void append_billing_json(std::string& out, const store::BillingRun& run);

// Appends a shipment's state as /tracking/{no} answers it:
// {"no":"KN0000000042","state":"at transit hub","zone":"35","step":3,"atMs":1767236400000}.
void append_tracking_json(std::string& out, const store::TrackingState& state);

}  // namespace knee::lab
