#include "analysis/knee.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace knee::analysis {
namespace {

constexpr double kNsPerMs = 1e6;

// g_i for the pair (a, b), or NaN when the pair breaks the preconditions.
double gain_per_doubling(const LevelPoint& a, const LevelPoint& b) {
  const bool valid = std::isfinite(a.concurrency) && std::isfinite(b.concurrency) &&
                     std::isfinite(a.throughput_rps) && std::isfinite(b.throughput_rps) &&
                     a.concurrency > 0 && b.concurrency > a.concurrency && a.throughput_rps > 0 &&
                     b.throughput_rps > 0;
  if (!valid) return std::numeric_limits<double>::quiet_NaN();
  const double doublings = std::log2(b.concurrency / a.concurrency);
  return std::pow(b.throughput_rps / a.throughput_rps, 1.0 / doublings) - 1.0;
}

// p99[i+1] / p99[i], or NaN when it is undefined.
double p99_growth(const LevelPoint& a, const LevelPoint& b) {
  if (!std::isfinite(a.p99_ns) || !std::isfinite(b.p99_ns) || !(a.p99_ns > 0)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return b.p99_ns / a.p99_ns;
}

}  // namespace

KneeVerdict find_knee(std::span<const LevelPoint> points, double min_gain, double min_p99_growth,
                      std::string_view level_name) {
  KneeVerdict verdict;
  verdict.rule = fmt::format(
      "knee = the smallest {} N[i] where going to the next level gains less than {:g}% "
      "throughput per doubling, g[i] = (X[i+1]/X[i])^(1/log2(N[i+1]/N[i])) - 1 < {:g}, while p99 "
      "grows at least {:g}x (p99[i+1]/p99[i] >= {:g})",
      level_name, min_gain * 100.0, min_gain, min_p99_growth, min_p99_growth);
  verdict.summary = "no knee within the sweep";
  if (points.size() < 2) return verdict;

  verdict.gain_per_doubling.reserve(points.size() - 1);
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const LevelPoint& a = points[i];
    const LevelPoint& b = points[i + 1];
    const double gain = gain_per_doubling(a, b);
    verdict.gain_per_doubling.push_back(gain);
    if (verdict.index) continue;  // keep filling the gains for the report
    const double growth = p99_growth(a, b);
    // NaN compares false, so skipped pairs never qualify.
    if (gain < min_gain && growth >= min_p99_growth) {
      verdict.index = i;
      verdict.summary = fmt::format(
          "knee at {} {:g}: going to {:g} gains {:.1f}% throughput per doubling "
          "({:.0f} -> {:.0f} req/s) while p99 grows {:.2f}x ({:.2f} -> {:.2f} ms)",
          level_name, a.concurrency, b.concurrency, gain * 100.0, a.throughput_rps,
          b.throughput_rps, growth, a.p99_ns / kNsPerMs, b.p99_ns / kNsPerMs);
    }
  }
  return verdict;
}

}  // namespace knee::analysis
