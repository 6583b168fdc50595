// Which shipment a request's {shipment} names (http/request.h): ids 1..count of the lab's data set
// (`knee lab data --records N`), drawn per request, uniformly or by a Zipf law of exponent s, so
// a few shipments take most of the reads as a cache in front of a store sees in production.
//
// Zipf: P(id = k) = k^-s / H(N, s), k = 1..N, s > 0 (id 1 the most asked for), drawn in O(1)
// per id without a table by rejection-inversion (W. Hormann, G. Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996): the id is
// the rounded inverse of the integral of x^-s at a uniform point, kept when it falls under the
// hat, which it does for all but a few per cent of draws.
//
// Each worker thread draws from its own std::mt19937_64 seeded from the run's seed and the
// thread's index, so a run is repeatable. Thread-safety: one owner.
#pragma once

#include <cstdint>
#include <optional>
#include <random>

#include "core/status.h"

namespace knee::engine {

struct ShipmentDraw {
  int64_t count = 100'000;     // ids 1..count, 1..http::kMaxShipmentId (lab data's default)
  std::optional<double> zipf;  // the exponent s, in (0, 10]; empty: uniform
  // Errors (kInvalidArgument, field() "shipments" or "zipf"): a count out of range, an exponent
  // that is not in (0, 10].
  core::Status validate() const;
};

class ShipmentPicker {
 public:
  // Precondition: draw.validate() is ok (asserted).
  ShipmentPicker(const ShipmentDraw& draw, uint64_t seed);
  // The next id, 1..count.
  uint64_t next();

 private:
  double h_integral(double x) const;          // integral of x^-s from 1 (shifted), the hat's CDF
  double h_integral_inverse(double y) const;  // its inverse
  double h(double x) const { return std::exp(-s_ * std::log(x)); }

  int64_t count_;
  bool zipf_;
  double s_ = 0;
  double h_x1_ = 0;  // h_integral(1.5) - 1
  double h_n_ = 0;   // h_integral(count + 0.5)
  double squeeze_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace knee::engine
