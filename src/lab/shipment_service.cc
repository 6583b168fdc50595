#include "lab/shipment_service.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "lab/endpoints.h"

namespace knee::lab {

using core::Result;
using core::Status;

void ReplyQueue::push(StoreReply reply) {
  {
    std::lock_guard lock(mutex_);
    items_.push_back(std::move(reply));
  }
  pending_.store(true, std::memory_order_release);
  wake_();
}

void ReplyQueue::take(std::vector<StoreReply>& out) {
  out.clear();
  if (!pending_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  pending_.store(false, std::memory_order_relaxed);
  out.swap(items_);
}

void append_tracking_json(std::string& out, const store::TrackingState& s) {
  out.append(R"({"no":)");
  append_json_string(out, s.tracking_no);
  out.append(R"(,"state":)");
  append_json_string(out, s.state);
  out.append(R"(,"zone":)");
  append_json_string(out, s.zone);
  fmt::format_to(std::back_inserter(out), R"(,"step":{},"atMs":{}}})", s.step, s.at_ms);
}

namespace {

std::string error_body(std::string_view reason) {
  std::string out = R"({"error":)";
  append_json_string(out, reason);
  out.push_back('}');
  return out;
}

// 9999-12-31T23:59:59.999Z: the latest event time taken.
constexpr int64_t kMaxEventMs = 253'402'300'799'999;

int64_t wall_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<store::Event> parse_event(std::string_view json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::invalid_argument("the body is not JSON");
  if (!doc.is_object()) return Status::invalid_argument("the body is not a JSON object");
  store::Event e;
  for (auto [name, out] : {std::pair{"no", &e.tracking_no}, std::pair{"state", &e.state},
                           std::pair{"zone", &e.zone}}) {
    auto it = doc.find(name);
    if (it == doc.end()) return Status::invalid_argument(fmt::format("missing field '{}'", name));
    if (!it->is_string()) {
      return Status::invalid_argument(fmt::format("field '{}' is not a string", name));
    }
    *out = it->get<std::string>();
    if (out->empty() || out->size() > 64) {
      return Status::invalid_argument(fmt::format("field '{}' must have 1 to 64 bytes", name));
    }
  }
  auto step = doc.find("step");
  if (step == doc.end()) return Status::invalid_argument("missing field 'step'");
  if (!step->is_number_integer() || step->get<int64_t>() < 1 || step->get<int64_t>() > 1000) {
    return Status::invalid_argument("field 'step' must be an integer from 1 to 1000");
  }
  e.step = step->get<int>();
  auto at = doc.find("atMs");
  if (at == doc.end()) {
    e.at_ms = wall_ms_now();
  } else if (!at->is_number_integer() || at->get<int64_t>() < 0 ||
             at->get<int64_t>() > kMaxEventMs) {
    // Regression: 9223372036854775807 was taken, and that event stayed the newest for ever.
    return Status::invalid_argument(
        "field 'atMs' must be Unix milliseconds, an integer from 0 to 253402300799999 (year "
        "9999)");
  } else {
    e.at_ms = at->get<int64_t>();
  }
  return e;
}

ShipmentService::ShipmentService(const ServiceOptions& options)
    // With Redis the in-process cache keeps nothing (its puts return at once).
    : options_(options),
      cache_(options.cache_url.empty() ? options.cache_entries : 0, options.cache_ttl) {}

Result<std::unique_ptr<ShipmentService>> ShipmentService::start(const ServiceOptions& options) {
  if (options.readers < 1 || options.readers > 64) {
    return Status::invalid_field("store_threads",
                                 fmt::format("{} store threads; give 1 to 64", options.readers));
  }
  if (options.commit_batch < 1 || options.commit_batch > 10'000) {
    return Status::invalid_field(
        "commit_batch", fmt::format("{} events per commit; give 1 to 10000", options.commit_batch));
  }
  if (options.commit_delay < core::Nanos(0) || options.commit_delay > std::chrono::seconds(1)) {
    return Status::invalid_field("commit_delay", "give a wait from 0 to 1s, e.g. 200us");
  }
  std::optional<RedisAddress> redis;
  if (!options.cache_url.empty()) {
    auto address = parse_redis_url(options.cache_url);
    if (!address) return address.status().with_field("cache");
    redis = *address;
  }
  auto service = std::unique_ptr<ShipmentService>(new ShipmentService(options));
  for (int i = 0; i <= options.readers; ++i) {
    auto store = store::open_store(options.database);
    if (!store) return store.status();
    service->kind_ = std::string((*store)->kind());
    service->stores_.push_back(std::move(store).value());
    if (redis) {
      auto cache = RedisCache::connect(*redis, options.cache_ttl);
      if (!cache) return cache.status();
      service->redis_.push_back(std::move(cache).value());
    }
  }
  auto redis_of = [&](size_t i) { return redis ? service->redis_[i].get() : nullptr; };
  for (size_t i = 0; i < static_cast<size_t>(options.readers); ++i) {
    service->threads_.emplace_back(
        [s = service.get(), i, r = redis_of(i)] { s->read_loop(*s->stores_[i], r); });
  }
  service->threads_.emplace_back([s = service.get(), r = redis_of(service->stores_.size() - 1)] {
    s->write_loop(*s->stores_.back(), r);
  });
  return service;
}

ShipmentService::~ShipmentService() {
  std::thread billing;
  {
    std::lock_guard lock(billing_mutex_);
    billing = std::move(billing_thread_);
    // A billing run may last hours: a stopping server interrupts it (its charges stay as they
    // were) instead of waiting. Regression: SIGTERM waited for the job to end.
    if (billing_store_ != nullptr) billing_store_->interrupt();
  }
  if (billing.joinable()) billing.join();  // it takes billing_mutex_ as it ends
  {
    std::scoped_lock lock(read_mutex_, write_mutex_);
    stopping_ = true;
  }
  read_ready_.notify_all();
  write_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool ShipmentService::read_cached(std::string_view tracking_no, std::string& body) {
  if (!redis_.empty()) return false;  // Redis is asked on the store thread: its calls block
  std::optional<store::TrackingState> hit = cache_.get(tracking_no, core::Clock::now());
  if (!hit) return false;
  append_tracking_json(body, *hit);
  return true;
}

void ShipmentService::read(ReplyQueue& replies, net::EventTag tag, std::string tracking_no) {
  {
    std::lock_guard lock(read_mutex_);
    reads_.push_back(ReadJob{&replies, tag, std::move(tracking_no)});
  }
  read_ready_.notify_one();
}

void ShipmentService::write(ReplyQueue& replies, net::EventTag tag, store::Event event) {
  {
    std::lock_guard lock(write_mutex_);
    writes_.push_back(WriteJob{&replies, tag, std::move(event), core::Clock::now()});
  }
  write_ready_.notify_one();
}

uint64_t ShipmentService::cache_hits() const {
  return redis_.empty() ? cache_.hits() : redis_hits_.load(std::memory_order_relaxed);
}

uint64_t ShipmentService::cache_misses() const {
  return redis_.empty() ? cache_.misses() : redis_misses_.load(std::memory_order_relaxed);
}

void ShipmentService::read_loop(store::Store& store, RedisCache* redis) {
  while (true) {
    ReadJob job;
    {
      std::unique_lock lock(read_mutex_);
      read_ready_.wait(lock, [&] { return stopping_ || !reads_.empty(); });
      if (reads_.empty()) return;  // stopping, and every queued read answered
      job = std::move(reads_.front());
      reads_.pop_front();
    }
    if (redis != nullptr) {
      if (std::optional<std::string> hit = redis->get(job.tracking_no)) {
        redis_hits_.fetch_add(1, std::memory_order_relaxed);
        job.replies->push(StoreReply{job.tag, 200, std::move(*hit)});
        continue;
      }
      redis_misses_.fetch_add(1, std::memory_order_relaxed);
    }
    store_reads_.fetch_add(1, std::memory_order_relaxed);
    const core::TimePoint asked = core::Clock::now();
    auto state = store.latest_state(job.tracking_no);
    read_ns_.observe(kLatencyBucketsS, 1e9,
                     static_cast<uint64_t>(core::elapsed_ns(asked, core::Clock::now())));
    StoreReply reply{job.tag, 200, {}};
    if (!state) {
      store_errors_.fetch_add(1, std::memory_order_relaxed);
      reply.status = 503;
      reply.body = error_body("store: " + state.status().message());
    } else if (!state->has_value()) {
      reply.status = 404;
      reply.body = error_body("no shipment " + job.tracking_no);
    } else {
      append_tracking_json(reply.body, **state);
      // NX: a write-through of an event committed meanwhile is not undone.
      if (redis != nullptr) redis->put(job.tracking_no, reply.body, /*only_if_absent=*/true);
      const int64_t at_ms = (*state)->at_ms;  // an event committed meanwhile is not undone
      cache_.put_if(job.tracking_no, std::move(**state), core::Clock::now(),
                    [&](const store::TrackingState& cached) { return cached.at_ms <= at_ms; });
    }
    job.replies->push(std::move(reply));
  }
}

void ShipmentService::write_loop(store::Store& store, RedisCache* redis) {
  std::vector<WriteJob> batch;
  std::vector<store::Event> events;
  std::vector<bool> found;
  const size_t limit = static_cast<size_t>(options_.commit_batch);
  while (true) {
    {
      std::unique_lock lock(write_mutex_);
      write_ready_.wait(lock, [&] { return stopping_ || !writes_.empty(); });
      if (writes_.empty()) return;
      if (limit > 1 && options_.commit_delay > core::Nanos(0)) {
        write_ready_.wait_until(lock, writes_.front().queued + options_.commit_delay,
                                [&] { return stopping_ || writes_.size() >= limit; });
      }
      batch.clear();
      while (!writes_.empty() && batch.size() < limit) {
        batch.push_back(std::move(writes_.front()));
        writes_.pop_front();
      }
    }
    events.clear();
    for (const WriteJob& job : batch) events.push_back(job.event);
    const core::TimePoint asked = core::Clock::now();
    const Status committed = store.append_events(events, found);
    commit_ns_.observe(kLatencyBucketsS, 1e9,
                       static_cast<uint64_t>(core::elapsed_ns(asked, core::Clock::now())));
    if (committed) {
      batch_sizes_.observe(kBatchBounds, 1, batch.size());
      commits_.fetch_add(1, std::memory_order_relaxed);
      events_committed_.fetch_add(batch.size(), std::memory_order_relaxed);
    } else {
      store_errors_.fetch_add(1, std::memory_order_relaxed);
    }
    const core::TimePoint now = core::Clock::now();
    for (size_t i = 0; i < batch.size(); ++i) {
      StoreReply reply{batch[i].tag, 201, {}};
      const store::Event& e = batch[i].event;
      if (!committed) {
        reply.status = 503;
        reply.body = error_body("store: " + committed.message());
      } else if (!found[i]) {
        reply.status = 404;
        reply.body = error_body("no shipment " + e.tracking_no);
      } else {
        const store::TrackingState state{e.tracking_no, e.state, e.zone, e.step, e.at_ms};
        append_tracking_json(reply.body, state);
        // The event is not the shipment's latest when it came out of order. Regression: it was
        // written through whatever its time, and reads answered an older state than the store's.
        // In process: a cached entry is refreshed only when the event is newer than it (a
        // missing one is left to the next read). Redis: the entry is deleted, and the next read
        // takes the state from the store (a read that raced the commit may put back the older
        // state for at most the TTL).
        if (redis != nullptr) redis->forget(e.tracking_no);
        cache_.refresh_if(e.tracking_no, state, now, [&](const store::TrackingState& cached) {
          return cached.at_ms <= e.at_ms;
        });
      }
      batch[i].replies->push(std::move(reply));
    }
  }
}

void append_billing_json(std::string& out, const store::BillingRun& run) {
  out.append(R"({"date":)");
  append_json_string(out, run.date);
  fmt::format_to(std::back_inserter(out),
                 R"(,"method":"{}","windowStartMs":{},"windowEndMs":{},"records":{},"sellers":{},)"
                 R"("amountCents":{},"seconds":{:.6f},"recordsPerSecond":{:.1f}}})",
                 store::billing_method_name(run.method), run.window_start_ms, run.window_end_ms,
                 run.records, run.sellers, run.amount_cents, run.seconds,
                 run.seconds > 0 ? static_cast<double>(run.records) / run.seconds : 0.0);
}

void ShipmentService::bill(ReplyQueue& replies, net::EventTag tag, std::string date,
                           store::BillingMethod method) {
  std::lock_guard lock(billing_mutex_);
  if (billing_running_) {
    replies.push(
        StoreReply{tag, 409, error_body("a billing run is going; try again when it ends")});
    return;
  }
  if (billing_thread_.joinable()) billing_thread_.join();  // ended: its reply is out
  billing_running_ = true;
  billing_thread_ = std::thread([this, &replies, tag, date = std::move(date), method] {
    StoreReply reply{tag, 200, {}};
    const core::TimePoint asked = core::Clock::now();
    auto store = store::open_store(options_.database);
    if (store) {
      std::lock_guard running(billing_mutex_);
      billing_store_ = store->get();
    }
    Result<store::BillingRun> run =
        store ? (*store)->run_billing(date, method) : Result<store::BillingRun>(store.status());
    billing_ns_.observe(kLatencyBucketsS, 1e9,
                        static_cast<uint64_t>(core::elapsed_ns(asked, core::Clock::now())));
    if (run) {
      append_billing_json(reply.body, *run);
    } else {
      // The date was checked on the loop thread (400 there): whatever fails here is the store's.
      reply.status = 503;
      reply.body = error_body("store: " + run.status().message());
      store_errors_.fetch_add(1, std::memory_order_relaxed);
    }
    {
      std::lock_guard done(billing_mutex_);
      billing_running_ = false;
      billing_store_ = nullptr;
    }
    replies.push(std::move(reply));
  });
}

void ShipmentService::append_metrics(std::string& out) const {
  auto counter = [&](std::string_view name, std::string_view help, uint64_t value) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} counter\n{} {}\n", name, help,
                   name, name, value);
  };
  counter("knee_lab_cache_hits_total",
          "Tracking reads answered from the cache (in process or Redis).", cache_hits());
  counter("knee_lab_cache_misses_total", "Tracking reads the cache could not answer.",
          cache_misses());
  fmt::format_to(std::back_inserter(out),
                 "# HELP knee_lab_cache_entries Entries the cache holds.\n# TYPE "
                 "knee_lab_cache_entries gauge\nknee_lab_cache_entries {}\n",
                 cache_.size());
  uint64_t redis_errors = 0;
  for (const auto& r : redis_) redis_errors += r->errors();
  counter("knee_lab_cache_errors_total",
          "Calls to a Redis cache that failed (each cost a miss or a skipped update).",
          redis_errors);
  counter("knee_lab_store_reads_total", "Tracking reads that went to the store.",
          store_reads_.load(std::memory_order_relaxed));
  counter("knee_lab_store_commits_total", "Transactions of events committed.",
          commits_.load(std::memory_order_relaxed));
  counter("knee_lab_store_events_committed_total", "Events made durable.",
          events_committed_.load(std::memory_order_relaxed));
  counter("knee_lab_store_errors_total", "Store calls that failed (answered 503).",
          store_errors_.load(std::memory_order_relaxed));
  out.append(
      "# HELP knee_lab_commit_batch_size Events per commit (group commit).\n"
      "# TYPE knee_lab_commit_batch_size histogram\n");
  append_histogram(out, "knee_lab_commit_batch_size", "", kBatchBounds, 1, batch_sizes_);
  out.append(
      "# HELP knee_lab_store_duration_seconds Time of one store call: a read, a commit, a "
      "billing run.\n# TYPE knee_lab_store_duration_seconds histogram\n");
  for (auto [op, h] : {std::pair{"read", &read_ns_}, std::pair{"commit", &commit_ns_},
                       std::pair{"billing", &billing_ns_}}) {
    append_histogram(out, "knee_lab_store_duration_seconds", fmt::format("op=\"{}\"", op),
                     kLatencyBucketsS, 1e9, *h);
  }
}

void ShipmentService::append_health(std::string& out) const {
  const uint64_t hits = cache_hits(), misses = cache_misses();
  const uint64_t commits = commits_.load(std::memory_order_relaxed);
  const uint64_t events = events_committed_.load(std::memory_order_relaxed);
  fmt::format_to(
      std::back_inserter(out),
      R"(,"store":{{"kind":"{}","reads":{},"commits":{},"eventsCommitted":{},"meanBatch":{:.2f},)"
      R"("errors":{}}},"cache":{{"kind":"{}","entries":{},"hits":{},"misses":{},"hitRatio":{:.4f}}})",
      kind_, store_reads_.load(std::memory_order_relaxed), commits, events,
      commits > 0 ? static_cast<double>(events) / static_cast<double>(commits) : 0.0,
      store_errors_.load(std::memory_order_relaxed), redis_.empty() ? "process" : "redis",
      redis_.empty() ? cache_.size() : 0, hits, misses,
      hits + misses > 0 ? static_cast<double>(hits) / static_cast<double>(hits + misses) : 0.0);
}

}  // namespace knee::lab
