#include "analysis/usl.h"

#include <fmt/format.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

namespace knee::analysis {
namespace {

using core::Result;
using core::Status;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kWeakBelowPoints = 6;
constexpr double kMinStart = 1e-6;       // floor of the starting sigma and kappa
constexpr double kPreferSimpler = 1e-9;  // SSE allowance, as a fraction of SST
constexpr size_t kMaxIterations = 1000;
constexpr double kXTol = 1e-12;
constexpr double kGTol = 1e-12;

// Which of sigma and kappa a model fits; the other is held at 0.
struct Shape {
  bool fit_sigma;
  bool fit_kappa;
  size_t free_parameters() const { return 1 + (fit_sigma ? 1u : 0u) + (fit_kappa ? 1u : 0u); }
};

struct Problem {
  std::span<const ThroughputPoint> points;
  Shape shape;
};

// The solver's vector is (lambda, s, k) with the held parameters left out; sigma = s^2,
// kappa = k^2.
struct Params {
  double lambda_rps;
  double s;
  double k;
};

Params unpack(const gsl_vector* x, Shape shape) {
  Params p{gsl_vector_get(x, 0), 0, 0};
  size_t i = 1;
  if (shape.fit_sigma) p.s = gsl_vector_get(x, i++);
  if (shape.fit_kappa) p.k = gsl_vector_get(x, i++);
  return p;
}

// The USL's denominator 1 + sigma (N-1) + kappa N (N-1), with sigma = s^2 and kappa = k^2 (the
// squares keep both coefficients >= 0 while the solver moves s and k freely).
double denominator(const Params& p, double n) {
  return 1 + p.s * p.s * (n - 1) + p.k * p.k * n * (n - 1);
}

int residuals(const gsl_vector* x, void* data, gsl_vector* f) {
  const Problem& pr = *static_cast<const Problem*>(data);
  const Params p = unpack(x, pr.shape);
  for (size_t i = 0; i < pr.points.size(); ++i) {
    const double n = pr.points[i].concurrency;
    const double d = denominator(p, n);
    if (!(d > 0)) return GSL_EDOM;
    const double r = p.lambda_rps * n / d - pr.points[i].throughput_rps;
    if (!std::isfinite(r)) return GSL_EDOM;
    gsl_vector_set(f, i, r);
  }
  return GSL_SUCCESS;
}

int jacobian(const gsl_vector* x, void* data, gsl_matrix* j) {
  const Problem& pr = *static_cast<const Problem*>(data);
  const Params p = unpack(x, pr.shape);
  for (size_t i = 0; i < pr.points.size(); ++i) {
    const double n = pr.points[i].concurrency;
    const double d = denominator(p, n);
    if (!(d > 0)) return GSL_EDOM;
    const double x_over_d = p.lambda_rps * n / (d * d);  // -dX/dD
    size_t c = 0;
    gsl_matrix_set(j, i, c++, n / d);
    if (pr.shape.fit_sigma) gsl_matrix_set(j, i, c++, -x_over_d * (n - 1) * 2 * p.s);
    if (pr.shape.fit_kappa) gsl_matrix_set(j, i, c++, -x_over_d * n * (n - 1) * 2 * p.k);
  }
  return GSL_SUCCESS;
}

double sse(std::span<const ThroughputPoint> points, double sigma, double kappa, double lambda) {
  double sum = 0;
  for (const ThroughputPoint& pt : points) {
    const double r = usl_throughput_rps(pt.concurrency, sigma, kappa, lambda) - pt.throughput_rps;
    sum += r * r;
  }
  return sum;
}

struct Candidate {
  Shape shape;
  double sigma = kNaN;
  double kappa = kNaN;
  double lambda_rps = kNaN;
  double sse = kNaN;
  // Standard errors of the free parameters (NaN for a held one, or without a degree of
  // freedom): sqrt of the diagonal of s^2 (J^T J)^-1, s^2 = SSE / (n - p), with sigma = s^2 and
  // kappa = k^2 carried through by the delta method (se(sigma) = 2 |s| se(s)).
  double sigma_se = kNaN;
  double kappa_se = kNaN;
  double lambda_se = kNaN;
  std::string failure;  // empty when the fit gave finite parameters
};

struct GslWorkspaceFree {
  void operator()(gsl_multifit_nlinear_workspace* w) const { gsl_multifit_nlinear_free(w); }
};
struct GslVectorFree {
  void operator()(gsl_vector* v) const { gsl_vector_free(v); }
};
struct GslMatrixFree {
  void operator()(gsl_matrix* m) const { gsl_matrix_free(m); }
};

Candidate fit_shape(std::span<const ThroughputPoint> points, Shape shape, const Params& start) {
  Candidate c;
  c.shape = shape;
  Problem problem{points, shape};
  const size_t p = shape.free_parameters();
  gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
  params.trs = gsl_multifit_nlinear_trs_lm;
  params.scale = gsl_multifit_nlinear_scale_more;
  std::unique_ptr<gsl_multifit_nlinear_workspace, GslWorkspaceFree> w(
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, points.size(), p));
  std::unique_ptr<gsl_vector, GslVectorFree> x0(gsl_vector_alloc(p));
  if (!w || !x0) {
    c.failure = "GSL could not allocate the solver";
    return c;
  }
  size_t i = 0;
  gsl_vector_set(x0.get(), i++, start.lambda_rps);
  if (shape.fit_sigma) gsl_vector_set(x0.get(), i++, start.s);
  if (shape.fit_kappa) gsl_vector_set(x0.get(), i++, start.k);

  gsl_multifit_nlinear_fdf fdf{};
  fdf.f = residuals;
  fdf.df = jacobian;
  fdf.fvv = nullptr;
  fdf.n = points.size();
  fdf.p = p;
  fdf.params = &problem;
  int status = gsl_multifit_nlinear_init(x0.get(), &fdf, w.get());
  int info = 0;
  if (status == GSL_SUCCESS) {
    status = gsl_multifit_nlinear_driver(kMaxIterations, kXTol, kGTol, 0.0, nullptr, nullptr, &info,
                                         w.get());
  }
  // GSL_ENOPROG and GSL_EMAXITER still leave the best point reached; the SSE comparison between
  // the models decides whether it is good enough. Only a failed evaluation makes it unusable.
  if (status != GSL_SUCCESS && status != GSL_ENOPROG && status != GSL_EMAXITER) {
    c.failure = gsl_strerror(status);
    return c;
  }
  const Params fit = unpack(gsl_multifit_nlinear_position(w.get()), shape);
  c.sigma = fit.s * fit.s;
  c.kappa = fit.k * fit.k;
  c.lambda_rps = fit.lambda_rps;
  c.sse = sse(points, c.sigma, c.kappa, c.lambda_rps);
  if (!std::isfinite(c.sse) || !std::isfinite(c.lambda_rps) || !(c.lambda_rps > 0)) {
    c.failure = "the solver left the model undefined";
    return c;
  }
  if (points.size() > p) {
    std::unique_ptr<gsl_matrix, GslMatrixFree> covar(gsl_matrix_alloc(p, p));
    if (covar && gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w.get()), 0.0, covar.get()) ==
                     GSL_SUCCESS) {
      const double s2 = c.sse / static_cast<double>(points.size() - p);
      auto se = [&](size_t k) { return std::sqrt(s2 * gsl_matrix_get(covar.get(), k, k)); };
      size_t k = 0;
      c.lambda_se = se(k++);
      if (shape.fit_sigma) c.sigma_se = 2 * std::abs(fit.s) * se(k++);
      if (shape.fit_kappa) c.kappa_se = 2 * std::abs(fit.k) * se(k++);
    }
  }
  return c;
}

// Gunther's linearisation: with lambda fixed, N lambda / X - 1 = sigma (N-1) + kappa N (N-1).
Params starting_values(std::span<const ThroughputPoint> sorted) {
  const double lambda = sorted.front().throughput_rps / sorted.front().concurrency;
  double aa = 0, ab = 0, bb = 0, ay = 0, by = 0;
  for (const ThroughputPoint& pt : sorted) {
    const double n = pt.concurrency;
    const double y = n * lambda / pt.throughput_rps - 1;
    const double a = n - 1;
    const double b = n * (n - 1);
    aa += a * a;
    ab += a * b;
    bb += b * b;
    ay += a * y;
    by += b * y;
  }
  const double det = aa * bb - ab * ab;
  double sigma = 0.01, kappa = 1e-4;
  if (std::abs(det) > 1e-12 * aa * bb && det != 0) {
    sigma = (ay * bb - by * ab) / det;
    kappa = (aa * by - ab * ay) / det;
  }
  if (!std::isfinite(sigma)) sigma = 0.01;
  if (!std::isfinite(kappa)) kappa = 1e-4;
  return {lambda, std::sqrt(std::max(sigma, kMinStart)), std::sqrt(std::max(kappa, kMinStart))};
}

const char* held_words(Shape s) {
  if (s.fit_sigma && s.fit_kappa) return "none";
  if (s.fit_kappa) return "sigma";
  if (s.fit_sigma) return "kappa";
  return "sigma and kappa";
}

void turn_off_gsl_abort() {
  static const bool kOff = [] {
    gsl_set_error_handler_off();
    return true;
  }();
  (void)kOff;
}

}  // namespace

double usl_throughput_rps(double concurrency, double sigma, double kappa, double lambda_rps) {
  const double n = concurrency;
  return lambda_rps * n / (1 + sigma * (n - 1) + kappa * n * (n - 1));
}

Result<UslFit> fit_usl(std::span<const ThroughputPoint> points) {
  if (points.size() < 3) {
    return Status::invalid_argument(
        "USL fit: needs at least 3 points (concurrency, throughput), got " +
        std::to_string(points.size()));
  }
  std::set<double> distinct;
  for (const ThroughputPoint& pt : points) {
    if (!std::isfinite(pt.concurrency) || !(pt.concurrency > 0) ||
        !std::isfinite(pt.throughput_rps) || !(pt.throughput_rps > 0)) {
      return Status::invalid_argument(
          "USL fit: concurrency and throughput must be finite numbers > 0, got (" +
          std::to_string(pt.concurrency) + ", " + std::to_string(pt.throughput_rps) + ")");
    }
    distinct.insert(pt.concurrency);
  }
  if (distinct.size() < 3) {
    return Status::invalid_argument(
        "USL fit: needs at least 3 distinct concurrency levels to fit sigma, kappa and lambda, "
        "got " +
        std::to_string(distinct.size()));
  }
  turn_off_gsl_abort();

  std::vector<ThroughputPoint> sorted(points.begin(), points.end());
  std::sort(sorted.begin(), sorted.end(), [](const ThroughputPoint& a, const ThroughputPoint& b) {
    return a.concurrency < b.concurrency;
  });
  const Params start = starting_values(sorted);

  // Simplest first: both held at 0, one held, all free.
  constexpr std::array<Shape, 4> kShapes{Shape{false, false}, Shape{false, true},
                                         Shape{true, false}, Shape{true, true}};
  std::vector<Candidate> candidates;
  std::string failures;
  double best_sse = std::numeric_limits<double>::infinity();
  for (Shape shape : kShapes) {
    Candidate c = fit_shape(sorted, shape, start);
    if (!c.failure.empty()) {
      failures += std::string(failures.empty() ? "" : "; ") + "held " + held_words(shape) + ": " +
                  c.failure;
      continue;
    }
    best_sse = std::min(best_sse, c.sse);
    candidates.push_back(c);
  }
  if (candidates.empty()) {
    return Status::internal("USL fit: the solver failed on every model (" + failures + ")");
  }

  double mean = 0;
  for (const ThroughputPoint& pt : sorted) mean += pt.throughput_rps;
  mean /= static_cast<double>(sorted.size());
  double sst = 0;
  for (const ThroughputPoint& pt : sorted)
    sst += (pt.throughput_rps - mean) * (pt.throughput_rps - mean);

  const Candidate* chosen = nullptr;
  for (const Candidate& c : candidates) {
    if (c.sse > best_sse + kPreferSimpler * sst) continue;
    if (chosen == nullptr || c.shape.free_parameters() < chosen->shape.free_parameters() ||
        (c.shape.free_parameters() == chosen->shape.free_parameters() && c.sse < chosen->sse)) {
      chosen = &c;
    }
  }

  UslFit fit;
  fit.sigma = chosen->sigma;
  fit.kappa = chosen->kappa;
  fit.lambda_rps = chosen->lambda_rps;
  auto known = [](double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; };
  fit.sigma_se = known(chosen->sigma_se);
  fit.kappa_se = known(chosen->kappa_se);
  fit.lambda_se = known(chosen->lambda_se);
  fit.r_squared = sst > 0 ? 1 - chosen->sse / sst : kNaN;
  fit.points = sorted.size();
  fit.held_at_zero = held_words(chosen->shape);
  const double max_n = sorted.back().concurrency;
  if (fit.sigma >= 1) {
    fit.no_growth = true;
  } else if (fit.kappa > 0) {
    const double n_star = std::sqrt((1 - fit.sigma) / fit.kappa);
    fit.peak_concurrency = n_star;
    fit.peak_throughput_rps = usl_throughput_rps(n_star, fit.sigma, fit.kappa, fit.lambda_rps);
    fit.peak_extrapolated = n_star > max_n;
    fit.peak_before_data = n_star < sorted.front().concurrency;
  }
  fit.no_retrograde = fit.kappa == 0;
  fit.weak_fit = fit.points < kWeakBelowPoints;
  if (fit.weak_fit) {
    // R^2 can be near 1 and still say little: three parameters from few points trade sigma
    // against kappa at almost no cost to the fit.
    fit.flags.push_back(fmt::format(
        "fit is weak: {} points, fewer than {}; sigma and kappa trade off against each other "
        "whatever R^2 says",
        fit.points, kWeakBelowPoints));
  }
  if (fit.peak_extrapolated) fit.flags.push_back("peak extrapolated");
  if (fit.peak_before_data) {
    fit.flags.push_back(fmt::format(
        "peak before the first level: throughput falls from N = {:g}, the smallest measured; N* "
        "and X(N*) lie outside the data",
        sorted.front().concurrency));
  }
  if (fit.no_retrograde) fit.flags.push_back("no retrograde region");
  if (fit.no_growth) fit.flags.push_back("no growth");
  return fit;
}

}  // namespace knee::analysis
