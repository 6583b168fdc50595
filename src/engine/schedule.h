// ArrivalSchedule: the intended send times of an open-loop run. One global sequence of arrivals
// t_0 < t_1 < ... at `rate_rps`, independent of connections and threads; worker thread i of T
// takes the arrivals k with k mod T == i, so the union over threads is the global sequence.
//
// Uniform: t_k = k / rate. Poisson: exponential gaps with mean 1/rate drawn from a seeded
// std::mt19937_64 (the same seed gives the same sequence on every thread and every run).
// Times are offsets from the run start, in ns.
//
// A rate that changes (--stages, k6's ramping arrival rate): a RateProfile of stages, each
// moving the rate linearly from where the previous one ended (the first from `start_rps`) to its
// target over its duration. With the cumulative intensity Lambda(t) = integral of rate from 0 to
// t, arrival k comes at Lambda^-1(k) (uniform) or at Lambda^-1(E_1 + ... + E_k) with E_i
// exponential of mean 1 (Poisson: a non-homogeneous Poisson process by time change, Cinlar,
// "Introduction to Stochastic Processes", 1975, ch. 4); with one constant stage both are the
// schedules above. Thread-safety: one owner.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace knee::engine {

enum class Arrival { kUniform, kPoisson };

struct Stage {
  core::Nanos duration{0};  // >= 0; 0 jumps to the target at once
  double target_rps = 0;    // >= 0, at the stage's end
  bool operator==(const Stage&) const = default;
};

// The accepted form of --stages, quoted in its errors and --help.
inline constexpr std::string_view kStagesForm =
    "'DURATION:RATE,...' (e.g. '30s:100,1m:500,30s:0': ramp to 100 req/s over 30 s, to 500 over "
    "a minute, down to 0 over 30 s)";

// Parses --stages. Errors (kInvalidArgument, field() "stages", quoting the text and
// kStagesForm): an entry that is not DURATION:RATE (an empty text or entry too), a bad duration,
// a rate that is negative or above 1e6, more than 1,000 stages, no stage with a rate above 0,
// stages that last no time.
core::Result<std::vector<Stage>> parse_stages(std::string_view text);

class RateProfile {
 public:
  // Stages from time 0, starting at `start_rps`.
  RateProfile(std::vector<Stage> stages, double start_rps = 0);
  core::Nanos total() const { return total_; }
  double peak_rps() const;
  // The rate at t ns from the start, req/s; 0 after the last stage.
  double rate_at(double t_ns) const;
  // Lambda(t): the arrivals intended in [0, t], fractional.
  double arrivals_until(double t_ns) const;
  // Lambda^-1(u): the time (ns) by which u arrivals were intended; nullopt past the last stage.
  // `hint` (in/out) is the stage to start searching from, for a caller whose u only grows.
  std::optional<double> time_of(double u, size_t& hint) const;
  const std::vector<Stage>& stages() const { return stages_; }
  double start_rps() const { return start_rps_; }

 private:
  struct Segment {
    double from_ns, length_ns;
    double r0, r1;  // arrivals per ns at its start and end
    double before;  // Lambda at its start
  };
  std::vector<Stage> stages_;
  double start_rps_;
  std::vector<Segment> segments_;
  core::Nanos total_{0};
};

class ArrivalSchedule {
 public:
  // rate_rps > 0; 0 <= thread_index < thread_count.
  ArrivalSchedule(Arrival arrival, double rate_rps, uint64_t seed, int thread_index,
                  int thread_count);
  // No arrival: 2^62 ns, 146 years from the start (far past any run, and safe to add to a
  // clock's time point).
  static constexpr int64_t kNever = int64_t{1} << 62;

  // Arrivals at the profile's changing rate; after its last stage, none (next_ns() is then
  // kNever).
  ArrivalSchedule(Arrival arrival, const RateProfile& profile, uint64_t seed, int thread_index,
                  int thread_count);

  // Offset of this thread's next arrival from the run start, ns.
  int64_t next_ns() const { return next_ns_; }
  // Moves to this thread's following arrival.
  void advance();

 private:
  double draw_global();  // the global sequence's next offset, ns

  Arrival arrival_;
  double interval_ns_ = 0;
  std::optional<RateProfile> profile_;
  size_t segment_ = 0;  // of profile_, where the last arrival fell
  double units_ = 0;    // profile_: Lambda of the last global arrival (Poisson: sum of E_i)
  std::exponential_distribution<double> unit_gap_{1.0};
  int thread_count_;
  uint64_t k_ = 0;        // global index of the next arrival this thread takes
  double poisson_t_ = 0;  // global time of arrival k_ - 1 (Poisson), ns
  std::mt19937_64 rng_;
  std::exponential_distribution<double> gap_;
  int64_t next_ns_ = 0;
};

}  // namespace knee::engine
