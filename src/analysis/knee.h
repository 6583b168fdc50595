// The knee of a concurrency sweep: the last level before adding concurrency stops buying
// throughput and starts buying only latency.
//
// Seed 000 ("Two Regions") shows the shape: from 1 to 4 in flight, throughput grows 3.81x while
// latency stays put; from 32 to 64, throughput grows 1.06x while latency nearly doubles. The knee
// is where the first region ends. Because sweeps do not always double (1, 3, 10, ...), the
// throughput gain between two levels is normalised to a gain per doubling of concurrency:
//
//   g_i = (X[i+1] / X[i]) ^ (1 / log2(N[i+1] / N[i])) - 1
//
// and the knee is the smallest level N[i] with g_i < min_gain while p99 grows by at least
// min_p99_growth (p99[i+1] / p99[i] >= min_p99_growth). Both conditions are needed: a flat
// throughput with flat latency is an idle or client-bound sweep, not a saturated server. When no
// pair qualifies there is no knee; the last level is never reported just because the sweep ended.
//
// A knee must hold: when a level j after the next beats the candidate's throughput by
// hold_margin (10 %) or more per doubling, (X[j]/X[i])^(1/log2(N[j]/N[i])) - 1 >= hold_margin,
// the curve did not flatten there; one level dipped (a stall, a busy host), and that level, the
// one after the candidate, is named noisy. A curve that flattens gently (5 % per doubling)
// holds. The next candidate that holds is the knee; when none holds there is no stable knee.
//
// An open-loop rate sweep whose throughput keeps rising a little with each rate can pass the
// per-doubling rule while the server is already behind. find_rate_knee() asks the open loop's
// own question instead: the first rate whose completed throughput fell below min_served (90 %)
// of the offered rate while p99 grew at least min_p99_growth over the rate before.
//
// Pure functions: no I/O, no clock, no shared state; safe to call from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace knee::analysis {

// One level of a sweep, as measured.
struct LevelPoint {
  double concurrency;     // N: requests kept in flight (closed loop)
  double throughput_rps;  // X: completed requests per second
  double p99_ns;          // 99th percentile latency, in nanoseconds
};

struct KneeVerdict {
  // Index into the points of the knee level (never the last point); empty: no knee.
  std::optional<size_t> index;
  // A level whose dip made a candidate that did not hold (the first such); empty: none.
  std::optional<size_t> noisy_index;
  // find_rate_knee: the first level that fell behind its offered rate (index + 1).
  std::optional<size_t> overloaded_index;
  // g_i for i = 0..n-2, as a fraction (0.06 = 6% more throughput per doubling). NaN for a pair
  // that was skipped: concurrency not strictly increasing or not > 0, or throughput not > 0.
  std::vector<double> gain_per_doubling;
  // The rule in words with the thresholds used, printed beside the result.
  std::string rule;
  // "knee at concurrency 32: going to 64 gains 5.9% throughput per doubling (4031 -> 4268 req/s)
  // while p99 grows 1.72x (9.56 -> 16.46 ms)" or "no knee within the sweep".
  std::string summary;
};

// Finds the knee of `points`, which must be sorted by concurrency, strictly increasing.
// level_name: what the levels are, for the texts ("concurrency"; "rate" in an open-loop sweep,
// where LevelPoint::concurrency holds the target rate in req/s and the same rule applies).
// min_gain: throughput gain per doubling below which the curve counts as flat (0.10 = 10%).
// min_p99_growth: factor by which p99 must grow across the same pair (1.5 = 1.5x).
// Pairs that break the preconditions (unsorted or non-positive concurrency, throughput <= 0, any
// non-finite value) are skipped, with NaN in gain_per_doubling; a pair whose p99[i] is not > 0
// cannot show p99 growth and never qualifies. Fewer than 2 points: no knee, no gains.
// unit: the throughput's unit in the texts ("req/s"; "IOPS", "tps" for an external benchmark,
// whose LevelPoint::throughput_rps then holds its own rate).
KneeVerdict find_knee(std::span<const LevelPoint> points, double min_gain = 0.10,
                      double min_p99_growth = 1.5, std::string_view level_name = "concurrency",
                      double hold_margin = 0.10, std::string_view unit = "req/s");

// The knee of an open-loop sweep, `points` sorted by target rate (LevelPoint::concurrency holds
// it, req/s): the last rate before the first level i that completed less than min_served of
// its rate (X[i] < min_served * rate[i]) while p99 grew at least min_p99_growth over level i-1.
// index = i - 1 and overloaded_index = i; none when no level qualifies. gain_per_doubling is
// left empty.
KneeVerdict find_rate_knee(std::span<const LevelPoint> points, double min_served = 0.90,
                           double min_p99_growth = 1.5);

}  // namespace knee::analysis
