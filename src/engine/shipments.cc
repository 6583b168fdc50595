#include "engine/shipments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>

#include "http/request.h"

namespace knee::engine {
namespace {

// log1p(x) / x and expm1(x) / x, both 1 at x = 0, computed without cancellation near it.
double log1p_over(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x / 2; }
double expm1_over(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x / 2; }

}  // namespace

core::Status ShipmentDraw::validate() const {
  if (count < 1 || static_cast<uint64_t>(count) > http::kMaxShipmentId) {
    return core::Status::invalid_field(
        "shipments", fmt::format("{} shipments: expected 1..{} (the data set's --records)", count,
                                 http::kMaxShipmentId));
  }
  if (zipf && !(*zipf > 0 && *zipf <= 10)) {
    return core::Status::invalid_field(
        "zipf", fmt::format("Zipf exponent {}: expected a number in (0, 10], e.g. 1.0 (1.0: the "
                            "id ranked k is asked for 1/k as often as the first)",
                            *zipf));
  }
  return core::Status::success();
}

ShipmentPicker::ShipmentPicker(const ShipmentDraw& draw, uint64_t seed)
    : count_(draw.count), zipf_(draw.zipf.has_value()), rng_(seed) {
  assert(draw.validate() && "ShipmentDraw::validate() first");
  if (!zipf_) return;
  s_ = *draw.zipf;
  h_x1_ = h_integral(1.5) - 1.0;
  h_n_ = h_integral(static_cast<double>(count_) + 0.5);
  squeeze_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

// H(x) = (x^(1-s) - 1) / (1 - s), log(x) at s = 1.
double ShipmentPicker::h_integral(double x) const {
  const double log_x = std::log(x);
  return expm1_over((1.0 - s_) * log_x) * log_x;
}

double ShipmentPicker::h_integral_inverse(double y) const {
  double t = y * (1.0 - s_);
  t = std::max(t, -1.0);  // rounding at the lower end
  return std::exp(log1p_over(t) * y);
}

uint64_t ShipmentPicker::next() {
  if (!zipf_) {
    return std::uniform_int_distribution<uint64_t>(1, static_cast<uint64_t>(count_))(rng_);
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (;;) {
    const double u = h_n_ + unit(rng_) * (h_x1_ - h_n_);
    const double x = h_integral_inverse(u);
    double k = std::floor(x + 0.5);
    k = std::clamp(k, 1.0, static_cast<double>(count_));
    // Accept under the squeeze (no evaluation), or under the hat.
    if (k - x <= squeeze_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<uint64_t>(k);
  }
}

}  // namespace knee::engine
