#include "core/units.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace knee::core {
namespace {

using namespace std::chrono_literals;

Nanos parsed(std::string_view text) {
  Result<Nanos> r = parse_duration(text);
  EXPECT_TRUE(r.has_value()) << "'" << text << "': " << r.status().message();
  return r.has_value() ? *r : Nanos(-1);
}

TEST(ParseDuration, AcceptsNumbersWithUnits) {
  EXPECT_EQ(parsed("2s"), 2s);
  EXPECT_EQ(parsed("1.5s"), 1500ms);
  EXPECT_EQ(parsed("500ms"), 500ms);
  EXPECT_EQ(parsed("100us"), 100us);
  EXPECT_EQ(parsed("250ns"), 250ns);
  EXPECT_EQ(parsed("1m"), 60s);
  EXPECT_EQ(parsed("1h"), 3600s);
  EXPECT_EQ(parsed("0s"), 0s);
}

// Regression: `--cpu 10` was read as 10 s of CPU per request; a bare number must name its unit.
TEST(ParseDuration, BareNumberIsRefusedExceptZero) {
  EXPECT_FALSE(parse_duration("2"));
  EXPECT_NE(parse_duration("10").status().message().find("no unit"), std::string::npos);
  EXPECT_EQ(parsed("0"), 0s);
}

TEST(ParseDuration, RejectsNegativeEmptyAndMalformedText) {
  for (std::string_view text : {" -1s", "-1s", "abc", "5parsecs", "", "1.2.3s", "s", "2 s"}) {
    const Result<Nanos> r = parse_duration(text);
    ASSERT_FALSE(r.has_value()) << "'" << text << "' parsed as " << r->count() << " ns";
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << text;
    EXPECT_NE(r.status().message().find("'" + std::string(text) + "'"), std::string::npos)
        << "the message names the input: " << r.status().message();
  }
}

TEST(ParsePositiveIntList, AcceptsCommaSeparatedPositiveIntegers) {
  const Result<std::vector<int64_t>> r = parse_positive_int_list("1,2,4");
  ASSERT_TRUE(r.has_value()) << r.status().message();
  EXPECT_EQ(*r, (std::vector<int64_t>{1, 2, 4}));
  const Result<std::vector<int64_t>> one = parse_positive_int_list("64");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(*one, (std::vector<int64_t>{64}));
}

TEST(ParsePositiveIntList, RejectsZeroNegativeEmptyAndNonDigits) {
  for (std::string_view text : {"0", "abc", "1,,2", "", "-3", "1,2,", ",1", "1.5", "2,x"}) {
    const Result<std::vector<int64_t>> r = parse_positive_int_list(text);
    EXPECT_FALSE(r.has_value()) << "'" << text << "'";
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << text;
  }
}

TEST(ParsePositiveIntList, RejectsValuesAboveMax) {
  EXPECT_TRUE(parse_positive_int_list("1,4", 4).has_value());
  const Result<std::vector<int64_t>> r = parse_positive_int_list("1,5", 4);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
}

TEST(FormatDurationNs, PicksTheUnitForPeople) {
  EXPECT_EQ(format_duration_ns(850), "850 ns");
  EXPECT_EQ(format_duration_ns(1500), "1.50 us");
  EXPECT_EQ(format_duration_ns(4'330'000), "4.33 ms");
  EXPECT_EQ(format_duration_ns(2e9), "2.00 s");
  EXPECT_EQ(format_duration_ns(0), "0 ns");
}

TEST(FormatUtcDate, GivesTheCalendarDayInUtc) {
  EXPECT_EQ(format_utc_date(0), "1970-01-01");
  EXPECT_EQ(format_utc_date(1769817599999), "2026-01-30");  // its last millisecond
  EXPECT_EQ(format_utc_date(1769817600000), "2026-01-31");
  EXPECT_EQ(format_utc_date(-1), "1969-12-31");  // floor, not truncation toward zero
  EXPECT_EQ(format_utc_date(951782400000), "2000-02-29");
}

}  // namespace
}  // namespace knee::core

namespace knee::core {
namespace {

TEST(ParseCount, AcceptsWholeNumbersWithSiSuffixes) {
  EXPECT_EQ(*parse_count("100000"), 100'000);
  EXPECT_EQ(*parse_count("100k"), 100'000);
  EXPECT_EQ(*parse_count("100K"), 100'000);
  EXPECT_EQ(*parse_count("12M"), 12'000'000);
  EXPECT_EQ(*parse_count("1.5M"), 1'500'000);
  EXPECT_EQ(*parse_count("0.3k"), 300);
  EXPECT_EQ(*parse_count("2G"), 2'000'000'000);
  EXPECT_EQ(*parse_count("0"), 0);
}

TEST(ParseCount, RefusesFractionsUnknownSuffixesAndNegatives) {
  for (const char* bad : {"", "k", "1.5", "12m", "12MB", "-1", "1e6", "2e15k", " 5", "abc"}) {
    auto r = parse_count(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.status().message().find("not a count"), std::string::npos) << bad;
    }
  }
}

}  // namespace
}  // namespace knee::core

namespace knee::core {
namespace {

TEST(ParseWallTime, EpochIsoAndRelative) {
  const double now = 1'796'212'000.25;  // 2026-12-02T11:46:40Z
  EXPECT_DOUBLE_EQ(*parse_wall_time("1796212800", now), 1'796'212'800.0);
  EXPECT_DOUBLE_EQ(*parse_wall_time("1796212800.5", now), 1'796'212'800.5);
  EXPECT_DOUBLE_EQ(*parse_wall_time("2026-12-02T12:00:00Z", now), 1'796'212'800.0);
  EXPECT_DOUBLE_EQ(*parse_wall_time("2026-12-02T12:00Z", now), 1'796'212'800.0);
  EXPECT_DOUBLE_EQ(*parse_wall_time("+30s", now), now + 30);
}

TEST(ParseWallTime, RefusesOtherFormsThePastAndFarFuture) {
  const double now = 1'796'212'000.0;
  for (const char* bad : {"", "soon", "12:00", "2026-12-02T12:00:00", "2026-02-30T12:00:00Z",
                          "2026-12-02T25:00:00Z", "+30", "1796212800x", "2026-12-02T12:00:00Zx",
                          "2026-12-02T12:-5:00Z", " 1796212800", "0x6b0f2100", "1.7962128e9"}) {
    auto t = parse_wall_time(bad, now);
    EXPECT_FALSE(t) << bad;
    if (!t) {
      EXPECT_EQ(t.status().code(), Status::Code::kInvalidArgument) << bad;
    }
  }
  auto past = parse_wall_time("1796211000", now);
  ASSERT_FALSE(past);
  EXPECT_NE(past.status().message().find("has passed"), std::string::npos);
  EXPECT_FALSE(parse_wall_time("+2d", now));  // parse_duration has no days; and too far
  EXPECT_FALSE(parse_wall_time("+25h", now));
}

}  // namespace
}  // namespace knee::core
