// Thresholds: k6-style pass/fail checks on one measured run ("p99<50ms", "errors<0.1%").
//
// Grammar (spaces allowed around each part, metric names case-insensitive):
//   THRESHOLD := METRIC OP VALUE
//   OP        := "<" | "<=" | ">" | ">="
//   METRIC    := p50 | p90 | p99 | p999 (also p99.9) | mean | max
//                  latency of successful responses; VALUE a duration with a unit ns, us, ms, s
//                  ("50ms", "1.5s"); a bare number is refused rather than guessed
//              | throughput | rps
//                  successful responses per second; VALUE a plain number of req/s ("1000")
//              | errors
//                  failures that consumed a sent request (core::RunStats::total_errors());
//                  VALUE a percentage of the requests sent ("0.1%") or, without %, a count ("5")
// The check passes when `measured OP VALUE` holds: p99<50ms with a p99 of exactly 50 ms fails,
// p99<=50ms passes. errors as a percentage of 0 requests sent measures 0%.
//
// Units: latencies in ns, throughput in req/s, errors in percent (0..100) or a count.
// Pure functions: no I/O, no clock, no shared state; safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace knee::analysis {

enum class ThresholdMetric { kP50, kP90, kP99, kP999, kMean, kMax, kThroughput, kErrors };
enum class ThresholdOp { kLess, kLessEqual, kGreater, kGreaterEqual };

struct Threshold {
  ThresholdMetric metric = ThresholdMetric::kP99;
  ThresholdOp op = ThresholdOp::kLess;
  // The limit: ns for a latency, req/s for throughput, percent (0..100) or a count for errors.
  double value = 0;
  bool percent = false;  // errors only: value is a percentage of the requests sent
  std::string text;      // normalised for messages: "p99 < 50ms" (the value as typed)
};

// Parses one threshold (grammar above). Errors (kInvalidArgument): the message quotes the text,
// says what is wrong (empty, unknown metric, missing operator, missing or unknown unit, a
// negative or non-numeric value, trailing text) and gives the accepted form.
core::Result<Threshold> parse_threshold(std::string_view text);

// What a threshold is checked against: one run's figures.
struct ThresholdInput {
  double p50_ns = 0;
  double p90_ns = 0;
  double p99_ns = 0;
  double p999_ns = 0;
  double mean_ns = 0;
  double max_ns = 0;
  double throughput_rps = 0;
  uint64_t errors = 0;  // failures that consumed a sent request
  uint64_t sent = 0;    // requests sent in the measured phase
  // Successful responses behind the latency figures; with none there is no latency to check,
  // and every latency threshold fails (a dead server must not pass 'p99<50ms').
  uint64_t latency_count = 0;
};

struct ThresholdResult {
  bool passed = false;
  double measured = 0;  // in the threshold's unit: ns, req/s, percent or count
  // A plain line: "p99 < 50ms: FAILED (measured 61.20 ms)", "errors < 0.1%: passed (measured
  // 0.05%, 1 of 2000)".
  std::string line;
};

ThresholdResult evaluate(const Threshold& threshold, const ThresholdInput& input);

}  // namespace knee::analysis
