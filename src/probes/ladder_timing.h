// The timing loop behind every measured rung of the latency ladder (ladder.h): warm-up, batching
// of operations shorter than the clock can time, repeats, and an HDR histogram of sample times.
//
// Method, in the order it runs:
//   1. Warm-up: the operation runs for `warmup` (and at least kMinWarmupOps times); nothing is
//      recorded.
//   2. Batch B (calibration, as Google Benchmark sizes its iterations): B = 1, 2, 4, ... until
//      the fastest of kCalibrationTries timed batches of B operations takes at least
//      `target_sample_ns` (at most kMaxBatch). A sample times B operations back to back between
//      two steady_clock reads, and per-operation time = sample / B. target_sample_ns is a hundred
//      times the clock's smallest observed step (measure_clock()), so the clock's resolution and
//      the cost of reading it stay near or below 1 % of every sample. Operations that take longer
//      than the target are timed one by one (B = 1).
//   3. Repeats: `repeats` times, samples are taken until `max_samples` samples or `max_time`
//      have passed, whichever comes first. Every sample's time in ns goes into one
//      core::Histogram (whole-batch times, so batching loses no precision).
//   4. Statistics: median and p99 of the samples divided by B (a batch's p99 is the p99 of means
//      of B operations: it hides tails shorter than a batch); best = the fastest repeat's mean
//      time per operation (what Python's timeit recommends reporting); ops/s = 1 s / median.
//
// Keeping work alive: keep() is the DoNotOptimize idiom of Google Benchmark (an empty asm volatile
// that claims to read its operand), so the compiler must compute every result an operation
// passes to it, and cannot hoist or delete the operation.
//
// Thread-safety: measure() runs on the calling thread and touches only its arguments.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"

namespace knee::probes {

// Forces `value` to be computed and kept (Google Benchmark's DoNotOptimize). Costs no instruction
// beyond materialising the value in a register or memory.
template <class T>
inline void keep(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

// Limits of one rung's measurement (see the method above).
struct TimingLimits {
  int repeats = 5;                                       // >= 1
  int64_t max_samples = 2000;                            // per repeat, >= 1
  core::Nanos max_time = std::chrono::milliseconds(50);  // per repeat
  core::Nanos warmup = std::chrono::milliseconds(20);    // before the repeats
  int64_t target_sample_ns = 2000;                       // shorter operations are batched
  int64_t fixed_batch = 0;                               // > 0: use this batch, no calibration
};

inline constexpr int64_t kMinWarmupOps = 4;

// What measure() saw: every sample's time (whole batches, ns) and each repeat's mean per op.
struct Samples {
  core::Histogram batch_ns = core::Histogram::for_latency();
  int64_t batch = 1;                   // operations per sample
  std::vector<double> repeat_mean_ns;  // per repeat: its total time / its operations, ns
};

inline constexpr int kCalibrationTries = 3;
inline constexpr int64_t kMaxBatch = int64_t{1} << 20;

// Times op(i) (i = 0, 1, 2, ... across warm-up and repeats) by the method above. `op` must pass
// whatever it computes to keep(). The histogram records sample times clamped to 1 hour.
template <class Op>
Samples measure(const TimingLimits& limits, Op&& op) {
  using core::Clock;
  Samples out;
  uint64_t i = 0;
  int64_t warmup_ops = 0;
  const core::TimePoint warm_start = Clock::now();
  while (warmup_ops < kMinWarmupOps || Clock::now() - warm_start < limits.warmup) {
    op(i++);
    ++warmup_ops;
  }
  out.batch = limits.fixed_batch > 0 ? limits.fixed_batch : 1;
  while (limits.fixed_batch <= 0 && out.batch < kMaxBatch) {
    int64_t fastest = std::numeric_limits<int64_t>::max();
    for (int t = 0; t < kCalibrationTries; ++t) {
      const core::TimePoint t0 = Clock::now();
      for (int64_t b = 0; b < out.batch; ++b) op(i++);
      fastest = std::min(fastest, core::elapsed_ns(t0, Clock::now()));
    }
    if (fastest >= limits.target_sample_ns) break;
    out.batch *= 2;
  }

  for (int r = 0; r < limits.repeats; ++r) {
    int64_t total_ns = 0;
    int64_t samples = 0;
    const core::TimePoint repeat_start = Clock::now();
    while (samples < limits.max_samples) {
      const core::TimePoint t0 = Clock::now();
      for (int64_t b = 0; b < out.batch; ++b) op(i++);
      const core::TimePoint t1 = Clock::now();
      const int64_t ns = core::elapsed_ns(t0, t1);
      out.batch_ns.record(ns);
      total_ns += ns;
      ++samples;
      if (t1 - repeat_start >= limits.max_time) break;
    }
    out.repeat_mean_ns.push_back(static_cast<double>(total_ns) /
                                 static_cast<double>(samples * out.batch));
  }
  return out;
}

}  // namespace knee::probes
