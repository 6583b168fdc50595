// ArrivalSchedule: the intended send times of an open-loop run. One global sequence of arrivals
// t_0 < t_1 < ... at `rate_rps`, independent of connections and threads; worker thread i of T
// takes the arrivals k with k mod T == i, so the union over threads is the global sequence.
//
// Uniform: t_k = k / rate. Poisson: exponential gaps with mean 1/rate drawn from a seeded
// std::mt19937_64 (the same seed gives the same sequence on every thread and every run).
// Times are offsets from the run start, in ns. Thread-safety: one owner.
#pragma once

#include <cstdint>
#include <random>

namespace knee::engine {

enum class Arrival { kUniform, kPoisson };

class ArrivalSchedule {
 public:
  // rate_rps > 0; 0 <= thread_index < thread_count.
  ArrivalSchedule(Arrival arrival, double rate_rps, uint64_t seed, int thread_index,
                  int thread_count);

  // Offset of this thread's next arrival from the run start, ns.
  int64_t next_ns() const { return next_ns_; }
  // Moves to this thread's following arrival.
  void advance();

 private:
  double draw_global();  // the global sequence's next offset, ns

  Arrival arrival_;
  double interval_ns_;
  int thread_count_;
  uint64_t k_ = 0;        // global index of the next arrival this thread takes
  double poisson_t_ = 0;  // global time of arrival k_ - 1 (Poisson), ns
  std::mt19937_64 rng_;
  std::exponential_distribution<double> gap_;
  int64_t next_ns_ = 0;
};

}  // namespace knee::engine
