// The Universal Scalability Law (USL): how throughput X grows with concurrency N when requests
// contend for a shared resource (sigma) and pay to keep shared state coherent (kappa).
//
//   X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1))
//
// N. J. Gunther, "Guerrilla Capacity Planning" (Springer, 2007); B. Schwartz, "Practical
// Scalability Analysis with the Universal Scalability Law" (VividCortex, 2015). lambda is the
// throughput of one request in flight (X(1), req/s); sigma the fraction of work serialised
// (sigma = 0: linear scaling; kappa = 0 this is Amdahl's law, ceiling lambda / sigma); kappa the
// crosstalk per pair of requests, which makes throughput peak and then fall (the retrograde
// region). With kappa > 0 the peak is at N* = sqrt((1 - sigma) / kappa) (dX/dN = 0; Gunther 2007).
//
// The fit (fit_usl) is nonlinear least squares on X with GSL's multifit_nlinear trust-region
// solver, Levenberg-Marquardt step (gsl_multifit_nlinear_trs_lm, More scaling). All three
// parameters are free with sigma, kappa >= 0, enforced by fitting s and k with sigma = s^2 and
// kappa = k^2 (every step stays feasible, the denominator stays >= 1 for N >= 1). Because that
// reparametrisation only creeps towards a bound (its gradient vanishes at s = 0), the bound
// faces are fitted as well, with sigma = 0, kappa = 0 or both held at exactly 0; the model with
// the fewest free parameters whose residual sum of squares is within 1e-9 of the total sum of
// squares of the best one wins. So a curve whose best kappa is 0 reports kappa = 0 exactly, not a
// round-off 1e-18 that would place a peak at N = 1e9.
//
// Starting values: lambda from the first point, X(N1) / N1 (X(1) when the sweep starts at 1);
// sigma and kappa from Gunther's linearisation N lambda / X - 1 = sigma (N - 1) + kappa N (N - 1),
// a linear least squares on two columns, clamped to >= 1e-6.
//
// Pure functions: no I/O, no clock. The first fit_usl call in a process turns GSL's default
// error handler (which aborts) off, process-wide, so GSL failures come back as return codes,
// which become a Status; knee uses GSL nowhere else. Otherwise thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace knee::analysis {

// One measured level: N requests in flight, X completed per second.
struct ThroughputPoint {
  double concurrency;     // N, > 0
  double throughput_rps;  // X, req/s, > 0
};

struct UslFit {
  double sigma = 0;  // contention, >= 0 (dimensionless)
  double kappa = 0;  // coherency, >= 0 (dimensionless)
  // The fitted slope at the origin, req/s: X(N) ~ lambda N for small N. Not the measured X(1):
  // the fit weighs every level, so lambda differs from X(1) by X(1)'s residual.
  double lambda_rps = 0;
  // Standard errors, from the Jacobian at the solution: sqrt(diag(s^2 (J^T J)^-1)),
  // s^2 = SSE / (n - p) (the usual nonlinear least-squares estimate; GSL's
  // gsl_multifit_nlinear_covar), sigma's and kappa's by the delta method through sigma = s^2,
  // kappa = k^2. Empty for a parameter held at 0, or with as many parameters as points.
  std::optional<double> sigma_se, kappa_se, lambda_se;
  // 1 - SSE / SST over the points (SST around the mean X); NaN when every X is equal.
  double r_squared = 0;
  // N* = sqrt((1 - sigma) / kappa); empty when kappa = 0 (throughput never turns down) or
  // sigma >= 1 (it never grows).
  std::optional<double> peak_concurrency;
  std::optional<double> peak_throughput_rps;  // X(N*), req/s
  size_t points = 0;
  // Which parameters the chosen model held at 0 ("none", "sigma", "kappa", "sigma and kappa").
  std::string held_at_zero;
  // The flags, each also in `flags` in these words:
  bool weak_fit = false;  // "fit is weak: N points, fewer than 6; ...": sigma and kappa loose
  bool peak_extrapolated = false;  // "peak extrapolated": N* beyond the largest measured N
  // "peak before the first level: ...": N* below the smallest measured N (throughput falls
  // from the start), so N* and X(N*) lie outside the data: an extrapolation, not a measurement.
  bool peak_before_data = false;
  bool no_retrograde = false;  // "no retrograde region": kappa = 0
  bool no_growth = false;      // "no growth": sigma >= 1, X falls from the first level
  std::vector<std::string> flags;
};

// X(N) of the USL, req/s. Valid for any N with a positive denominator.
double usl_throughput_rps(double concurrency, double sigma, double kappa, double lambda_rps);

// Fits the USL to `points` (any order). Errors (kInvalidArgument): fewer than 3 points, a
// concurrency or throughput that is not a finite number > 0, fewer than 3 distinct
// concurrencies (three parameters need three levels). kInternal: the solver failed on every model
// (the message carries GSL's reason).
core::Result<UslFit> fit_usl(std::span<const ThroughputPoint> points);

}  // namespace knee::analysis
