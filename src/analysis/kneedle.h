// Kneedle: the point of a concave increasing curve where it bends the most, "diminishing returns
// from" (V. Satopaa, J. Albrecht, D. Irwin, B. Raghavan, "Finding a 'Kneedle' in a Haystack:
// Detecting Knee Points in System Behavior", ICDCS Workshops 2011, section III).
//
// A secondary knee beside find_knee (knee.h): that rule needs p99 to grow; this one reads the
// shape of throughput alone, on (N, X) points. The method, offline on all points:
//   1. x-scale: x = N (linear) or x = log2 N;
//   2. normalise both axes to the unit square: xn = (x - x_min) / (x_max - x_min),
//      yn = (X - X_min) / (X_max - X_min);
//   3. difference curve d = yn - xn (concave increasing: the curve's lift above the diagonal);
//   4. the knee candidate is the maximum of d (the point whose tangent is parallel to the chord);
//   5. it is confirmed, as in the paper, when d later drops below the threshold
//      T = d_max - S * mean(xn[i+1] - xn[i]) (sensitivity S, 1 by default as the paper advises
//      offline). No confirmation, d_max <= 0 or a maximum at an end point: no knee.
// The paper smooths noisy data with a spline first; this does not (sweeps have few points, and
// repeats already take medians).
//
// The x-scale. Linear is the default, and the paper's. Sweeps double their levels (1, 2, 4, ...),
// which argues for log2 (equal spacing); but a throughput curve that scales well is straight in N
// and therefore convex in log2 N, which breaks Kneedle's concave precondition: on Amdahl's
// X = N / (1 + 0.02 (N - 1)) over 1..64 log2 finds no knee at all while linear finds 32, and on
// the seed's sweep (000, 1..64) log2 leaves d <= 0 at every level but 32. Linear keeps the curve
// concave; log2 stays available for curves that are concave in log N. The result states which.
//
// The paper's figure-2 curve y = 5 - 1/(x + 0.1) sampled at 10 points from 0 to 1 inclusive
// (step 1/9) gives the knee at x = 2/9 = 0.222 (d = 0.536); 11 points (step 0.1) give 0.2; the
// continuous curve, 0.232. So "x = 0..1 in 10 points, knee 0.222" is the step-1/9 sampling.
//
// Pure functions: no I/O, no clock, no shared state; safe to call from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/usl.h"
#include "core/status.h"

namespace knee::analysis {

enum class XScale { kLinear, kLog2 };

// "linear" or "log2".
const char* x_scale_name(XScale scale);

inline constexpr const char* kKneedleLabel = "diminishing returns from";

struct Kneedle {
  std::optional<size_t> index;       // knee point; empty: no knee
  double knee_concurrency = 0;       // N at the knee (untransformed); NaN without a knee
  XScale x_scale = XScale::kLinear;  // the scale the method ran on
  std::vector<double> difference;    // d per point, in input order
  double threshold = 0;              // T of step 5
  std::string label = kKneedleLabel;
  // "diminishing returns from concurrency 32 (Kneedle, linear x-scale)" or "no knee ...".
  std::string summary;
};

// Runs Kneedle on `points`, sorted by concurrency, strictly increasing. sensitivity: S above,
// > 0. Errors (kInvalidArgument): fewer than 3 points, a non-finite value, concurrency not
// strictly increasing, concurrency <= 0 with XScale::kLog2, sensitivity not > 0. A flat curve
// (every X equal) has no knee, not an error.
core::Result<Kneedle> find_kneedle(std::span<const ThroughputPoint> points,
                                   XScale scale = XScale::kLinear, double sensitivity = 1.0);

}  // namespace knee::analysis
