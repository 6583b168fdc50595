#include "analysis/threshold.h"

#include <gtest/gtest.h>

#include <string>

namespace knee::analysis {
namespace {

constexpr double kMs = 1e6;  // ns per ms

Threshold parse(const std::string& text) {
  auto t = parse_threshold(text);
  EXPECT_TRUE(t.has_value()) << text << ": " << t.status().message();
  return t ? *t : Threshold{};
}

ThresholdInput sample() {
  ThresholdInput in;
  in.p50_ns = 10 * kMs;
  in.p90_ns = 20 * kMs;
  in.p99_ns = 50 * kMs;
  in.p999_ns = 80 * kMs;
  in.mean_ns = 12 * kMs;
  in.max_ns = 100 * kMs;
  in.throughput_rps = 1000;
  in.errors = 1;
  in.sent = 1000;
  in.latency_count = 999;
  return in;
}

bool passes(const std::string& text) { return evaluate(parse(text), sample()).passed; }

TEST(Threshold, ParsesEachMetric) {
  EXPECT_EQ(parse("p50<1ms").metric, ThresholdMetric::kP50);
  EXPECT_EQ(parse("p90<1ms").metric, ThresholdMetric::kP90);
  EXPECT_EQ(parse("p99<1ms").metric, ThresholdMetric::kP99);
  EXPECT_EQ(parse("p999<1ms").metric, ThresholdMetric::kP999);
  EXPECT_EQ(parse("p99.9<1ms").metric, ThresholdMetric::kP999);
  EXPECT_EQ(parse("mean<1ms").metric, ThresholdMetric::kMean);
  EXPECT_EQ(parse("max<1ms").metric, ThresholdMetric::kMax);
  EXPECT_EQ(parse("throughput>10").metric, ThresholdMetric::kThroughput);
  EXPECT_EQ(parse("rps>10").metric, ThresholdMetric::kThroughput);
  EXPECT_EQ(parse("errors<5").metric, ThresholdMetric::kErrors);
  EXPECT_EQ(parse("P99<1ms").metric, ThresholdMetric::kP99);
}

TEST(Threshold, ParsesOperatorsValuesAndSpaces) {
  const Threshold t = parse("  p99 <= 1.5s ");
  EXPECT_EQ(t.op, ThresholdOp::kLessEqual);
  EXPECT_DOUBLE_EQ(t.value, 1.5e9);
  EXPECT_EQ(t.text, "p99 <= 1.5s");
  EXPECT_EQ(parse("p99<50ms").op, ThresholdOp::kLess);
  EXPECT_EQ(parse("rps>10").op, ThresholdOp::kGreater);
  EXPECT_EQ(parse("rps >= 10").op, ThresholdOp::kGreaterEqual);
  EXPECT_DOUBLE_EQ(parse("p50<250us").value, 250e3);
  EXPECT_DOUBLE_EQ(parse("p50<900ns").value, 900);
  EXPECT_DOUBLE_EQ(parse("rps>=1234.5").value, 1234.5);
  const Threshold pct = parse("errors < 0.1%");
  EXPECT_TRUE(pct.percent);
  EXPECT_DOUBLE_EQ(pct.value, 0.1);
  const Threshold count = parse("errors<5");
  EXPECT_FALSE(count.percent);
  EXPECT_DOUBLE_EQ(count.value, 5);
}

TEST(Threshold, EachLatencyMetricReadsItsOwnFigure) {
  EXPECT_TRUE(passes("p50<11ms"));
  EXPECT_FALSE(passes("p50<9ms"));
  EXPECT_TRUE(passes("p90<21ms"));
  EXPECT_FALSE(passes("p90<19ms"));
  EXPECT_TRUE(passes("p999<81ms"));
  EXPECT_FALSE(passes("p99.9<79ms"));
  EXPECT_TRUE(passes("mean<13ms"));
  EXPECT_FALSE(passes("mean<11ms"));
  EXPECT_TRUE(passes("max<=100ms"));
  EXPECT_FALSE(passes("max<100ms"));
}

TEST(Threshold, BoundaryIsStrictForLessAndInclusiveForLessEqual) {
  EXPECT_FALSE(passes("p99<50ms"));  // exactly 50 ms
  EXPECT_TRUE(passes("p99<=50ms"));
  EXPECT_FALSE(passes("rps>1000"));  // exactly 1000 req/s
  EXPECT_TRUE(passes("rps>=1000"));
  EXPECT_TRUE(passes("throughput>999.9"));
  EXPECT_FALSE(passes("throughput<1000"));
}

TEST(Threshold, ErrorsAsPercentOfSentOrCount) {
  // 1 error of 1000 sent: 0.1%.
  EXPECT_FALSE(passes("errors<0.1%"));
  EXPECT_TRUE(passes("errors<=0.1%"));
  EXPECT_TRUE(passes("errors<0.2%"));
  EXPECT_FALSE(passes("errors<0.05%"));
  EXPECT_TRUE(passes("errors<2"));
  EXPECT_FALSE(passes("errors<1"));
  EXPECT_TRUE(passes("errors<=1"));
  EXPECT_DOUBLE_EQ(evaluate(parse("errors<1%"), sample()).measured, 0.1);
  ThresholdInput none;  // nothing sent: 0%
  EXPECT_TRUE(evaluate(parse("errors<0.1%"), none).passed);
}

// Regression (a new user's trial): a run with no successful response (a silent server, every
// answer a 404) has latency figures of 0, and 'p99<1ms' passed: a dead server passed the SLO.
TEST(Threshold, WithoutASuccessfulResponseEveryLatencyThresholdFails) {
  ThresholdInput dead;
  dead.sent = 500;
  dead.errors = 500;
  for (const char* text : {"p50<1ms", "p99<1ms", "p999<=1s", "mean<1ms", "max<1s", "p50>=1s"}) {
    const ThresholdResult r = evaluate(parse(text), dead);
    EXPECT_FALSE(r.passed) << text;
    EXPECT_NE(r.line.find("FAILED (no successful response: no latency to check)"),
              std::string::npos)
        << r.line;
  }
  EXPECT_TRUE(evaluate(parse("rps<1"), dead).passed) << "throughput has its own figure: 0";
  EXPECT_TRUE(evaluate(parse("errors<=500"), dead).passed);
  dead.latency_count = 1;
  EXPECT_TRUE(evaluate(parse("p99<1ms"), dead).passed) << "one response is a latency to check";
}

TEST(Threshold, LineNamesTheThresholdVerdictAndMeasurement) {
  ThresholdInput in = sample();
  in.p99_ns = 61.2 * kMs;
  EXPECT_EQ(evaluate(parse("p99<50ms"), in).line, "p99 < 50ms: FAILED (measured 61.20 ms)");
  EXPECT_EQ(evaluate(parse("rps >= 500"), in).line,
            "throughput >= 500: passed (measured 1000.0 req/s)");
  EXPECT_EQ(evaluate(parse("errors<0.1%"), in).line,
            "errors < 0.1%: FAILED (measured 0.1%, 1 of 1000)");
  EXPECT_EQ(evaluate(parse("errors<3"), in).line, "errors < 3: passed (measured 1)");
}

TEST(Threshold, RejectsBadInput) {
  for (const char* text :
       {"", "   ", "p98<50ms", "latency<50ms", "p99<50", "p99<", "p99 50ms", "50ms<p99", "<50ms",
        "p99<50xs", "p99<-5ms", "p99<<50ms", "p99=50ms", "rps>fast", "rps>10/s", "errors<abc%",
        "errors<-1", "errors<150%", "p99<50ms extra"}) {
    auto t = parse_threshold(text);
    EXPECT_FALSE(t.has_value()) << "'" << text << "' was accepted";
    if (!t) {
      EXPECT_EQ(t.status().code(), core::Status::Code::kInvalidArgument);
      EXPECT_NE(t.status().message().find("METRIC OP VALUE"), std::string::npos);
    }
  }
}

TEST(Threshold, ErrorNamesTheTextAndTheProblem) {
  auto unknown = parse_threshold("p98<50ms");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.status().message().find("'p98<50ms'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("unknown metric 'p98'"), std::string::npos);
  auto unitless = parse_threshold("p99<50");
  ASSERT_FALSE(unitless.has_value());
  EXPECT_NE(unitless.status().message().find("no unit"), std::string::npos);
}

}  // namespace
}  // namespace knee::analysis
