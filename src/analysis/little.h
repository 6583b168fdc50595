// Little's law: N = X * R (J. D. C. Little, "A Proof for the Queuing Formula: L = lambda W",
// Operations Research 9(3), 1961; seed 000, "The Relation").
//
// In any stable system the mean number of requests in flight N equals throughput X times the mean
// time R each spends inside. A closed-loop sweep fixes N, measures X and R, and the product
// X * R must come back as N: when it does not, the client did not keep N in flight (it was the
// bottleneck, or think time crept in), or the run was too short to be stable. Strictly the law
// holds for the mean R; the seed's table uses the median, which is close only while the
// distribution is narrow.
//
// Units: X in requests per second, R in nanoseconds, N dimensionless.
// Pure functions: no I/O, no clock, no shared state; safe to call from any thread.
#pragma once

namespace knee::analysis {

struct LittleCheck {
  double n_expected;  // the concurrency the client was asked to keep in flight
  double n_eff;       // X * mean R: the concurrency the server actually saw
  double ratio;       // n_eff / n_expected; NaN when n_expected is not > 0
  bool holds;         // |ratio - 1| <= tolerance
};

// Checks N = X * R for one level. concurrency: N asked for; throughput_rps: X measured;
// mean_latency_ns: mean R measured; tolerance: allowed relative error (0.05 = 5%).
// Invalid inputs (N not > 0, any non-finite value) give ratio NaN and holds == false.
LittleCheck check_little(double concurrency, double throughput_rps, double mean_latency_ns,
                         double tolerance = 0.05);

// N = X * R: requests in flight for x_rps requests per second each taking r_ns nanoseconds.
double little_n(double x_rps, double r_ns);
// X = N / R, in requests per second. NaN when r_ns is not > 0.
double little_x(double n, double r_ns);
// R = N / X, in nanoseconds. NaN when x_rps is not > 0.
double little_r_ns(double n, double x_rps);

}  // namespace knee::analysis
