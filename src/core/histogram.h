// Histogram: an HDR (High Dynamic Range) histogram of non-negative integer values, such as
// latencies in nanoseconds. It records any number of samples in fixed memory and answers
// percentiles, min, max, mean and standard deviation to a bounded relative error.
//
// Source: HdrHistogram by Gil Tene (http://hdrhistogram.org). The bucket layout is exactly the one
// of AbstractHistogram.java / HdrHistogram_c (hdr_histogram.c), so our counts array is the same
// array HdrHistogram would hold and can be written in its V2 log encoding:
//   - unit_magnitude        = floor(log2(lowest_discernible_value))
//   - sub_bucket_count      = 2^ceil(log2(2 * 10^significant_digits))
//   - sub_bucket_half_count = sub_bucket_count / 2
//   - bucket_count          = buckets needed so that (sub_bucket_count << unit_magnitude),
//                             doubled bucket_count - 1 times, exceeds highest_trackable_value
//   - counts_length         = (bucket_count + 1) * sub_bucket_half_count
//   Bucket 0 holds sub_bucket_count linear sub-buckets of width 2^unit_magnitude; bucket b > 0
//   holds the upper sub_bucket_half_count sub-buckets of width 2^(unit_magnitude + b). Counts index
//   order is increasing value order.
//
// Units: values are whatever integer unit the owner chooses; for_latency() histograms hold
// nanoseconds. Every value-returning function answers in that same unit.
//
// Relative error: a recorded value is known to within its bucket, whose width is at most
// max(value * 10^-significant_digits, 2^unit_magnitude) (exactly: value / sub_bucket_half_count
// above the linear bucket 0), and 2^unit_magnitude <= lowest_discernible_value: values closer than
// lowest_discernible_value are not told apart. With lowest 1 every value below
// sub_bucket_count is exact.
//
// Memory: counts_length() int64 counters, allocated once by the constructor; recording never
// allocates, whatever the number of samples (for_latency(): 33,792 counters, 270 KB).
//
// Thread-safety: not thread-safe. One owner per histogram (one per worker thread); fold the
// owners' histograms with merge() after the run or at interval boundaries (wrk2's hdr_add).
#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/status.h"

namespace knee::core {

class Histogram {
 public:
  // Latency histogram: values in nanoseconds from 1 ns to 1 hour (3,600,000,000,000 ns), 3
  // significant digits (relative error <= 0.1%).
  static Histogram for_latency();

  // A histogram that tells apart values >= lowest_discernible_value (>= 1), tracks values up to
  // highest_trackable_value (>= 2 * lowest_discernible_value) and keeps significant_digits (1..5)
  // decimal digits of precision. Errors (kInvalidArgument) for parameters outside these ranges or
  // a layout whose shifts would overflow 64 bits (HdrHistogram's unit_magnitude +
  // sub_bucket_half_count_magnitude > 61).
  static Result<Histogram> create(int64_t lowest_discernible_value, int64_t highest_trackable_value,
                                  int significant_digits);

  // Same as create() for parameters known to be valid (constants); invalid parameters are a
  // broken invariant (assert).
  Histogram(int64_t lowest_discernible_value, int64_t highest_trackable_value,
            int significant_digits);

  // --- Recording (the hot path: no allocation, no division, no loop) ---

  // Records one sample of `value`. Values above highest_trackable_value() are recorded as
  // highest_trackable_value() and counted in clamped_count(). A negative value is a caller bug:
  // asserts in debug builds, recorded as 0 in release builds.
  void record(int64_t value) { record(value, 1); }

  // Records `count` (>= 0; asserts) samples of `value`; same as calling record(value) count times.
  void record(int64_t value, int64_t count) {
    assert(value >= 0 && "Histogram::record: negative value");
    assert(count >= 0 && "Histogram::record: negative count");
    if (count <= 0) return;
    if (value < 0) value = 0;
    if (value > highest_trackable_value_) {
      value = highest_trackable_value_;
      clamped_count_ += count;
    }
    counts_[counts_index(value)] += count;
    total_count_ += count;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }

  // Adds every sample of `other` to this histogram, as if they had been recorded here; `other` may
  // be *this. Same parameters (lowest, highest, digits): counts are added index by index, and the
  // result equals recording both histograms' samples into one. Different parameters: each bucket
  // of `other` is recorded at its lowest equivalent value (as AbstractHistogram.add does; its
  // exact min for the lowest bucket), so values are within both histograms' relative errors;
  // count() adds up, min() and max() stay exact (clamped to this highest_trackable_value()), and
  // other's buckets that start above this highest_trackable_value() count in clamped_count().
  void merge(const Histogram& other);

  // Forgets every sample; keeps the layout and the memory.
  void reset();

  // Puts back the exact min, max and clamped count that an encoding of the counters alone (V2)
  // loses, for readers that carry them beside it (report/record.h). min and max must fall in the
  // lowest and highest non-zero counters' ranges and clamped_count in 0..count(); otherwise
  // kInvalidArgument and nothing changes. An empty histogram takes nothing.
  Status restore_extremes(int64_t min, int64_t max, int64_t clamped_count);

  // --- Statistics (all 0 when the histogram is empty) ---

  // Number of samples recorded (including clamped ones).
  int64_t count() const { return total_count_; }
  // Number of samples that were above highest_trackable_value() and were recorded as it.
  int64_t clamped_count() const { return clamped_count_; }
  // The exact smallest and largest recorded values (after clamping), not bucket bounds.
  int64_t min() const { return total_count_ == 0 ? 0 : min_; }
  int64_t max() const { return total_count_ == 0 ? 0 : max_; }
  // Mean and population standard deviation, computed as HdrHistogram's getMean() and
  // getStdDeviation(): each bucket counts at its median_equivalent_value(), so both are within the
  // relative error of the exact values.
  double mean() const;
  double stddev() const;

  // The value at percentile p (0..100), nearest-rank as HdrHistogram: rank = max(1, ceil(p / 100 *
  // count())) (with a relative epsilon so that p = 99, count = 100 gives rank 99), answered as the
  // highest_equivalent_value() of the bucket holding that rank, capped at max() so the answer never
  // exceeds a recorded value's bucket nor max(). p <= 0 uses rank 1; p >= 100 returns max().
  // The result lies in [exact, min(highest_equivalent_value(exact), max())] where exact is the
  // nearest-rank sample of the recorded values, so within the relative error above.
  int64_t value_at_percentile(double p) const;

  // Calls f(int64_t lowest_equivalent, int64_t highest_equivalent, int64_t count) for every bucket
  // with a non-zero count, in increasing value order. The counts sum to count().
  template <class F>
  void for_each_recorded(F&& f) const {
    for (size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i] == 0) continue;
      const int64_t lowest = value_from_index(i);
      f(lowest, highest_equivalent_value(lowest), counts_[i]);
    }
  }

  // --- Layout (HdrHistogram's names and formulas; needed by the V2 log encoding) ---

  int64_t lowest_discernible_value() const { return lowest_discernible_value_; }
  int64_t highest_trackable_value() const { return highest_trackable_value_; }
  int significant_digits() const { return significant_digits_; }
  int unit_magnitude() const { return unit_magnitude_; }
  int sub_bucket_count() const { return sub_bucket_count_; }
  int sub_bucket_half_count() const { return sub_bucket_half_count_; }
  int sub_bucket_half_count_magnitude() const { return sub_bucket_half_count_magnitude_; }
  int bucket_count() const { return bucket_count_; }
  // Number of counters, (bucket_count() + 1) * sub_bucket_half_count().
  size_t counts_length() const { return counts_.size(); }
  // The counter at index i (< counts_length(); asserts).
  int64_t count_at_index(size_t i) const {
    assert(i < counts_.size());
    return counts_[i];
  }

  // Index of the counter that holds `value` (0 <= value <= highest_trackable_value(); asserts).
  // HdrHistogram's counts_index(get_bucket_index, get_sub_bucket_index).
  size_t counts_index(int64_t value) const {
    assert(value >= 0);
    const int bucket = bucket_index(value);
    const int64_t sub_bucket = value >> (bucket + unit_magnitude_);
    const int64_t index = (int64_t{bucket + 1} << sub_bucket_half_count_magnitude_) + sub_bucket -
                          sub_bucket_half_count_;
    assert(index >= 0 && static_cast<size_t>(index) < counts_.size());
    return static_cast<size_t>(index);
  }

  // The lowest value that maps to counter i (< counts_length(); asserts); HdrHistogram's
  // hdr_value_at_index / valueFromIndex.
  int64_t value_from_index(size_t i) const;

  // Bounds of the bucket holding `value` (>= 0; asserts): every value in
  // [lowest_equivalent_value, highest_equivalent_value] is counted as the same value.
  // median_equivalent_value is the bucket's middle, lowest + width / 2.
  int64_t lowest_equivalent_value(int64_t value) const;
  int64_t highest_equivalent_value(int64_t value) const;
  int64_t median_equivalent_value(int64_t value) const;
  // Width of the bucket holding `value`: a power of two, 1 << (unit_magnitude + bucket index).
  int64_t size_of_equivalent_value_range(int64_t value) const;

  // Same parameters and same state: counts, count, min, max and clamped count. Two histograms fed
  // the same samples in any order, or split and merged, compare equal.
  bool operator==(const Histogram& other) const = default;

 private:
  // Checks the constructor's parameters; ok or kInvalidArgument naming the bad one.
  static Status check_parameters(int64_t lowest_discernible_value, int64_t highest_trackable_value,
                                 int significant_digits);

  // Bucket (power-of-two range) holding `value`: HdrHistogram's get_bucket_index, one clz.
  int bucket_index(int64_t value) const {
    const int pow2_ceiling = 64 - std::countl_zero(static_cast<uint64_t>(value) | sub_bucket_mask_);
    return pow2_ceiling - unit_magnitude_ - (sub_bucket_half_count_magnitude_ + 1);
  }

  int64_t lowest_discernible_value_;
  int64_t highest_trackable_value_;
  int significant_digits_;
  int unit_magnitude_;
  int sub_bucket_half_count_magnitude_;
  int sub_bucket_count_;
  int sub_bucket_half_count_;
  uint64_t sub_bucket_mask_;  // (sub_bucket_count - 1) << unit_magnitude
  int bucket_count_;
  std::vector<int64_t> counts_;
  int64_t total_count_ = 0;
  int64_t clamped_count_ = 0;
  int64_t min_ = std::numeric_limits<int64_t>::max();  // kept raw; min() hides it when empty
  int64_t max_ = 0;
};

}  // namespace knee::core
