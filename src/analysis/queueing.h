// Queueing models for the calculator (`knee model`): what utilisation costs in latency, and how
// much headroom a planned peak leaves under a measured upper bound (seed 000, "The Cost of
// Approaching Saturation").
//
// These are models, not measurements: Poisson arrivals, exponential service times, first come
// first served, an infinite queue, steady state. They give the direction and size of the ratios,
// not a real server's latency.
//
//   M/M/1 (D. Gross, J. Shortle, J. Thompson, C. Harris, "Fundamentals of Queueing Theory", 4th
//   ed., Wiley 2008, section 2.2): rho = lambda / mu; mean response W = 1 / (mu - lambda); the
//   response time is exponential with rate mu - lambda, so its p-quantile is
//   R_p = -ln(1 - p) / (mu - lambda).
//
//   M/M/c (same book, section 2.3): offered load a = lambda / mu (Erlangs), rho = a / c.
//   Erlang B by its recursion B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)) (no factorials, stable
//   for any c); Erlang C, the probability an arrival waits, C = c B / (c - a (1 - B)).
//   Mean wait Wq = C / (c mu - lambda), W = Wq + 1 / mu, and by Little's law (little.h)
//   Lq = lambda Wq, L = lambda W.
//   The response time is not exponential: it is a service time S ~ Exp(mu) plus, with
//   probability C, a wait ~ Exp(theta), theta = c mu - lambda (else no wait). Its survival
//   function (Gross et al., section 2.3, the M/M/c response-time distribution) is
//     P(R > t) = e^{-mu t} + C (e^{-mu t} - e^{-theta t}) / (c - 1 - a)
//   with the limit C mu t e^{-mu t} for the term when c - 1 - a = 0; it is evaluated in the form
//   that never overflows (expm1 of the smaller exponent) and inverted by bisection. For c = 1 it
//   reduces to e^{-(mu - lambda) t}, the M/M/1 result.
//   The wait alone (same section): P(Wq > t) = C e^{-theta t}, so its q-quantile is 0 when
//   q <= 1 - C (those arrivals find a free server) and ln(C / (1 - q)) / theta otherwise.
//
// Units: rates in requests per second, times in nanoseconds, lengths in requests.
// Pure functions: no I/O, no clock, no shared state; safe to call from any thread.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace knee::analysis {

// The steady state of an M/M/c queue (servers == 1: M/M/1).
struct QueueModel {
  int servers = 1;               // c
  double lambda_rps = 0;         // arrival rate
  double mu_rps = 0;             // service rate of one server
  double offered_load = 0;       // a = lambda / mu, in Erlangs
  double utilisation = 0;        // rho = a / c, < 1
  double p_wait = 0;             // probability an arrival waits: Erlang C (M/M/1: rho)
  double mean_wait_ns = 0;       // Wq, time in the queue before service
  double mean_response_ns = 0;   // W = Wq + 1 / mu
  double mean_queue_length = 0;  // Lq = lambda Wq
  double mean_in_system = 0;     // L = lambda W
};

// M/M/1 with arrival rate lambda_rps and service rate mu_rps. Errors (kInvalidArgument): mu not
// a finite number > 0, lambda not a finite number >= 0, and rho = lambda / mu >= 1 (unstable:
// the queue grows without bound, there is no steady state).
core::Result<QueueModel> mm1(double lambda_rps, double mu_rps);

// M/M/c with `servers` servers of rate mu_rps each. Errors as mm1, plus servers < 1; unstable
// when lambda >= c mu.
core::Result<QueueModel> mmc(int servers, double lambda_rps, double mu_rps);

// Erlang B (blocking probability of M/M/c/c) and Erlang C (probability of waiting in M/M/c) for
// c servers and offered load a Erlangs, by the recursion above. Erlang C needs a < c; NaN when
// c < 1, a < 0 or (C) a >= c.
double erlang_b(int servers, double offered_load);
double erlang_c(int servers, double offered_load);

// P(R > t): the probability a request spends more than t_ns in the system (survival function
// above).
double response_survival(const QueueModel& model, double t_ns);

// The q-quantile of the response time (q = 0.99 for p99), in ns, from the exact distribution:
// closed form for M/M/1, bisection on response_survival otherwise (relative precision 1e-12).
// NaN when q is not in (0, 1).
double response_quantile_ns(const QueueModel& model, double q);

// The q-quantile of the wait in the queue (Wq), in ns, closed form above: 0 for the share
// 1 - C of arrivals that find a free server. NaN when q is not in (0, 1).
double wait_quantile_ns(const QueueModel& model, double q);

// The seed's utilisation rows, 30 % to 99 %.
inline constexpr std::array<double, 7> kSeedUtilisations{0.30, 0.50, 0.70, 0.80, 0.90, 0.95, 0.99};

// One row of the seed's table: M/M/1 at utilisation rho of a server with rate mu.
struct UtilisationRow {
  double utilisation;       // rho
  double arrival_rps;       // lambda = rho mu
  double mean_response_ns;  // W = 1 / (mu - lambda)
  double ratio_to_first;    // W / W of the first row (the seed: ratio to the 30 % case)
  double p50_ns;            // response-time quantiles, -ln(1 - p) / (mu - lambda)
  double p90_ns;
  double p99_ns;
};

// The seed's table for a server with rate mu_rps. Errors (kInvalidArgument): mu not a finite
// number > 0; no utilisations; a utilisation not in [0, 1).
core::Result<std::vector<UtilisationRow>> mm1_utilisation_table(
    double mu_rps, std::span<const double> utilisations = kSeedUtilisations);

// Plain-word bands of the headroom ratio h = mu / peak. "below 1" and "2 to 3" are the seed's
// (000, last paragraph of "The Cost of Approaching Saturation"); the others are knee's. h = 1
// exactly (rho = 1) has no steady state either, so it falls in the first band.
enum class HeadroomBand { kDoesNotHold, kNoRoom, kOneFailure, kModest, kComfortable, kAmple };

struct HeadroomBandInfo {
  double from;  // the band holds h >= from (h > 1 for the second), up to the next band's from
  HeadroomBand band;
  const char* range;    // "2 to 3"
  const char* verdict;  // in plain words
};

inline constexpr std::array<HeadroomBandInfo, 6> kHeadroomBands{{
    {0, HeadroomBand::kDoesNotHold, "1 or below",
     "the design does not hold: the peak is above the upper bound and the queue grows without "
     "bound"},
    {1, HeadroomBand::kNoRoom, "1 to 2",
     "holds on paper only: over 50% utilisation at peak, latency climbs steeply with any surge "
     "and no failure can be absorbed"},
    {2, HeadroomBand::kOneFailure, "2 to 3", "narrow: one failure erases the margin"},
    {3, HeadroomBand::kModest, "3 to 5",
     "modest: absorbs one failure or one surge, not both at once"},
    {5, HeadroomBand::kComfortable, "5 to 10",
     "comfortable: the peak can double and still leave more than 2x"},
    {10, HeadroomBand::kAmple, "10 or more",
     "ample: under 10% utilisation at peak; capacity is not the constraint here"},
}};

// A planned peak rate against a measured upper bound mu.
struct PeakHeadroom {
  double peak_rps;
  double mu_rps;
  double utilisation;  // peak / mu (may be >= 1)
  double headroom;     // mu / peak
  // M/M/1 mean response 1 / (mu - peak); empty when peak >= mu (no steady state).
  std::optional<double> mean_response_ns;
  HeadroomBand band;
  std::string verdict;  // the band's words
};

// Errors (kInvalidArgument): mu or peak not a finite number > 0.
core::Result<PeakHeadroom> peak_headroom(double mu_rps, double peak_rps);

}  // namespace knee::analysis
