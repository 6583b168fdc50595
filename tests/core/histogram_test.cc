#include "core/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace knee::core {
namespace {

constexpr int64_t kOneHourInMicros = 3'600'000'000;
constexpr int kSamples = 100'000;

Histogram make_one_hour_in_micros() { return Histogram(1, kOneHourInMicros, 3); }

std::vector<int64_t> uniform_samples(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(1, 10'000'000);
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(dist(rng));
  return out;
}

// Latency-like: median 1 ms, long right tail.
std::vector<int64_t> lognormal_samples(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(std::log(1e6), 1.0);
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(std::max<int64_t>(1, std::llround(dist(rng))));
  return out;
}

// 90% fast path around 200 us, 10% slow path around 50 ms.
std::vector<int64_t> bimodal_samples(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution slow(0.1);
  std::normal_distribution<double> fast_ns(200'000, 20'000);
  std::normal_distribution<double> slow_ns(50'000'000, 5'000'000);
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) {
    const double v = slow(rng) ? slow_ns(rng) : fast_ns(rng);
    out.push_back(std::max<int64_t>(1, std::llround(v)));
  }
  return out;
}

Histogram record_all(const std::vector<int64_t>& samples) {
  Histogram h = Histogram::for_latency();
  for (int64_t v : samples) h.record(v);
  return h;
}

// Checks value_at_percentile against the exact nearest-rank value of the sorted samples, for
// percentiles given in parts per million so that the exact rank is integer arithmetic.
void expect_percentiles_within_one_bucket(const std::vector<int64_t>& samples) {
  const Histogram h = record_all(samples);
  std::vector<int64_t> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<int64_t>(sorted.size());
  const double relative_error = 1.0 / std::pow(10.0, h.significant_digits());
  int64_t previous = 0;
  for (int64_t ppm : {0, 1, 10'000, 100'000, 250'000, 500'000, 750'000, 900'000, 990'000, 999'000,
                      999'900, 999'990, 1'000'000}) {
    const double p = static_cast<double>(ppm) / 10'000.0;
    const int64_t rank = std::max<int64_t>(1, (ppm * n + 999'999) / 1'000'000);
    const int64_t exact = sorted[static_cast<size_t>(rank - 1)];
    const int64_t expected = ppm == 1'000'000
                                 ? sorted.back()
                                 : std::min(h.highest_equivalent_value(exact), sorted.back());
    const int64_t got = h.value_at_percentile(p);
    EXPECT_EQ(got, expected) << "p" << p << " rank " << rank << " exact " << exact;
    EXPECT_GE(got, exact) << "p" << p;
    EXPECT_LE(static_cast<double>(got), static_cast<double>(exact) * (1 + relative_error))
        << "p" << p;
    EXPECT_GE(got, previous) << "percentiles must not decrease, p" << p;
    previous = got;
  }
}

TEST(Histogram, LayoutMatchesHdrHistogramForOneHourInMicrosWithThreeDigits) {
  const Histogram h = make_one_hour_in_micros();
  EXPECT_EQ(h.unit_magnitude(), 0);
  EXPECT_EQ(h.sub_bucket_count(), 2048);
  EXPECT_EQ(h.sub_bucket_half_count(), 1024);
  EXPECT_EQ(h.sub_bucket_half_count_magnitude(), 10);
  EXPECT_EQ(h.bucket_count(), 22);
  EXPECT_EQ(h.counts_length(), 23'552u);
}

TEST(Histogram, IndexesAndBucketBoundsMatchHdrHistogram) {
  const Histogram h = make_one_hour_in_micros();
  EXPECT_EQ(h.counts_index(1000), 1000u);
  EXPECT_EQ(h.counts_index(5000), 3298u);
  EXPECT_EQ(h.value_from_index(3298), 5000);
  EXPECT_EQ(h.lowest_equivalent_value(5000), 5000);
  EXPECT_EQ(h.highest_equivalent_value(5000), 5003);
  EXPECT_EQ(h.lowest_equivalent_value(1'000'000), 999'936);
  EXPECT_EQ(h.highest_equivalent_value(1'000'000), 1'000'447);
  EXPECT_EQ(h.size_of_equivalent_value_range(1'000'000), 512);
  EXPECT_EQ(h.median_equivalent_value(1'000'000), 999'936 + 256);
}

TEST(Histogram, ForLatencyCoversOneHourInNanosWithThreeDigits) {
  const Histogram h = Histogram::for_latency();
  EXPECT_EQ(h.lowest_discernible_value(), 1);
  EXPECT_EQ(h.highest_trackable_value(), 3'600'000'000'000);
  EXPECT_EQ(h.significant_digits(), 3);
  EXPECT_EQ(h.bucket_count(), 32);
  EXPECT_EQ(h.counts_length(), 33'792u);
}

TEST(Histogram, ValueFromIndexInvertsCountsIndexInIncreasingOrder) {
  const Histogram h = make_one_hour_in_micros();
  for (size_t i = 0; i < h.counts_length(); ++i) {
    const int64_t v = h.value_from_index(i);
    ASSERT_EQ(h.counts_index(v), i);
    ASSERT_EQ(h.lowest_equivalent_value(v), v);
    if (i + 1 < h.counts_length()) {
      ASSERT_EQ(h.highest_equivalent_value(v) + 1, h.value_from_index(i + 1));
    }
  }
  EXPECT_LT(h.counts_index(h.highest_trackable_value()), h.counts_length());
}

TEST(Histogram, BucketWidthStaysWithinRelativeError) {
  const Histogram h = Histogram::for_latency();
  for (int64_t v = 2048; v < h.highest_trackable_value(); v = v * 3 / 2 + 7) {
    EXPECT_LE(h.size_of_equivalent_value_range(v) * 1000, v) << v;
    EXPECT_LE(h.lowest_equivalent_value(v), v);
    EXPECT_GE(h.highest_equivalent_value(v), v);
  }
  for (int64_t v = 0; v < 2048; ++v) EXPECT_EQ(h.highest_equivalent_value(v), v);
}

TEST(Histogram, LowestDiscernibleValueSetsTheUnitMagnitude) {
  const Histogram h(1000, 3'600'000'000'000, 3);
  EXPECT_EQ(h.unit_magnitude(), 9);
  EXPECT_EQ(h.size_of_equivalent_value_range(0), 512);
  EXPECT_EQ(h.counts_index(0), h.counts_index(511));
  EXPECT_NE(h.counts_index(511), h.counts_index(512));
}

TEST(Histogram, ExtremeValuesDoNotOverflow) {
  Histogram h(1, std::numeric_limits<int64_t>::max(), 2);
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_LT(h.counts_index(big), h.counts_length());
  EXPECT_EQ(h.highest_equivalent_value(big), big);
  h.record(big);
  h.record(0);
  EXPECT_EQ(h.max(), big);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.value_at_percentile(100), big);
  EXPECT_EQ(h.clamped_count(), 0);
}

TEST(Histogram, NearestRankPercentilesOnSmallCounts) {
  Histogram h = make_one_hour_in_micros();
  for (int64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.value_at_percentile(0), 1);
  EXPECT_EQ(h.value_at_percentile(0.5), 1);
  EXPECT_EQ(h.value_at_percentile(1), 1);
  EXPECT_EQ(h.value_at_percentile(1.5), 2);
  EXPECT_EQ(h.value_at_percentile(50), 50);
  EXPECT_EQ(h.value_at_percentile(99), 99);
  EXPECT_EQ(h.value_at_percentile(99.5), 100);
  EXPECT_EQ(h.value_at_percentile(100), 100);
  EXPECT_EQ(h.value_at_percentile(250), 100);
  EXPECT_EQ(h.value_at_percentile(-3), 1);
}

TEST(Histogram, RoundedPercentilesDoNotSkipARank) {
  Histogram h = make_one_hour_in_micros();
  for (int64_t v = 1; v <= 1000; ++v) h.record(v);
  // 99.9 and 0.1 are not exact doubles; p * 1000 / 100 must still give ranks 999 and 1.
  EXPECT_EQ(h.value_at_percentile(99.9), 999);
  EXPECT_EQ(h.value_at_percentile(0.1), 1);
  EXPECT_EQ(h.value_at_percentile(0.3), 3);
  EXPECT_EQ(h.value_at_percentile(57.7), 577);
  // Here p * 1000 / 100 computes as 161.00000000000003 and 644.0000000000001: ceil alone
  // would answer ranks 162 and 645.
  EXPECT_EQ(h.value_at_percentile(16.1), 161);
  EXPECT_EQ(h.value_at_percentile(64.4), 644);
}

TEST(Histogram, PercentileIsCappedAtMax) {
  Histogram h = make_one_hour_in_micros();
  h.record(1'000'000);
  EXPECT_EQ(h.value_at_percentile(50), 1'000'000);
  h.record(999'936);
  EXPECT_EQ(h.value_at_percentile(50), 1'000'000);
  EXPECT_EQ(h.value_at_percentile(0), 1'000'000);
}

TEST(Histogram, UniformPercentilesMatchExactWithinOneBucket) {
  expect_percentiles_within_one_bucket(uniform_samples(kSamples, 1));
  expect_percentiles_within_one_bucket(uniform_samples(kSamples + 3, 2));
}

TEST(Histogram, LognormalPercentilesMatchExactWithinOneBucket) {
  expect_percentiles_within_one_bucket(lognormal_samples(kSamples, 3));
  expect_percentiles_within_one_bucket(lognormal_samples(kSamples + 7, 4));
}

TEST(Histogram, BimodalPercentilesMatchExactWithinOneBucket) {
  expect_percentiles_within_one_bucket(bimodal_samples(kSamples, 5));
  expect_percentiles_within_one_bucket(bimodal_samples(kSamples + 1, 6));
}

TEST(Histogram, MinMaxAreExactAndMeanStddevWithinRelativeError) {
  const std::vector<int64_t> samples = lognormal_samples(kSamples, 7);
  const Histogram h = record_all(samples);
  double sum = 0, sum_sq = 0;
  for (int64_t v : samples) {
    sum += static_cast<double>(v);
    sum_sq += static_cast<double>(v) * static_cast<double>(v);
  }
  const double n = static_cast<double>(samples.size());
  const double mean = sum / n;
  double dev_sq = 0;
  for (int64_t v : samples)
    dev_sq += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  const double stddev = std::sqrt(dev_sq / n);
  EXPECT_EQ(h.count(), kSamples);
  EXPECT_EQ(h.min(), *std::min_element(samples.begin(), samples.end()));
  EXPECT_EQ(h.max(), *std::max_element(samples.begin(), samples.end()));
  // Each sample counts at its bucket's median, at most value / 2048 away (buckets are at most
  // value / 1024 wide): the mean moves by at most mean / 2048, the stddev by at most
  // sqrt(mean of squares) / 2048.
  EXPECT_NEAR(h.mean(), mean, mean / 2048 * 1.01);
  EXPECT_NEAR(h.stddev(), stddev, std::sqrt(sum_sq / n) / 2048 * 1.01);
}

TEST(Histogram, MeanAndStddevOfExactValues) {
  Histogram h = make_one_hour_in_micros();
  h.record(2);
  h.record(4);
  h.record(4);
  h.record(4);
  h.record(5);
  h.record(5);
  h.record(7);
  h.record(9);
  EXPECT_DOUBLE_EQ(h.mean(), 5.0);
  EXPECT_DOUBLE_EQ(h.stddev(), 2.0);
}

TEST(Histogram, MergeEqualsRecordingBoth) {
  const std::vector<int64_t> a_samples = bimodal_samples(20'000, 8);
  const std::vector<int64_t> b_samples = lognormal_samples(20'000, 9);
  Histogram a = record_all(a_samples);
  const Histogram b = record_all(b_samples);
  Histogram both = record_all(a_samples);
  for (int64_t v : b_samples) both.record(v);
  a.merge(b);
  EXPECT_EQ(a, both);
  EXPECT_EQ(a.count(), 40'000);
}

TEST(Histogram, MergeKeepsClampedCount) {
  Histogram a(1, 1000, 3);
  Histogram b(1, 1000, 3);
  a.record(5000);
  b.record(6000, 2);
  b.record(10);
  a.merge(b);
  EXPECT_EQ(a.clamped_count(), 3);
  EXPECT_EQ(a.count(), 4);
  EXPECT_EQ(a.min(), 10);
  EXPECT_EQ(a.max(), 1000);
}

TEST(Histogram, MergeWithEmptyChangesNothing) {
  Histogram a = record_all(uniform_samples(1000, 10));
  const Histogram before = a;
  a.merge(Histogram::for_latency());
  EXPECT_EQ(a, before);
  Histogram empty = Histogram::for_latency();
  empty.merge(a);
  EXPECT_EQ(empty, a);
}

TEST(Histogram, MergeIntoItselfDoublesEveryCount) {
  const std::vector<int64_t> samples = uniform_samples(1000, 11);
  Histogram h = record_all(samples);
  h.merge(h);
  Histogram twice = record_all(samples);
  for (int64_t v : samples) twice.record(v);
  EXPECT_EQ(h, twice);
}

TEST(Histogram, MergeAcrossLayoutsWithSameBucketsEqualsRecordingDirectly) {
  const std::vector<int64_t> samples = lognormal_samples(10'000, 12);
  Histogram small = make_one_hour_in_micros();
  for (int64_t v : samples) small.record(v);
  Histogram latency = Histogram::for_latency();
  latency.merge(small);
  EXPECT_EQ(latency, record_all(samples));
}

TEST(Histogram, MergeAcrossLayoutsClampsAboveTheSmallerRange) {
  Histogram latency = Histogram::for_latency();
  latency.record(5'000'000'000, 10);  // above one hour in micros
  latency.record(1000, 3);
  latency.record(9'000'000'000'000);  // above one hour in ns: clamped once already
  Histogram small = make_one_hour_in_micros();
  small.merge(latency);
  EXPECT_EQ(small.count(), 14);
  EXPECT_EQ(small.clamped_count(), 11);
  EXPECT_EQ(small.min(), 1000);
  EXPECT_EQ(small.max(), kOneHourInMicros);
  EXPECT_EQ(small.value_at_percentile(10), 1000);
  EXPECT_EQ(small.value_at_percentile(100), kOneHourInMicros);
}

TEST(Histogram, MergeAcrossDigitsStaysWithinTheCoarserError) {
  const std::vector<int64_t> samples = lognormal_samples(10'000, 13);
  Histogram coarse(1, 3'600'000'000'000, 2);
  for (int64_t v : samples) coarse.record(v);
  Histogram fine = Histogram::for_latency();
  fine.merge(coarse);
  std::vector<int64_t> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(fine.count(), 10'000);
  EXPECT_EQ(fine.min(), sorted.front());
  EXPECT_EQ(fine.max(), sorted.back());
  for (double p : {1.0, 50.0, 90.0, 99.0}) {
    const auto exact = static_cast<double>(sorted[static_cast<size_t>(std::ceil(p * 100)) - 1]);
    EXPECT_NEAR(static_cast<double>(fine.value_at_percentile(p)), exact, exact * 0.02) << p;
  }
}

TEST(Histogram, RecordWithCountEqualsRepeatedRecord) {
  Histogram once = Histogram::for_latency();
  Histogram repeated = Histogram::for_latency();
  once.record(123'456, 1000);
  once.record(7, 3);
  once.record(42, 0);
  for (int i = 0; i < 1000; ++i) repeated.record(123'456);
  for (int i = 0; i < 3; ++i) repeated.record(7);
  EXPECT_EQ(once, repeated);
  EXPECT_EQ(once.count(), 1003);
  EXPECT_EQ(once.min(), 7);
}

TEST(Histogram, ValuesAboveHighestAreClampedAndCounted) {
  Histogram h(1, 1000, 3);
  h.record(1000);
  EXPECT_EQ(h.clamped_count(), 0);
  h.record(5000);
  h.record(std::numeric_limits<int64_t>::max(), 2);
  EXPECT_EQ(h.count(), 4);
  EXPECT_EQ(h.clamped_count(), 3);
  EXPECT_EQ(h.max(), 1000);
  EXPECT_EQ(h.value_at_percentile(100), 1000);
  EXPECT_EQ(h.value_at_percentile(1), 1000);
}

TEST(Histogram, EmptyHistogramReportsZeros) {
  const Histogram h = Histogram::for_latency();
  EXPECT_EQ(h.count(), 0);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.stddev(), 0.0);
  EXPECT_EQ(h.value_at_percentile(0), 0);
  EXPECT_EQ(h.value_at_percentile(50), 0);
  EXPECT_EQ(h.value_at_percentile(100), 0);
  EXPECT_EQ(h.clamped_count(), 0);
  int calls = 0;
  h.for_each_recorded([&](int64_t, int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(Histogram, ResetForgetsSamplesAndKeepsLayout) {
  Histogram h(1, 1000, 3);
  h.record(10);
  h.record(5000);
  h.reset();
  EXPECT_EQ(h, Histogram(1, 1000, 3));
  EXPECT_EQ(h.counts_length(), 2048u);
  h.record(20);
  EXPECT_EQ(h.min(), 20);
  EXPECT_EQ(h.max(), 20);
}

TEST(Histogram, ForEachRecordedVisitsBucketsInOrderSummingToCount) {
  const std::vector<int64_t> samples = bimodal_samples(10'000, 14);
  const Histogram h = record_all(samples);
  int64_t total = 0;
  int64_t previous_highest = -1;
  h.for_each_recorded([&](int64_t lowest, int64_t highest, int64_t count) {
    EXPECT_GT(lowest, previous_highest);
    EXPECT_EQ(highest, h.highest_equivalent_value(lowest));
    EXPECT_EQ(count, h.count_at_index(h.counts_index(lowest)));
    EXPECT_GT(count, 0);
    previous_highest = highest;
    total += count;
  });
  EXPECT_EQ(total, h.count());
}

TEST(Histogram, CountsStayFixedWhateverTheNumberOfSamples) {
  Histogram h = Histogram::for_latency();
  const size_t length = h.counts_length();
  for (int64_t v : lognormal_samples(kSamples, 15)) h.record(v);
  EXPECT_EQ(h.counts_length(), length);
}

TEST(Histogram, CreateRejectsBadParameters) {
  struct Case {
    int64_t lowest, highest;
    int digits;
  };
  for (const Case& c :
       {Case{0, 1000, 3}, Case{-1, 1000, 3}, Case{10, 19, 3}, Case{1, 1000, 0}, Case{1, 1000, 6},
        Case{int64_t{1} << 60, std::numeric_limits<int64_t>::max(), 3}}) {
    const Result<Histogram> r = Histogram::create(c.lowest, c.highest, c.digits);
    ASSERT_FALSE(r.has_value()) << c.lowest << " " << c.highest << " " << c.digits;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("histogram"), std::string::npos) << r.status().message();
  }
}

TEST(Histogram, CreateAcceptsValidParameters) {
  const Result<Histogram> tiny = Histogram::create(1, 2, 1);
  ASSERT_TRUE(tiny.has_value());
  EXPECT_EQ(tiny->bucket_count(), 1);
  const Result<Histogram> latency = Histogram::create(1, 3'600'000'000'000, 3);
  ASSERT_TRUE(latency.has_value());
  EXPECT_EQ(*latency, Histogram::for_latency());
}

TEST(HistogramDeathTest, NegativeValueAssertsInDebugAndCountsAsZeroInRelease) {
  Histogram h = Histogram::for_latency();
  EXPECT_DEBUG_DEATH(h.record(-5), "negative value");
#ifdef NDEBUG
  EXPECT_EQ(h.count(), 1);
  EXPECT_EQ(h.max(), 0);
#endif
}

#ifndef NDEBUG
TEST(HistogramDeathTest, ConstructorAssertsOnInvalidParameters) {
  EXPECT_DEATH(Histogram(0, 1000, 3), "invalid parameters");
}
#endif

}  // namespace
}  // namespace knee::core

namespace knee::core {
namespace {

TEST(HistogramExtremes, RestoredWithinTheirBucketsOnly) {
  Histogram h = Histogram::for_latency();
  h.record(1'234'567);
  h.record(9'876'543);
  Histogram bucketed = Histogram::for_latency();
  bucketed.record(h.lowest_equivalent_value(1'234'567));
  bucketed.record(h.highest_equivalent_value(9'876'543));
  ASSERT_NE(bucketed, h);
  ASSERT_TRUE(bucketed.restore_extremes(1'234'567, 9'876'543, 0));
  EXPECT_EQ(bucketed, h);
  EXPECT_FALSE(bucketed.restore_extremes(1'000, 9'876'543, 0));  // below the lowest bucket
  EXPECT_FALSE(bucketed.restore_extremes(1'234'567, 20'000'000, 0));
  EXPECT_FALSE(bucketed.restore_extremes(1'234'567, 9'876'543, 3));  // more clamped than counted
  EXPECT_EQ(bucketed.min(), 1'234'567);                              // unchanged by the refusals
  Histogram empty = Histogram::for_latency();
  EXPECT_TRUE(empty.restore_extremes(0, 0, 0));
  EXPECT_FALSE(empty.restore_extremes(5, 5, 0));
}

}  // namespace
}  // namespace knee::core
