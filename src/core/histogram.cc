#include "core/histogram.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace knee::core {

namespace {

// 10^digits for digits in 1..5.
int64_t pow10(int digits) {
  int64_t r = 1;
  for (int i = 0; i < digits; ++i) r *= 10;
  return r;
}

// ceil(log2(x)) for x >= 1.
int ceil_log2(int64_t x) { return static_cast<int>(std::bit_width(static_cast<uint64_t>(x - 1))); }

// floor(log2(x)) for x >= 1.
int floor_log2(int64_t x) { return static_cast<int>(std::bit_width(static_cast<uint64_t>(x))) - 1; }

// HdrHistogram's sub_bucket_half_count_magnitude: ceil(log2(2 * 10^digits)) - 1 (at least 0).
int half_count_magnitude(int significant_digits) {
  return std::max(ceil_log2(2 * pow10(significant_digits)), 1) - 1;
}

// HdrHistogram's buckets_needed_to_cover_value (hdr_histogram.c).
int buckets_needed_to_cover_value(int64_t value, int64_t sub_bucket_count, int unit_magnitude) {
  int64_t smallest_untrackable_value = sub_bucket_count << unit_magnitude;
  int buckets_needed = 1;
  while (smallest_untrackable_value <= value) {
    if (smallest_untrackable_value > std::numeric_limits<int64_t>::max() / 2) {
      return buckets_needed + 1;
    }
    smallest_untrackable_value <<= 1;
    ++buckets_needed;
  }
  return buckets_needed;
}

}  // namespace

Status Histogram::check_parameters(int64_t lowest_discernible_value,
                                   int64_t highest_trackable_value, int significant_digits) {
  if (lowest_discernible_value < 1) {
    return Status::invalid_argument(
        fmt::format("histogram: lowest discernible value {} is below 1", lowest_discernible_value));
  }
  if (lowest_discernible_value > highest_trackable_value / 2) {
    return Status::invalid_argument(
        fmt::format("histogram: highest trackable value {} is below twice the lowest "
                    "discernible value {}",
                    highest_trackable_value, lowest_discernible_value));
  }
  if (significant_digits < 1 || significant_digits > 5) {
    return Status::invalid_argument(
        fmt::format("histogram: {} significant digits is outside 1..5", significant_digits));
  }
  if (floor_log2(lowest_discernible_value) + half_count_magnitude(significant_digits) > 61) {
    return Status::invalid_argument(fmt::format(
        "histogram: lowest discernible value {} with {} significant digits overflows 64-bit "
        "buckets",
        lowest_discernible_value, significant_digits));
  }
  return Status::success();
}

Result<Histogram> Histogram::create(int64_t lowest_discernible_value,
                                    int64_t highest_trackable_value, int significant_digits) {
  Status s =
      check_parameters(lowest_discernible_value, highest_trackable_value, significant_digits);
  if (!s.is_ok()) return s;
  return Histogram(lowest_discernible_value, highest_trackable_value, significant_digits);
}

Histogram Histogram::for_latency() { return Histogram(1, 3'600'000'000'000, 3); }

Histogram::Histogram(int64_t lowest_discernible_value, int64_t highest_trackable_value,
                     int significant_digits)
    : lowest_discernible_value_(lowest_discernible_value),
      highest_trackable_value_(highest_trackable_value),
      significant_digits_(significant_digits) {
  assert(check_parameters(lowest_discernible_value, highest_trackable_value, significant_digits)
             .is_ok() &&
         "Histogram: invalid parameters; use Histogram::create() for untrusted input");
  unit_magnitude_ = floor_log2(lowest_discernible_value);
  sub_bucket_half_count_magnitude_ = half_count_magnitude(significant_digits);
  sub_bucket_count_ = 1 << (sub_bucket_half_count_magnitude_ + 1);
  sub_bucket_half_count_ = sub_bucket_count_ / 2;
  sub_bucket_mask_ = static_cast<uint64_t>(sub_bucket_count_ - 1) << unit_magnitude_;
  bucket_count_ =
      buckets_needed_to_cover_value(highest_trackable_value, sub_bucket_count_, unit_magnitude_);
  counts_.assign(
      static_cast<size_t>(bucket_count_ + 1) * static_cast<size_t>(sub_bucket_half_count_), 0);
}

void Histogram::merge(const Histogram& other) {
  if (other.total_count_ == 0) return;
  if (lowest_discernible_value_ == other.lowest_discernible_value_ &&
      highest_trackable_value_ == other.highest_trackable_value_ &&
      significant_digits_ == other.significant_digits_) {
    assert(counts_.size() == other.counts_.size());
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    clamped_count_ += other.clamped_count_;
  } else {
    // Values-based path, as AbstractHistogram.add for different layouts: each bucket of `other`
    // is recorded at its lowest equivalent value, raised to other's exact min for the first one.
    // `other` is never *this here (same parameters take the path above).
    int64_t newly_clamped = 0;
    for (size_t i = 0; i < other.counts_.size(); ++i) {
      const int64_t c = other.counts_[i];
      if (c == 0) continue;
      int64_t value = std::max(other.value_from_index(i), other.min_);
      if (value > highest_trackable_value_) {
        value = highest_trackable_value_;
        newly_clamped += c;
      }
      counts_[counts_index(value)] += c;
    }
    // Samples other already clamped sit in the bucket of other's highest trackable value; if that
    // bucket was clamped again here, they were just counted twice.
    if (other.clamped_count_ > 0 &&
        std::max(other.lowest_equivalent_value(other.highest_trackable_value_), other.min_) >
            highest_trackable_value_) {
      newly_clamped -= other.clamped_count_;
    }
    clamped_count_ += other.clamped_count_ + newly_clamped;
  }
  total_count_ += other.total_count_;
  min_ = std::min(min_, std::min(other.min_, highest_trackable_value_));
  max_ = std::max(max_, std::min(other.max_, highest_trackable_value_));
}

void Histogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_count_ = 0;
  clamped_count_ = 0;
  min_ = std::numeric_limits<int64_t>::max();
  max_ = 0;
}

Status Histogram::restore_extremes(int64_t min, int64_t max, int64_t clamped_count) {
  if (total_count_ == 0) {
    return min == 0 && max == 0 && clamped_count == 0
               ? Status::success()
               : Status::invalid_argument("an empty histogram has no min, max or clamped values");
  }
  // The counters' own bounds: min_ and max_ are the lowest and highest recorded bucket's values.
  const int64_t lo = lowest_equivalent_value(min_);
  const int64_t hi = highest_equivalent_value(max_);
  if (min < lo || min > std::min(hi, highest_equivalent_value(min_)) || max < min ||
      max > std::min(hi, highest_trackable_value_) || max < lowest_equivalent_value(max_)) {
    return Status::invalid_argument(fmt::format(
        "min {} and max {} do not fall in the recorded buckets [{}, {}]", min, max, lo, hi));
  }
  if (clamped_count < 0 || clamped_count > total_count_) {
    return Status::invalid_argument(
        fmt::format("clamped count {} is outside 0..{}", clamped_count, total_count_));
  }
  min_ = min;
  max_ = max;
  clamped_count_ = clamped_count;
  return Status::success();
}

double Histogram::mean() const {
  if (total_count_ == 0) return 0.0;
  double total = 0.0;
  for_each_recorded([&](int64_t lowest, int64_t, int64_t count) {
    total += static_cast<double>(median_equivalent_value(lowest)) * static_cast<double>(count);
  });
  return total / static_cast<double>(total_count_);
}

double Histogram::stddev() const {
  if (total_count_ == 0) return 0.0;
  const double m = mean();
  double total = 0.0;
  for_each_recorded([&](int64_t lowest, int64_t, int64_t count) {
    const double deviation = static_cast<double>(median_equivalent_value(lowest)) - m;
    total += deviation * deviation * static_cast<double>(count);
  });
  return std::sqrt(total / static_cast<double>(total_count_));
}

int64_t Histogram::value_at_percentile(double p) const {
  assert(!std::isnan(p) && "Histogram::value_at_percentile: p is NaN");
  if (total_count_ == 0) return 0;
  if (p >= 100.0) return max_;
  int64_t rank = 1;
  if (p > 0.0) {
    // p * count / 100 may land a few ulps above an integer (p itself is rounded, e.g. 99.9), and
    // ceil would then skip a rank; a relative epsilon of 8 ulps treats it as that integer.
    const double fp_rank = p * static_cast<double>(total_count_) / 100.0;
    const double guarded = fp_rank - fp_rank * 8.0 * std::numeric_limits<double>::epsilon();
    rank = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(guarded)));
    rank = std::min(rank, total_count_);
  }
  int64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(highest_equivalent_value(value_from_index(i)), max_);
  }
  assert(false && "Histogram: counts sum below count()");
  return max_;
}

int64_t Histogram::value_from_index(size_t i) const {
  assert(i < counts_.size());
  const auto index = static_cast<int64_t>(i);
  int bucket = static_cast<int>(index >> sub_bucket_half_count_magnitude_) - 1;
  int64_t sub_bucket = (index & (sub_bucket_half_count_ - 1)) + sub_bucket_half_count_;
  if (bucket < 0) {
    sub_bucket -= sub_bucket_half_count_;
    bucket = 0;
  }
  return sub_bucket << (bucket + unit_magnitude_);
}

int64_t Histogram::size_of_equivalent_value_range(int64_t value) const {
  assert(value >= 0);
  return int64_t{1} << (unit_magnitude_ + bucket_index(value));
}

int64_t Histogram::lowest_equivalent_value(int64_t value) const {
  assert(value >= 0);
  const int bucket = bucket_index(value);
  const int shift = bucket + unit_magnitude_;
  return (value >> shift) << shift;
}

int64_t Histogram::highest_equivalent_value(int64_t value) const {
  // lowest + (size - 1): never overflows, even in the bucket ending at INT64_MAX.
  return lowest_equivalent_value(value) + (size_of_equivalent_value_range(value) - 1);
}

int64_t Histogram::median_equivalent_value(int64_t value) const {
  return lowest_equivalent_value(value) + (size_of_equivalent_value_range(value) >> 1);
}

}  // namespace knee::core
