#include "engine/intervals.h"

#include <algorithm>

namespace knee::engine {

void IntervalQueue::push(IntervalCounts counts) {
  std::lock_guard<std::mutex> lock(mu_);
  ready_.push_back(std::move(counts));
}

std::vector<IntervalCounts> IntervalQueue::take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(ready_, {});
}

IntervalFolder::IntervalFolder(size_t workers, double step_s, double duration_s,
                               double measure_start_epoch_s,
                               std::function<void(const IntervalRecord&)> on_interval)
    : pending_(workers),
      step_s_(step_s),
      duration_s_(duration_s),
      measure_start_epoch_s_(measure_start_epoch_s),
      on_interval_(std::move(on_interval)),
      folded_(core::Histogram::for_latency()) {}

void IntervalFolder::add(size_t worker, std::vector<IntervalCounts> intervals) {
  for (IntervalCounts& c : intervals) pending_[worker].push_back(std::move(c));
}

void IntervalFolder::fold_ready(bool final) {
  while (true) {
    bool all = true, any = false;
    for (const std::deque<IntervalCounts>& q : pending_) {
      const bool has = !q.empty() && q.front().index == next_;
      all = all && has;
      any = any || !q.empty();
    }
    if (!(all || (final && any))) return;
    fold_next();
  }
}

void IntervalFolder::fold_next() {
  folded_.reset();
  uint64_t errors = 0;
  double last_s = 0;
  for (std::deque<IntervalCounts>& q : pending_) {
    while (!q.empty() && q.front().index < next_) q.pop_front();  // never expected: stale
    if (q.empty() || q.front().index != next_) continue;
    for (const auto& [value, count] : q.front().counts) folded_.record(value, count);
    errors += q.front().errors;
    last_s = std::max(last_s, q.front().last_s);
    q.pop_front();
  }
  core::LatencyInterval s;
  s.errors = static_cast<int64_t>(errors);
  s.start_s = static_cast<double>(next_) * step_s_;
  // The last interval lasts until its last response, in the grace period: its throughput is
  // then what the server answered over that time, not a second's worth of the drain.
  s.length_s = std::max({0.0, std::min(step_s_, duration_s_ - s.start_s), last_s - s.start_s});
  s.count = folded_.count();
  s.p50_ns = folded_.value_at_percentile(50);
  s.p99_ns = folded_.value_at_percentile(99);
  s.max_ns = folded_.max();
  summaries_.push_back(s);
  ++next_;
  if (on_interval_)
    on_interval_(IntervalRecord{measure_start_epoch_s_, summaries_.back(), folded_});
}

}  // namespace knee::engine
