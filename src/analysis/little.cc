#include "analysis/little.h"

#include <cmath>
#include <limits>

namespace knee::analysis {
namespace {

constexpr double kNsPerSecond = 1e9;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

double little_n(double x_rps, double r_ns) { return x_rps * (r_ns / kNsPerSecond); }

double little_x(double n, double r_ns) {
  if (!(r_ns > 0)) return kNaN;
  return n / (r_ns / kNsPerSecond);
}

double little_r_ns(double n, double x_rps) {
  if (!(x_rps > 0)) return kNaN;
  return n / x_rps * kNsPerSecond;
}

LittleCheck check_little(double concurrency, double throughput_rps, double mean_latency_ns,
                         double tolerance) {
  LittleCheck check{concurrency, little_n(throughput_rps, mean_latency_ns), kNaN, false};
  if (!(concurrency > 0) || !std::isfinite(concurrency) || !std::isfinite(check.n_eff)) {
    return check;
  }
  check.ratio = check.n_eff / concurrency;
  check.holds = std::abs(check.ratio - 1.0) <= tolerance;
  return check;
}

}  // namespace knee::analysis
