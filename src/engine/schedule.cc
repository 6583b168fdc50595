#include "engine/schedule.h"

#include <cassert>
#include <cmath>

namespace knee::engine {

ArrivalSchedule::ArrivalSchedule(Arrival arrival, double rate_rps, uint64_t seed, int thread_index,
                                 int thread_count)
    : arrival_(arrival),
      interval_ns_(1e9 / rate_rps),
      thread_count_(thread_count),
      rng_(seed),
      gap_(rate_rps / 1e9) {
  assert(rate_rps > 0 && thread_index >= 0 && thread_index < thread_count);
  // Skip to this thread's first arrival.
  for (int i = 0; i < thread_index; ++i) draw_global();
  next_ns_ = static_cast<int64_t>(std::llround(draw_global()));
}

double ArrivalSchedule::draw_global() {
  double t;
  if (arrival_ == Arrival::kUniform) {
    t = static_cast<double>(k_) * interval_ns_;
  } else {
    poisson_t_ += gap_(rng_);
    t = poisson_t_;
  }
  ++k_;
  return t;
}

void ArrivalSchedule::advance() {
  for (int i = 1; i < thread_count_; ++i) draw_global();
  next_ns_ = static_cast<int64_t>(std::llround(draw_global()));
}

}  // namespace knee::engine
