#include "analysis/kneedle.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace knee::analysis {
namespace {

using core::Result;
using core::Status;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

const char* x_scale_name(XScale scale) { return scale == XScale::kLog2 ? "log2" : "linear"; }

Result<Kneedle> find_kneedle(std::span<const ThroughputPoint> points, XScale scale,
                             double sensitivity) {
  const size_t n = points.size();
  if (n < 3) {
    return Status::invalid_argument(
        fmt::format("Kneedle: needs at least 3 points (concurrency, throughput), got {}", n));
  }
  if (!(sensitivity > 0) || !std::isfinite(sensitivity)) {
    return Status::invalid_argument(
        fmt::format("Kneedle: sensitivity must be a number > 0, got {}", sensitivity));
  }
  std::vector<double> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    const ThroughputPoint& p = points[i];
    if (!std::isfinite(p.concurrency) || !std::isfinite(p.throughput_rps)) {
      return Status::invalid_argument(fmt::format("Kneedle: point {} is not finite ({}, {})", i,
                                                  p.concurrency, p.throughput_rps));
    }
    if (i > 0 && !(p.concurrency > points[i - 1].concurrency)) {
      return Status::invalid_argument(
          fmt::format("Kneedle: concurrency must be strictly increasing, got {} after {}",
                      p.concurrency, points[i - 1].concurrency));
    }
    if (scale == XScale::kLog2 && !(p.concurrency > 0)) {
      return Status::invalid_argument(
          fmt::format("Kneedle: a log2 x-scale needs concurrency > 0, got {}", p.concurrency));
    }
    x[i] = scale == XScale::kLog2 ? std::log2(p.concurrency) : p.concurrency;
    y[i] = p.throughput_rps;
  }

  Kneedle k;
  k.x_scale = scale;
  k.knee_concurrency = kNaN;
  k.difference.assign(n, 0.0);
  const auto [y_min, y_max] = std::minmax_element(y.begin(), y.end());
  const double x_span = x.back() - x.front();
  const double y_span = *y_max - *y_min;
  const std::string method = fmt::format("Kneedle, {} x-scale", x_scale_name(scale));
  if (!(y_span > 0)) {
    k.threshold = kNaN;
    k.summary = fmt::format("no knee: throughput is flat ({})", method);
    return k;
  }
  // Steps 2 and 3: unit square, difference curve.
  for (size_t i = 0; i < n; ++i) {
    k.difference[i] = (y[i] - *y_min) / y_span - (x[i] - x.front()) / x_span;
  }
  // Step 4: the maximum (the first one on ties).
  size_t at = 0;
  for (size_t i = 1; i < n; ++i) {
    if (k.difference[i] > k.difference[at]) at = i;
  }
  // Step 5: mean spacing of the normalised x is 1 / (n - 1).
  k.threshold = k.difference[at] - sensitivity / static_cast<double>(n - 1);
  bool confirmed = false;
  for (size_t i = at + 1; i < n; ++i) confirmed = confirmed || k.difference[i] < k.threshold;
  if (!(k.difference[at] > 0) || at == 0 || at == n - 1 || !confirmed) {
    k.summary =
        fmt::format("no knee: the curve does not bend enough above its chord ({}, sensitivity {})",
                    method, sensitivity);
    return k;
  }
  k.index = at;
  k.knee_concurrency = points[at].concurrency;
  k.summary = fmt::format("{} concurrency {} ({})", kKneedleLabel, points[at].concurrency, method);
  return k;
}

}  // namespace knee::analysis
