#include "analysis/threshold.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include "core/units.h"

namespace knee::analysis {
namespace {

using core::Status;

constexpr const char* kForm =
    "give METRIC OP VALUE like 'p99<50ms', 'errors<0.1%' or 'rps>=1000' (metrics p50 p90 p99 "
    "p999 mean max with a duration in ns/us/ms/s; throughput or rps in req/s; errors as a % of "
    "requests sent or a count; operators < <= > >=)";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Status bad(std::string_view text, std::string_view what) {
  return Status::invalid_argument(fmt::format("threshold '{}': {}; {}", text, what, kForm));
}

bool is_latency(ThresholdMetric m) {
  return m != ThresholdMetric::kThroughput && m != ThresholdMetric::kErrors;
}

// A whole non-negative finite decimal number, nothing after it.
bool parse_number(std::string_view s, double& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(out) && out >= 0;
}

const char* op_name(ThresholdOp op) {
  switch (op) {
    case ThresholdOp::kLess:
      return "<";
    case ThresholdOp::kLessEqual:
      return "<=";
    case ThresholdOp::kGreater:
      return ">";
    case ThresholdOp::kGreaterEqual:
      return ">=";
  }
  return "?";
}

const char* metric_name(ThresholdMetric m) {
  switch (m) {
    case ThresholdMetric::kP50:
      return "p50";
    case ThresholdMetric::kP90:
      return "p90";
    case ThresholdMetric::kP99:
      return "p99";
    case ThresholdMetric::kP999:
      return "p999";
    case ThresholdMetric::kMean:
      return "mean";
    case ThresholdMetric::kMax:
      return "max";
    case ThresholdMetric::kThroughput:
      return "throughput";
    case ThresholdMetric::kErrors:
      return "errors";
  }
  return "?";
}

}  // namespace

core::Result<Threshold> parse_threshold(std::string_view raw) {
  const std::string_view text = trim(raw);
  if (text.empty()) return bad(text, "empty");
  size_t i = 0;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  std::string metric_text;
  for (char c : text.substr(0, i)) {
    metric_text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  static constexpr std::pair<const char*, ThresholdMetric> kMetrics[] = {
      {"p50", ThresholdMetric::kP50},        {"p90", ThresholdMetric::kP90},
      {"p99", ThresholdMetric::kP99},        {"p999", ThresholdMetric::kP999},
      {"p99.9", ThresholdMetric::kP999},     {"mean", ThresholdMetric::kMean},
      {"max", ThresholdMetric::kMax},        {"throughput", ThresholdMetric::kThroughput},
      {"rps", ThresholdMetric::kThroughput}, {"errors", ThresholdMetric::kErrors},
  };
  Threshold t;
  bool known = false;
  for (const auto& [name, metric] : kMetrics) {
    if (metric_text == name) {
      t.metric = metric;
      known = true;
    }
  }
  if (!known) {
    return bad(text, metric_text.empty() ? "no metric before the operator"
                                         : fmt::format("unknown metric '{}'", metric_text));
  }
  std::string_view rest = trim(text.substr(i));
  if (rest.starts_with("<=") || rest.starts_with(">=")) {
    t.op = rest[0] == '<' ? ThresholdOp::kLessEqual : ThresholdOp::kGreaterEqual;
    rest.remove_prefix(2);
  } else if (rest.starts_with("<") || rest.starts_with(">")) {
    t.op = rest[0] == '<' ? ThresholdOp::kLess : ThresholdOp::kGreater;
    rest.remove_prefix(1);
  } else {
    return bad(text, "no operator after the metric");
  }
  const std::string_view value = trim(rest);
  if (value.empty()) return bad(text, "no value after the operator");
  if (is_latency(t.metric)) {
    double bare = 0;
    if (parse_number(value, bare)) {
      return bad(text, fmt::format("'{}' has no unit; a latency needs ns, us, ms or s", value));
    }
    auto d = core::parse_duration(value);
    if (!d) return bad(text, fmt::format("'{}' is not a duration like 50ms", value));
    t.value = static_cast<double>(d->count());
  } else if (t.metric == ThresholdMetric::kErrors && value.ends_with('%')) {
    t.percent = true;
    if (!parse_number(trim(value.substr(0, value.size() - 1)), t.value) || t.value > 100) {
      return bad(text, fmt::format("'{}' is not a percentage from 0% to 100%", value));
    }
  } else if (!parse_number(value, t.value)) {
    return bad(text, fmt::format("'{}' is not a non-negative number", value));
  }
  t.text = fmt::format("{} {} {}", metric_name(t.metric), op_name(t.op), value);
  return t;
}

ThresholdResult evaluate(const Threshold& t, const ThresholdInput& in) {
  ThresholdResult r;
  std::string shown;
  switch (t.metric) {
    case ThresholdMetric::kP50:
      r.measured = in.p50_ns;
      break;
    case ThresholdMetric::kP90:
      r.measured = in.p90_ns;
      break;
    case ThresholdMetric::kP99:
      r.measured = in.p99_ns;
      break;
    case ThresholdMetric::kP999:
      r.measured = in.p999_ns;
      break;
    case ThresholdMetric::kMean:
      r.measured = in.mean_ns;
      break;
    case ThresholdMetric::kMax:
      r.measured = in.max_ns;
      break;
    case ThresholdMetric::kThroughput:
      r.measured = in.throughput_rps;
      shown = fmt::format("{:.1f} req/s", r.measured);
      break;
    case ThresholdMetric::kErrors:
      if (t.percent) {
        r.measured = in.sent == 0
                         ? 0.0
                         : 100.0 * static_cast<double>(in.errors) / static_cast<double>(in.sent);
        shown = fmt::format("{:.3g}%, {} of {}", r.measured, in.errors, in.sent);
      } else {
        r.measured = static_cast<double>(in.errors);
        shown = fmt::format("{}", in.errors);
      }
      break;
  }
  if (is_latency(t.metric)) {
    if (in.latency_count == 0) {
      r.line = fmt::format("{}: FAILED (no successful response: no latency to check)", t.text);
      return r;
    }
    shown = core::format_duration_ns(r.measured);
  }
  switch (t.op) {
    case ThresholdOp::kLess:
      r.passed = r.measured < t.value;
      break;
    case ThresholdOp::kLessEqual:
      r.passed = r.measured <= t.value;
      break;
    case ThresholdOp::kGreater:
      r.passed = r.measured > t.value;
      break;
    case ThresholdOp::kGreaterEqual:
      r.passed = r.measured >= t.value;
      break;
  }
  r.line = fmt::format("{}: {} (measured {})", t.text, r.passed ? "passed" : "FAILED", shown);
  return r;
}

}  // namespace knee::analysis
