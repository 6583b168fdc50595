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
                      std::string_view level_name, double hold_margin, std::string_view unit) {
  KneeVerdict verdict;
  verdict.rule = fmt::format(
      "knee = the smallest {} N[i] where going to the next level gains less than {:g}% "
      "throughput per doubling, g[i] = (X[i+1]/X[i])^(1/log2(N[i+1]/N[i])) - 1 < {:g}, while p99 "
      "grows at least {:g}x (p99[i+1]/p99[i] >= {:g}), and that holds: no level after the next "
      "gains {:g}% or more per doubling over X[i]",
      level_name, min_gain * 100.0, min_gain, min_p99_growth, min_p99_growth, hold_margin * 100);
  verdict.summary = "no knee within the sweep";
  if (points.size() < 2) return verdict;
  std::string not_held;  // the first candidate that did not hold, in words

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
      // The next level was judged per doubling; the ones after it must not beat X[i] by
      // hold_margin per doubling either (a gently flattening curve stays under it).
      std::optional<size_t> beaten_by;
      double beaten_gain = 0;
      for (size_t j = i + 2; j < points.size(); ++j) {
        const double g = gain_per_doubling(a, points[j]);
        if (g >= hold_margin && g > beaten_gain) {
          beaten_by = j;
          beaten_gain = g;
        }
      }
      if (beaten_by) {
        if (!verdict.noisy_index) {
          const LevelPoint& c = points[*beaten_by];
          verdict.noisy_index = i + 1;
          not_held = fmt::format(
              "the rule matched at {} {:g}, but {} {:g} later reached {:.0f} {}, {:.2f}x its "
              "{:.0f} {} ({:.1f}% per doubling), so that knee did not hold: {} {:g} looks "
              "noisy (a stall or a busy host); rerun it with --repeat 3 or on a quieter host",
              level_name, a.concurrency, level_name, c.concurrency, c.throughput_rps, unit,
              c.throughput_rps / a.throughput_rps, a.throughput_rps, unit, beaten_gain * 100,
              level_name, b.concurrency);
        }
        continue;
      }
      verdict.index = i;
      verdict.summary = fmt::format(
          "knee at {} {:g}: going to {:g} gains {:.1f}% throughput per doubling "
          "({:.0f} -> {:.0f} {}) while p99 grows {:.2f}x ({:.2f} -> {:.2f} ms)",
          level_name, a.concurrency, b.concurrency, gain * 100.0, a.throughput_rps,
          b.throughput_rps, unit, growth, a.p99_ns / kNsPerMs, b.p99_ns / kNsPerMs);
      if (!not_held.empty()) verdict.summary += "; earlier, " + not_held;
    }
  }
  if (!verdict.index && !not_held.empty()) verdict.summary = "no stable knee: " + not_held;
  return verdict;
}

KneeVerdict find_rate_knee(std::span<const LevelPoint> points, double min_served,
                           double min_p99_growth) {
  KneeVerdict verdict;
  verdict.rule = fmt::format(
      "open loop: knee = the last rate before the first level that completed less than {:g}% of "
      "its offered rate (X[i] < {:g} * rate[i]) while p99 grew at least {:g}x over the rate "
      "before",
      min_served * 100, min_served, min_p99_growth);
  verdict.summary = "no knee within the sweep";
  for (size_t i = 1; i < points.size(); ++i) {
    const LevelPoint& a = points[i - 1];
    const LevelPoint& b = points[i];
    const double growth = p99_growth(a, b);
    if (!(b.concurrency > 0) || !(b.throughput_rps < min_served * b.concurrency) ||
        !(growth >= min_p99_growth)) {
      continue;
    }
    verdict.index = i - 1;
    verdict.overloaded_index = i;
    verdict.summary = fmt::format(
        "knee at rate {:g}: at rate {:g} the server completed {:.0f} req/s ({:.0f}% of the "
        "offered rate) while p99 grew {:.1f}x ({:.2f} -> {:.2f} ms)",
        a.concurrency, b.concurrency, b.throughput_rps, 100 * b.throughput_rps / b.concurrency,
        growth, a.p99_ns / kNsPerMs, b.p99_ns / kNsPerMs);
    break;
  }
  return verdict;
}

}  // namespace knee::analysis
