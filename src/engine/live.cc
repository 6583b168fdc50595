#include "engine/live.h"

namespace knee::engine {

bool WorkerLive::publish(const core::RunStats& stats) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  responses_ = stats.completed + stats.warmup.completed;
  errors_ = stats.total_errors();
  latency_ns_ = stats.latency_ns;  // same layout: copies the counts without allocating
  return true;
}

void WorkerLive::read_into(LiveSnapshot& snapshot, core::Histogram& latency_ns) const {
  std::lock_guard lock(mutex_);
  snapshot.responses += responses_;
  snapshot.errors += errors_;
  latency_ns.merge(latency_ns_);
}

}  // namespace knee::engine
