// Per-interval latency (one second by default) folded across workers while the run goes on, so
// memory stays flat with run length: each worker hands its interval's compact counts to an
// IntervalQueue as the interval ends; the run's calling thread takes them, and an IntervalFolder
// folds an interval once every worker has handed it over, keeps its summary
// (core::LatencyInterval, 64 bytes) and passes the folded histogram to a callback (the
// HdrHistogram log writer) before reusing it. Only the intervals workers have not all finished
// are held: one or two at a time, whatever the run's length.
//
// Thread-safety: IntervalQueue::push from the worker's thread, take() from the calling thread
// (one mutex, taken once per interval per worker); IntervalFolder belongs to the calling thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "core/run_stats.h"

namespace knee::engine {

// One worker's latency counts of one interval: (bucket's lowest value in ns, count) pairs, in
// increasing value order; compact because an interval touches few of a for_latency()
// histogram's ~33,000 buckets.
struct IntervalCounts {
  size_t index = 0;  // interval number from the measured phase's start
  std::vector<std::pair<int64_t, int64_t>> counts;
  uint64_t errors = 0;  // errors of every kind the worker counted in it (RunStats::total_errors)
  // Seconds from the measured phase's start to the last response counted in it; past the
  // interval's end for the last one, which also holds the responses of the grace period.
  double last_s = 0;
};

// Completed intervals on their way from one worker to the calling thread.
class IntervalQueue {
 public:
  void push(IntervalCounts counts);
  // Everything pushed since the last call, in order.
  std::vector<IntervalCounts> take();

 private:
  std::mutex mu_;
  std::vector<IntervalCounts> ready_;
};

// An interval as it completes: its summary, every worker's latency folded into one histogram
// (valid only during the call), and the run's measured start, wall clock in seconds since the
// Unix epoch (the origin of summary.start_s).
struct IntervalRecord {
  double measure_start_epoch_s = 0;
  const core::LatencyInterval& summary;
  const core::Histogram& latency_ns;
};

class IntervalFolder {
 public:
  // workers: how many hand intervals over; step_s: an interval's length; duration_s: the
  // measured phase (the last interval ends there). on_interval may be empty.
  IntervalFolder(size_t workers, double step_s, double duration_s, double measure_start_epoch_s,
                 std::function<void(const IntervalRecord&)> on_interval);

  // The measured phase's start once the run has stamped it (it builds the folder before, so
  // that the folded histogram's 268 KiB are not paged in beside the first sends).
  void set_measure_start(double measure_start_epoch_s) {
    measure_start_epoch_s_ = measure_start_epoch_s;
  }
  // Worker `worker`'s intervals, in its order.
  void add(size_t worker, std::vector<IntervalCounts> intervals);
  // Folds every interval all workers have handed over; with `final` (the workers are done)
  // also those only some have (a worker that ended early).
  void fold_ready(bool final);
  // The measured phase ended early, after `duration_s` (-n reached): the last interval is as
  // long as what is left of it. Call before that interval folds.
  void end_at(double duration_s) { duration_s_ = std::min(duration_s_, duration_s); }
  // The summaries so far, in interval order.
  std::vector<core::LatencyInterval> take_summaries() { return std::move(summaries_); }

 private:
  void fold_next();

  std::vector<std::deque<IntervalCounts>> pending_;  // per worker
  double step_s_, duration_s_, measure_start_epoch_s_;
  std::function<void(const IntervalRecord&)> on_interval_;
  core::Histogram folded_;
  size_t next_ = 0;  // the next interval index to fold
  std::vector<core::LatencyInterval> summaries_;
};

}  // namespace knee::engine
