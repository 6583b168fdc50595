#include "lab/endpoints.h"

#include <gtest/gtest.h>

#include <string>

namespace knee::lab {
namespace {

TEST(SplitTarget, SplitsPathAndQuery) {
  Target t = split_target("/tracking?no=G1-0&x=y");
  EXPECT_EQ(t.path, "/tracking");
  EXPECT_EQ(t.query, "no=G1-0&x=y");
  t = split_target("/fast");
  EXPECT_EQ(t.path, "/fast");
  EXPECT_EQ(t.query, "");
  t = split_target("/a?");
  EXPECT_EQ(t.path, "/a");
  EXPECT_EQ(t.query, "");
}

TEST(SplitTarget, DropsSchemeAuthorityAndFragment) {
  Target t = split_target("http://127.0.0.1:8080/slow-async?ms=5#frag");
  EXPECT_EQ(t.path, "/slow-async");
  EXPECT_EQ(t.query, "ms=5");
  EXPECT_EQ(split_target("http://host").path, "/");
  EXPECT_EQ(split_target("http://host?q=1").query, "q=1");
  EXPECT_EQ(split_target("*").path, "*");
}

TEST(RouteOf, MatchesExactPathsOnly) {
  EXPECT_EQ(route_of("/tracking"), Route::kTracking);
  EXPECT_EQ(route_of("/fast"), Route::kFast);
  EXPECT_EQ(route_of("/slow-async"), Route::kSlowAsync);
  EXPECT_EQ(route_of("/slow-sync"), Route::kSlowSync);
  EXPECT_EQ(route_of("/health"), Route::kHealth);
  EXPECT_EQ(route_of("/fast/"), Route::kNone);
  EXPECT_EQ(route_of("/FAST"), Route::kNone);
  EXPECT_EQ(route_of("/"), Route::kNone);
}

TEST(FindQueryParam, ReturnsTheFirstDecodedValue) {
  std::string v;
  ASSERT_TRUE(find_query_param("a=1&no=G1-0&no=second", "no", v));
  EXPECT_EQ(v, "G1-0");
  ASSERT_TRUE(find_query_param("no=a+b%20c%2fd", "no", v));
  EXPECT_EQ(v, "a b c/d");
  ASSERT_TRUE(find_query_param("n%6F=decoded-key", "no", v));
  EXPECT_EQ(v, "decoded-key");
  ASSERT_TRUE(find_query_param("no", "no", v));
  EXPECT_EQ(v, "");
  ASSERT_TRUE(find_query_param("&&no=&", "no", v));
  EXPECT_EQ(v, "");
  EXPECT_FALSE(find_query_param("nope=1&n=2", "no", v));
  EXPECT_FALSE(find_query_param("", "no", v));
}

TEST(FindQueryParam, KeepsMalformedEscapesAsWritten) {
  std::string v;
  ASSERT_TRUE(find_query_param("no=100%&x", "no", v));
  EXPECT_EQ(v, "100%");
  ASSERT_TRUE(find_query_param("no=%zz%4", "no", v));
  EXPECT_EQ(v, "%zz%4");
}

TEST(ParseMs, AcceptsNumbersFromZeroTo60000) {
  EXPECT_EQ(parse_ms(""), kDefaultSlowMs);
  EXPECT_EQ(parse_ms("0"), 0.0);
  EXPECT_EQ(parse_ms("20"), 20.0);
  EXPECT_EQ(parse_ms("0.5"), 0.5);
  EXPECT_EQ(parse_ms("60000"), 60000.0);
}

TEST(ParseMs, RefusesEverythingElse) {
  for (const char* bad : {"abc", "-1", "60001", "1e3", "5ms", " 5", "1.2.3", ".5", "5.", "+5",
                          "99999999999999999999"}) {
    EXPECT_FALSE(parse_ms(bad).has_value()) << bad;
  }
}

TEST(MsToNanos, RoundsToNanoseconds) {
  EXPECT_EQ(ms_to_nanos(50), core::Nanos(50'000'000));
  EXPECT_EQ(ms_to_nanos(0.2), core::Nanos(200'000));
}

std::string json(std::string_view bytes) {
  std::string out;
  append_json_string(out, bytes);
  return out;
}

TEST(AppendJsonString, EscapesLikeJsonStringify) {
  EXPECT_EQ(json("G1-0"), R"("G1-0")");
  EXPECT_EQ(json("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(json("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(json(std::string_view("\x01\x1f\x00", 3)), R"("\u0001\u001f\u0000")");
  EXPECT_EQ(json("/\x7f"), "\"/\x7f\"");
}

TEST(AppendJsonString, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(json("\xc3\xa9\xe2\x82\xac\xf0\x9f\x93\xa6"),
            "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x93\xa6\"");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(json("\xff"), "\"" + fffd + "\"");
  EXPECT_EQ(json("a\xc3"), "\"a" + fffd + "\"");      // truncated
  EXPECT_EQ(json("\xe2\x82z"), "\"" + fffd + "z\"");  // one U+FFFD per maximal subpart
  EXPECT_EQ(json("\xed\xa0\x80"), "\"" + fffd + fffd + fffd + "\"");  // a surrogate
  EXPECT_EQ(json("\xc0\xaf"), "\"" + fffd + fffd + "\"");             // overlong
}

TEST(BurnThreadCpu, UsesAtLeastTheAskedCpuTime) {
  const core::Nanos before = core::thread_cpu_time();
  burn_thread_cpu(std::chrono::milliseconds(5));
  EXPECT_GE(core::thread_cpu_time() - before, std::chrono::milliseconds(5));
  burn_thread_cpu(core::Nanos(-1));  // returns at once
}

}  // namespace
}  // namespace knee::lab

namespace knee::lab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(StallDelay, HoldsArrivalsInTheLastWindowOfEachPeriodUntilItEnds) {
  // period 10 s, window 1 s, answer 1 ms: [9 s, 10 s) of every period is the stall window.
  EXPECT_EQ(stall_delay(seconds(0), seconds(10), seconds(1), milliseconds(1)), milliseconds(1));
  EXPECT_EQ(stall_delay(milliseconds(8999), seconds(10), seconds(1), milliseconds(1)),
            milliseconds(1));
  EXPECT_EQ(stall_delay(seconds(9), seconds(10), seconds(1), milliseconds(1)), seconds(1));
  EXPECT_EQ(stall_delay(milliseconds(9750), seconds(10), seconds(1), milliseconds(1)),
            milliseconds(250));
  EXPECT_EQ(stall_delay(milliseconds(19900), seconds(10), seconds(1), milliseconds(1)),
            milliseconds(100));
  EXPECT_EQ(stall_delay(seconds(20), seconds(10), seconds(1), milliseconds(1)), milliseconds(1));
}

TEST(Routes, StallIsAnEndpoint) { EXPECT_EQ(route_of("/stall"), Route::kStall); }

}  // namespace
}  // namespace knee::lab
