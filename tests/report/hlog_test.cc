#include "report/hlog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace knee::report {
namespace {

using core::Histogram;
using core::Status;

using Bytes = std::vector<uint8_t>;

constexpr int64_t kOneHourNs = 3'600'000'000'000;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Latency-like values: log-uniform over [1, highest / 2], never clamped.
std::vector<int64_t> log_uniform_values(int n, int64_t highest, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(0.0, std::log2(static_cast<double>(highest)) - 1);
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(std::llround(std::exp2(exponent(rng))));
  return out;
}

Histogram record_all(Histogram h, const std::vector<int64_t>& values) {
  for (int64_t v : values) h.record(v);
  return h;
}

// What V2 keeps of h: the same counts with min() and max() at their buckets' bounds (see hlog.h).
// Recording those bounds into h makes it "bucket-aligned", a histogram that round-trips exactly.
void align_min_max(Histogram& h) {
  if (h.count() == 0) return;
  const int64_t min = h.min();
  const int64_t max = h.max();
  h.record(h.lowest_equivalent_value(min));
  h.record(std::min(h.highest_equivalent_value(max), h.highest_trackable_value()));
}

std::vector<Histogram> layouts() {
  return {Histogram::for_latency(), Histogram(1000, 10'000'000'000, 2), Histogram(1, 100'000, 5),
          Histogram(7, kInt64Max, 1)};
}

// --- ZigZag LEB128 (ZigZagEncoding.java) ---

// Bytes written by HdrHistogram 2.1.11's ZigZagEncoding.putLong for the same values.
const std::vector<std::pair<int64_t, Bytes>>& known_varints() {
  static const std::vector<std::pair<int64_t, Bytes>> kKnown = {
      {0, {0x00}},
      {-1, {0x01}},
      {1, {0x02}},
      {63, {0x7e}},
      {-64, {0x7f}},
      {64, {0x80, 0x01}},
      {-65, {0x81, 0x01}},
      {8191, {0xfe, 0x7f}},
      {8192, {0x80, 0x80, 0x01}},
      {int64_t{1} << 35, {0x80, 0x80, 0x80, 0x80, 0x80, 0x02}},
      {kInt64Max, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
      {kInt64Min, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
  };
  return kKnown;
}

TEST(ZigZagVarint, WritesHdrHistogramsBytes) {
  for (const auto& [value, bytes] : known_varints()) {
    Bytes out;
    put_zigzag_varint(value, out);
    EXPECT_EQ(out, bytes) << value;
  }
}

TEST(ZigZagVarint, ReadsHdrHistogramsBytesAndAdvances) {
  for (const auto& [value, bytes] : known_varints()) {
    Bytes in = bytes;
    in.push_back(0x55);  // the next value must not be consumed
    size_t pos = 0;
    EXPECT_EQ(get_zigzag_varint(in, pos), value);
    EXPECT_EQ(pos, bytes.size()) << value;
  }
}

TEST(ZigZagVarint, TruncatedValueIsNulloptAndKeepsPosition) {
  for (const auto& [value, bytes] : known_varints()) {
    if (bytes.size() < 2) continue;
    const Bytes cut(bytes.begin(), bytes.end() - 1);
    size_t pos = 0;
    EXPECT_EQ(get_zigzag_varint(cut, pos), std::nullopt) << value;
    EXPECT_EQ(pos, 0u);
  }
}

TEST(ZigZagVarint, RandomValuesRoundTrip) {
  std::mt19937_64 rng(11);
  Bytes all;
  std::vector<int64_t> values;
  for (int i = 0; i < 10'000; ++i) {
    // Every magnitude: shift a random 64-bit pattern right by 0..63.
    const auto v = static_cast<int64_t>(rng()) >> (rng() % 64);
    values.push_back(v);
    put_zigzag_varint(v, all);
  }
  size_t pos = 0;
  for (int64_t v : values) ASSERT_EQ(get_zigzag_varint(all, pos), v);
  EXPECT_EQ(pos, all.size());
}

// --- V2 encoding (AbstractHistogram.java) ---

// Bytes of HdrHistogram 2.1.11's encodeIntoByteBuffer for new Histogram(1, 3600000000000L, 3).
const Bytes kJavaEmptyV2 = {0x1c, 0x84, 0x93, 0x13, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
                            0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                            0x00, 0x01, 0x00, 0x00, 0x03, 0x46, 0x30, 0xb8, 0xa0, 0x00, 0x3f,
                            0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
// ... after recordValue(5) twice, recordValue(3000), recordValueWithCount(1000000, 7).
const Bytes kJavaSomeV2 = {0x1c, 0x84, 0x93, 0x13, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
                           0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00,
                           0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x03, 0x46, 0x30, 0xb8,
                           0xa0, 0x00, 0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                           0x09, 0x04, 0xab, 0x27, 0x02, 0x87, 0x87, 0x01, 0x0e};

Histogram java_some() {
  Histogram h = Histogram::for_latency();
  h.record(5, 2);
  h.record(3000);
  h.record(1'000'000, 7);
  return h;
}

TEST(EncodeV2, MatchesHdrHistogramJavaBytes) {
  EXPECT_EQ(encode_v2(Histogram::for_latency()), kJavaEmptyV2);
  EXPECT_EQ(encode_v2(java_some()), kJavaSomeV2);
}

TEST(DecodeV2, ReadsHdrHistogramJavaBytes) {
  auto empty = decode(kJavaEmptyV2);
  ASSERT_TRUE(empty) << empty.status().message();
  EXPECT_EQ(*empty, Histogram::for_latency());

  auto some = decode(kJavaSomeV2);
  ASSERT_TRUE(some) << some.status().message();
  EXPECT_EQ(some->count(), 10);
  EXPECT_EQ(some->min(), 5);
  // Max widened to its bucket's top, as HdrHistogram's getMaxValue() answers: 1000447.
  EXPECT_EQ(some->max(), java_some().highest_equivalent_value(1'000'000));
  EXPECT_EQ(some->max(), 1'000'447);
  const Histogram expected = java_some();
  for (size_t i = 0; i < some->counts_length(); ++i) {
    ASSERT_EQ(some->count_at_index(i), expected.count_at_index(i)) << i;
  }
}

TEST(DecodeV2, BucketAlignedRandomHistogramsRoundTripEqual) {
  uint64_t seed = 100;
  for (const Histogram& layout : layouts()) {
    for (int n : {1, 2, 10, 1000, 20'000}) {
      Histogram h =
          record_all(layout, log_uniform_values(n, layout.highest_trackable_value(), ++seed));
      align_min_max(h);
      auto back = decode(encode_v2(h));
      ASSERT_TRUE(back) << back.status().message();
      EXPECT_EQ(*back, h) << "layout highest " << layout.highest_trackable_value() << ", n " << n;
    }
  }
}

TEST(DecodeV2, KeepsCountsAndWidensMinMaxToBucketBounds) {
  uint64_t seed = 200;
  for (const Histogram& layout : layouts()) {
    const Histogram h =
        record_all(layout, log_uniform_values(5000, layout.highest_trackable_value(), ++seed));
    auto back = decode(encode_v2(h));
    ASSERT_TRUE(back) << back.status().message();
    EXPECT_EQ(back->count(), h.count());
    EXPECT_EQ(back->min(), h.lowest_equivalent_value(h.min()));
    EXPECT_EQ(back->max(),
              std::min(h.highest_equivalent_value(h.max()), h.highest_trackable_value()));
    for (size_t i = 0; i < h.counts_length(); ++i) {
      ASSERT_EQ(back->count_at_index(i), h.count_at_index(i)) << i;
    }
    EXPECT_EQ(back->value_at_percentile(50), h.value_at_percentile(50));
    EXPECT_EQ(back->value_at_percentile(90), h.value_at_percentile(90));
  }
}

TEST(DecodeV2, EmptyAndSingleValueHistogramsRoundTrip) {
  for (const Histogram& layout : layouts()) {
    auto empty = decode(encode_v2(layout));
    ASSERT_TRUE(empty) << empty.status().message();
    EXPECT_EQ(*empty, layout);
    EXPECT_EQ(encode_v2(layout).size(), kV2HeaderBytes + 1);  // one zero counter
  }
  // A value alone in a one-wide bucket is exact.
  Histogram one = Histogram::for_latency();
  one.record(1234);
  auto back = decode(encode_v2(one));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, one);
}

TEST(DecodeV2, CountersAboveHighestTrackableAreClamped) {
  // HdrHistogram records up to its last bucket's top, above highestTrackableValue; such a counter
  // decodes as highest_trackable_value(), counted in clamped_count().
  Histogram wide(1, 4'300'000'000'000, 3);  // same counters as for_latency()
  ASSERT_EQ(wide.counts_length(), Histogram::for_latency().counts_length());
  wide.record(10);
  wide.record(4'000'000'000'000);
  Bytes bytes = encode_v2(wide);
  const auto highest = static_cast<uint64_t>(kOneHourNs);
  for (size_t i = 0; i < 8; ++i) bytes[24 + i] = static_cast<uint8_t>(highest >> (56 - 8 * i));
  auto back = decode(bytes);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->highest_trackable_value(), kOneHourNs);
  EXPECT_EQ(back->count(), 2);
  EXPECT_EQ(back->clamped_count(), 1);
  EXPECT_EQ(back->max(), kOneHourNs);
}

// --- Compressed V2 ---

TEST(DecodeCompressedV2, RandomHistogramsRoundTripEqual) {
  uint64_t seed = 300;
  for (const Histogram& layout : layouts()) {
    Histogram h =
        record_all(layout, log_uniform_values(10'000, layout.highest_trackable_value(), ++seed));
    align_min_max(h);
    const Bytes bytes = encode_compressed_v2(h);
    ASSERT_GE(bytes.size(), 8u);
    EXPECT_EQ((Bytes{bytes.begin(), bytes.begin() + 4}), (Bytes{0x1c, 0x84, 0x93, 0x14}));
    const uint32_t length = uint32_t{bytes[4]} << 24 | uint32_t{bytes[5]} << 16 |
                            uint32_t{bytes[6]} << 8 | uint32_t{bytes[7]};
    EXPECT_EQ(length, bytes.size() - 8);
    EXPECT_LT(bytes.size(), encode_v2(h).size());
    auto back = decode(bytes);
    ASSERT_TRUE(back) << back.status().message();
    EXPECT_EQ(*back, h);
  }
}

// --- Corrupted input ---

void put_be32_at(Bytes& b, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// A hand-made V2 encoding of for_latency()'s layout with the given counts payload.
Bytes v2_with_payload(const Bytes& payload) {
  Bytes b = encode_v2(Histogram::for_latency());
  b.resize(kV2HeaderBytes);
  b.insert(b.end(), payload.begin(), payload.end());
  put_be32_at(b, 4, static_cast<uint32_t>(payload.size()));
  return b;
}

void expect_parse_error(const Bytes& bytes, std::string_view words) {
  auto r = decode(bytes);
  ASSERT_FALSE(r) << "expected an error mentioning '" << words << "'";
  EXPECT_EQ(r.status().code(), Status::Code::kParseError);
  EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().message();
}

TEST(Decode, RejectsCorruptedInputNamingTheProblem) {
  const Bytes good = encode_v2(java_some());
  const Bytes good_z = encode_compressed_v2(java_some());

  expect_parse_error({}, "shorter than the 8-byte");
  expect_parse_error({0x1c, 0x84, 0x93}, "shorter than the 8-byte");
  expect_parse_error({0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0}, "not an HdrHistogram encoding");
  Bytes v1 = good;
  put_be32_at(v1, 0, 0x1c849322);
  expect_parse_error(v1, "V0/V1");

  expect_parse_error(Bytes(good.begin(), good.begin() + 20), "shorter than the 40-byte");
  expect_parse_error(Bytes(good.begin(), good.end() - 1), "does not match");
  Bytes trailing = good;
  trailing.push_back(0);
  expect_parse_error(trailing, "does not match");
  Bytes negative_length = good;
  put_be32_at(negative_length, 4, 0x80000000u);
  expect_parse_error(negative_length, "negative");

  Bytes offset = good;
  put_be32_at(offset, 8, 5);
  expect_parse_error(offset, "normalizing index offset 5");
  Bytes digits = good;
  put_be32_at(digits, 12, 0);
  expect_parse_error(digits, "layout");
  Bytes ratio = good;
  ratio[33] = 0xf8;  // 1.5 instead of 1.0
  expect_parse_error(ratio, "conversion ratio");

  expect_parse_error(v2_with_payload({0x80}), "truncated varint");
  const size_t counters = Histogram::for_latency().counts_length();
  Bytes run;
  put_zigzag_varint(-static_cast<int64_t>(counters + 1), run);
  expect_parse_error(v2_with_payload(run), "passes the layout's");
  Bytes past;
  put_zigzag_varint(-static_cast<int64_t>(counters), past);
  put_zigzag_varint(1, past);
  expect_parse_error(v2_with_payload(past), "past the layout's");
  Bytes min_run;
  put_zigzag_varint(kInt64Min, min_run);
  expect_parse_error(v2_with_payload(min_run), "out of range");
  Bytes overflow;
  put_zigzag_varint(kInt64Max, overflow);
  put_zigzag_varint(1, overflow);
  expect_parse_error(v2_with_payload(overflow), "overflows int64");

  Bytes z_length = good_z;
  put_be32_at(z_length, 4, static_cast<uint32_t>(good_z.size()));
  expect_parse_error(z_length, "compressed length");
  expect_parse_error(Bytes(good_z.begin(), good_z.end() - 3), "compressed length");
  Bytes z_garbage = good_z;
  std::fill(z_garbage.begin() + 8, z_garbage.end(), 0xa5);
  expect_parse_error(z_garbage, "zlib");
  Bytes z_cut = good_z;
  z_cut.resize(z_cut.size() - 6);  // drop the end of the deflate stream
  put_be32_at(z_cut, 4, static_cast<uint32_t>(z_cut.size() - 8));
  expect_parse_error(z_cut, "zlib");
}

// Decoding never crashes (the sanitizers watch) and fails only with kParseError, whatever byte
// is cut or flipped.
TEST(Decode, TruncatedOrFlippedBytesFailCleanly) {
  Histogram h = record_all(Histogram::for_latency(), log_uniform_values(300, kOneHourNs, 400));
  for (const Bytes& good : {encode_v2(h), encode_compressed_v2(h)}) {
    for (size_t n = 0; n < good.size(); ++n) {
      auto r = decode(std::span<const uint8_t>(good).first(n));
      ASSERT_FALSE(r) << n;
      ASSERT_EQ(r.status().code(), Status::Code::kParseError);
    }
    for (size_t i = 0; i < good.size(); ++i) {
      for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
        Bytes bad = good;
        bad[i] ^= flip;
        auto r = decode(bad);
        if (!r) {
          ASSERT_EQ(r.status().code(), Status::Code::kParseError) << r.status().message();
        }
      }
    }
  }
}

// --- Interval log writer and reader ---

TEST(HlogWriter, WritesHistogramLogWriterHeaderAndLines) {
  std::ostringstream out;
  HlogWriter writer(out, 1'700'000'000.123);
  Histogram h = Histogram::for_latency();
  h.record(2'500'000);  // 2.5 ms
  ASSERT_TRUE(writer.write_interval(0, 1, h));
  ASSERT_TRUE(writer.write_interval(1.5, 0.25, h, "service_time"));

  std::istringstream in(out.str());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "#[Histogram log format version 1.3]");
  EXPECT_EQ(lines[1],
            "#[StartTime: 1700000000.123 (seconds since epoch), Tue Nov 14 22:13:20 UTC 2023]");
  EXPECT_EQ(lines[2],
            R"("StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram")");
  EXPECT_TRUE(lines[3].starts_with("0.000,1.000,2.500,HISTFAAAA")) << lines[3];
  EXPECT_TRUE(lines[4].starts_with("Tag=service_time,1.500,0.250,2.500,HISTFAAAA")) << lines[4];
}

TEST(HlogWriter, BaseTimeAndUnitRatioOptions) {
  std::ostringstream out;
  HlogWriter writer(out, 1'700'000'000.5, {.max_value_unit_ratio = 1e3, .write_base_time = true});
  Histogram h = Histogram::for_latency();
  h.record(1500);
  ASSERT_TRUE(writer.write_interval(2, 1, h));
  EXPECT_NE(out.str().find("\n#[BaseTime: 1700000000.500 (seconds since epoch)]\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("\n2.000,1.000,1.500,"), std::string::npos) << out.str();
}

TEST(HlogWriter, RejectsBadTagsAndTimes) {
  std::ostringstream out;
  HlogWriter writer(out, 1'700'000'000);
  const Histogram h = Histogram::for_latency();
  for (std::string_view tag : {"a,b", "a b", "a\nb", "a\rb"}) {
    EXPECT_EQ(writer.write_interval(0, 1, h, tag).code(), Status::Code::kInvalidArgument) << tag;
  }
  EXPECT_EQ(writer.write_interval(std::nan(""), 1, h).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(writer.write_interval(0, -1, h).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(writer.write_interval(0, INFINITY, h).code(), Status::Code::kInvalidArgument);
}

TEST(HlogWriter, FailedStreamIsAnIoError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  HlogWriter writer(out, 1'700'000'000);
  EXPECT_EQ(writer.write_interval(0, 1, Histogram::for_latency()).code(), Status::Code::kIoError);
}

TEST(HlogWriter, LinesReadBackEqual) {
  for (bool base_time : {false, true}) {
    std::ostringstream out;
    HlogWriter writer(out, 1'700'000'000.123, {.write_base_time = base_time});
    std::vector<HlogInterval> written;
    for (int i = 0; i < 6; ++i) {
      Histogram h =
          record_all(Histogram::for_latency(),
                     log_uniform_values(2000, kOneHourNs, 500 + static_cast<uint64_t>(i)));
      align_min_max(h);
      const std::string tag = i % 2 == 1 ? "service" : "";
      ASSERT_TRUE(writer.write_interval(i * 0.5, 0.5, h, tag));
      written.push_back(HlogInterval{tag, i * 0.5, 0.5, std::move(h)});
    }
    written.push_back(HlogInterval{"", 3.0, 0.5, Histogram::for_latency()});
    ASSERT_TRUE(writer.write_interval(3.0, 0.5, Histogram::for_latency()));

    std::istringstream in(out.str());
    auto read = read_hlog(in);
    ASSERT_TRUE(read) << read.status().message();
    ASSERT_EQ(read->size(), written.size());
    for (size_t i = 0; i < written.size(); ++i) {
      EXPECT_EQ((*read)[i].tag, written[i].tag) << i;
      EXPECT_EQ((*read)[i].start_s, written[i].start_s) << i;
      EXPECT_EQ((*read)[i].length_s, written[i].length_s) << i;
      EXPECT_EQ((*read)[i].histogram, written[i].histogram) << i;
    }
  }
}

// Written by HdrHistogram 2.1.11's HistogramLogWriter (tests/report/java/HlogCheck.java write) from
// 2,500 values; HdrHistogram printed count 2500, max 1000341503, p50 754, p99 3000319,
// p99.9 3002367 for what it recorded.
constexpr std::string_view kJavaLog =
    "#[Logged with HlogCheck, knee tests/report/java]\n"
    "#[Histogram log format version 1.3]\n"
    "#[StartTime: 1700000000.123 (seconds since epoch), Tue Nov 14 22:13:20 UTC 2023]\n"
    R"("StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram")"
    "\n"
    "0.000,1.000,1000.342,"
    "HISTFAAAAHJ42pNpmSzMwMD6kAECmKE0I5DpZrBjAYP9B6gIEwsLAxMTKsIQYGJiGkKKmMkziH"
    "nYBACFipjJM4iZmi5iGAyKmMkziHlQ+Y1t4IKSmTyDmAdPCqCSImayDGIly67DHEwsb5cxsghM5mG6XcUEAIGpEXQ=\n"
    "1.000,1.000,3.002,HISTFAAAAGJ42pNpmSzMwMB6nQECmKE0I5DpZrBjAYP9B6gIEwMTOmLCFKNQETN5BjHjMZuBGAcM"
    "F0XM5BnEPHQDAEeyYCYvDTJTMzEPZUXM5BnEPOxCiZk8g5gHv9+2r2dkEQAAZoUOfA==\n"
    "Tag=slow,2.000,1.000,3.002,"
    "HISTFAAAAE942pNpmSzMwMD8mAECmKE0I5DpZrBjAYP9B6gEEwKyI7EZwCQnVlFcqvGL"
    "o/IGWoZ90LqMkAwnFeJiMIlzDhnX8w65MN66npGJAwAWdxA3\n";

TEST(ReadHlog, ReadsALogWrittenByHdrHistogram) {
  std::istringstream in{std::string(kJavaLog)};
  auto read = read_hlog(in);
  ASSERT_TRUE(read) << read.status().message();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[0].tag, "");
  EXPECT_EQ((*read)[2].tag, "slow");
  EXPECT_EQ((*read)[1].start_s, 1.0);
  EXPECT_EQ((*read)[2].length_s, 1.0);
  const Histogram all = merge_intervals(*read);
  EXPECT_EQ(all.count(), 2500);
  EXPECT_EQ(all.max(), 1'000'341'503);
  EXPECT_EQ(all.value_at_percentile(50), 754);
  EXPECT_EQ(all.value_at_percentile(99), 3'000'319);
  EXPECT_EQ(all.value_at_percentile(99.9), 3'002'367);
  EXPECT_EQ(merge_intervals(*read, std::nullopt, std::nullopt, "slow").count(), 500);
  EXPECT_EQ(merge_intervals(*read, std::nullopt, std::nullopt, "").count(), 2000);
}

// One interval line of a log: an interval holding `count` samples of 1000.
std::string interval_line(std::string_view prefix, int64_t count = 1) {
  std::ostringstream out;
  HlogWriter writer(out, 0);
  Histogram h = Histogram::for_latency();
  h.record(1000, count);
  EXPECT_TRUE(writer.write_interval(0, 1, h));
  const std::string text = out.str();
  const size_t histogram_at = text.rfind(',') + 1;
  return std::string(prefix) + ",0.001," + text.substr(histogram_at);
}

TEST(ReadHlog, AbsoluteTimestampsAreOffsetFromStartTime) {
  std::istringstream in("#[StartTime: 1700000000.000 (seconds since epoch), x]\n" +
                        interval_line("1700000001.500,1.000") +
                        interval_line("1700000002.500,1.000"));
  auto read = read_hlog(in);
  ASSERT_TRUE(read) << read.status().message();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_DOUBLE_EQ((*read)[0].start_s, 1.5);
  EXPECT_DOUBLE_EQ((*read)[1].start_s, 2.5);
}

TEST(ReadHlog, BaseTimeIsHonoured) {
  // Timestamps relative to BaseTime, which is 10 s after StartTime.
  std::istringstream in(
      "#[StartTime: 1700000000.000 (seconds since epoch), x]\n"
      "#[BaseTime: 1700000010.000 (seconds since epoch)]\n" +
      interval_line("2.000,1.000"));
  auto read = read_hlog(in);
  ASSERT_TRUE(read) << read.status().message();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_DOUBLE_EQ((*read)[0].start_s, 12.0);
}

TEST(ReadHlog, WithoutStartTimeTheFirstIntervalStartsAtZero) {
  std::istringstream in(interval_line("1700000005.000,1.000") +
                        interval_line("1700000006.250,1.000"));
  auto read = read_hlog(in);
  ASSERT_TRUE(read) << read.status().message();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_DOUBLE_EQ((*read)[0].start_s, 0.0);
  EXPECT_DOUBLE_EQ((*read)[1].start_s, 1.25);
}

TEST(ReadHlog, SkipsCommentsBlankLinesAndCrlf) {
  std::string line = interval_line("Tag=x,0.000,1.000", 3);
  line.insert(line.size() - 1, "\r");
  std::istringstream in("#[Logged with something]\r\n\r\n# a comment\n\"StartTimestamp\",...\r\n" +
                        line + "\n");
  auto read = read_hlog(in);
  ASSERT_TRUE(read) << read.status().message();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].tag, "x");
  EXPECT_EQ((*read)[0].histogram.count(), 3);
}

TEST(ReadHlog, ErrorsNameTheLineAndTheField) {
  const std::string header = "#[Histogram log format version 1.3]\n";
  const std::string good = interval_line("0.000,1.000");
  const std::string histogram = good.substr(good.rfind(',') + 1);
  const std::pair<std::string, std::string> cases[] = {
      {"#[StartTime: soon]\n", "line 2: StartTime is not a number"},
      {"#[BaseTime: ]\n", "line 2: BaseTime is not a number"},
      {"0.000,1.000,0.001\n", "line 2: 3 fields"},
      {"Tag=a,0.000,1.000,0.001," + histogram.substr(0, histogram.size() - 1) + ",extra\n",
       "line 2: 5 fields"},
      {"zero,1.000,0.001," + histogram, "line 2: start timestamp 'zero'"},
      {"0.000,,0.001," + histogram, "line 2: interval length ''"},
      {"0.000,1.000,inf," + histogram, "line 2: interval max 'inf'"},
      {"0.000,1.000,0.001,HISTFAAAA\n", "line 2: base64 length"},
      {"0.000,1.000,0.001,HIST*AAA\n", "line 2: base64 character '*'"},
      {"0.000,1.000,0.001,AAAAAAAAAAAA\n", "line 2: hdr decode: cookie 0x00000000"},
  };
  for (const auto& [body, words] : cases) {
    std::istringstream in(header + body);
    auto read = read_hlog(in);
    ASSERT_FALSE(read) << body;
    EXPECT_EQ(read.status().code(), Status::Code::kParseError);
    EXPECT_NE(read.status().message().find(words), std::string::npos)
        << read.status().message() << " / expected: " << words;
  }
}

// --- Merging intervals ---

// Writes one run's log: values split into `intervals` intervals of 1 s.
std::string run_log(const std::vector<int64_t>& values, int intervals, std::string_view tag = {}) {
  std::ostringstream out;
  HlogWriter writer(out, 1'700'000'000);
  const size_t per =
      (values.size() + static_cast<size_t>(intervals) - 1) / static_cast<size_t>(intervals);
  for (int i = 0; i < intervals; ++i) {
    Histogram h = Histogram::for_latency();
    const size_t from = static_cast<size_t>(i) * per;
    for (size_t k = from; k < std::min(values.size(), from + per); ++k) h.record(values[k]);
    EXPECT_TRUE(writer.write_interval(i, 1, h, tag));
  }
  return out.str();
}

std::vector<HlogInterval> read_all(const std::vector<std::string>& logs) {
  std::vector<HlogInterval> all;
  for (const std::string& log : logs) {
    std::istringstream in(log);
    auto read = read_hlog(in);
    EXPECT_TRUE(read) << read.status().message();
    if (!read) continue;
    for (HlogInterval& interval : *read) all.push_back(std::move(interval));
  }
  return all;
}

TEST(MergeIntervals, TwoLogsEqualOneHistogramRecordingBoth) {
  // Values below 2048 ns sit in one-wide buckets, so V2 keeps them exactly.
  std::mt19937_64 rng(600);
  std::uniform_int_distribution<int64_t> small(1, 2047);
  std::vector<int64_t> a;
  std::vector<int64_t> b;
  for (int i = 0; i < 5000; ++i) a.push_back(small(rng));
  for (int i = 0; i < 3000; ++i) b.push_back(small(rng));
  const Histogram both = record_all(record_all(Histogram::for_latency(), a), b);
  EXPECT_EQ(merge_intervals(read_all({run_log(a, 5), run_log(b, 3)})), both);

  // Any values: the merge equals what V2 keeps of one histogram recording both.
  a = log_uniform_values(5000, kOneHourNs, 601);
  b = log_uniform_values(7000, kOneHourNs, 602);
  const Histogram wide_both = record_all(record_all(Histogram::for_latency(), a), b);
  auto kept = decode(encode_v2(wide_both));
  ASSERT_TRUE(kept);
  EXPECT_EQ(merge_intervals(read_all({run_log(a, 4), run_log(b, 7)})), *kept);
}

TEST(MergeIntervals, SelectsByInclusiveTimeRangeAndTag) {
  std::vector<int64_t> values;
  for (int i = 1; i <= 10; ++i) values.push_back(i);  // interval i holds the value i + 1
  const std::vector<HlogInterval> all =
      read_all({run_log(values, 10), run_log({100, 200}, 2, "t")});
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(merge_intervals(all).count(), 12);
  EXPECT_EQ(merge_intervals(all, std::nullopt, std::nullopt, "").count(), 10);
  EXPECT_EQ(merge_intervals(all, std::nullopt, std::nullopt, "t").count(), 2);
  EXPECT_EQ(merge_intervals(all, std::nullopt, std::nullopt, "none").count(), 0);

  const Histogram range = merge_intervals(all, 2.0, 4.0, "");
  EXPECT_EQ(range.count(), 3);
  EXPECT_EQ(range.min(), 3);
  EXPECT_EQ(range.max(), 5);
  EXPECT_EQ(merge_intervals(all, 8.0, std::nullopt, "").count(), 2);
  EXPECT_EQ(merge_intervals(all, std::nullopt, 0.0).count(), 2);  // both logs' first interval
}

TEST(IntervalTags, EachTagOnceInOrderOfFirstAppearance) {
  std::vector<HlogInterval> log;
  for (const char* tag : {"c8", "", "c2", "c8", "", "c2", "c16"}) {
    log.push_back(HlogInterval{tag, 0, 1, Histogram::for_latency()});
  }
  EXPECT_EQ(interval_tags(log), (std::vector<std::string>{"c8", "", "c2", "c16"}));
  EXPECT_TRUE(interval_tags({}).empty());
}

TEST(MergeIntervals, EmptySpanGivesAnEmptyLatencyHistogram) {
  EXPECT_EQ(merge_intervals({}), Histogram::for_latency());
}

}  // namespace
}  // namespace knee::report
