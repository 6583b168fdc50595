#include "engine/schedule.h"

#include <fmt/core.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "core/units.h"

namespace knee::engine {

using core::Result;
using core::Status;

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

ArrivalSchedule::ArrivalSchedule(Arrival arrival, const RateProfile& profile, uint64_t seed,
                                 int thread_index, int thread_count)
    : arrival_(arrival), profile_(profile), thread_count_(thread_count), rng_(seed), gap_(1.0) {
  assert(thread_index >= 0 && thread_index < thread_count);
  for (int i = 0; i < thread_index; ++i) draw_global();
  const double t = draw_global();
  next_ns_ = std::isfinite(t) ? static_cast<int64_t>(std::llround(t)) : kNever;
}

double ArrivalSchedule::draw_global() {
  double t;
  if (profile_) {
    // Arrival k (from 0) at Lambda^-1(k) for uniform arrivals, so the first is at time 0 when the
    // rate starts above 0; Poisson at Lambda^-1 of the sum of k + 1 unit exponentials.
    const double u =
        arrival_ == Arrival::kUniform ? static_cast<double>(k_) : (units_ += unit_gap_(rng_));
    const std::optional<double> at = profile_->time_of(u, segment_);
    ++k_;
    return at ? *at : std::numeric_limits<double>::infinity();
  }
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
  const double t = draw_global();
  next_ns_ = std::isfinite(t) ? static_cast<int64_t>(std::llround(t)) : kNever;
}

Result<std::vector<Stage>> parse_stages(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status::invalid_field("stages", fmt::format("'{}': {}; use {}", text, why, kStagesForm));
  };
  std::vector<Stage> stages;
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view entry = text.substr(from, comma - from);
    from = comma + 1;
    const size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      return bad(fmt::format("'{}' is not DURATION:RATE", entry));
    }
    Stage st;
    if (entry.substr(0, colon) == "0") {
      st.duration = core::Nanos(0);
    } else {
      auto d = core::parse_duration(entry.substr(0, colon));
      if (!d) return bad(fmt::format("in '{}': {}", entry, d.status().message()));
      st.duration = *d;
    }
    const std::string rate(entry.substr(colon + 1));
    char* end = nullptr;
    st.target_rps = std::strtod(rate.c_str(), &end);
    if (rate.empty() || end != rate.c_str() + rate.size() || !(st.target_rps >= 0) ||
        st.target_rps > 1e6) {
      return bad(fmt::format("in '{}': the rate '{}' is not from 0 to 1e6 req/s", entry, rate));
    }
    stages.push_back(st);
    if (stages.size() > 1000) return bad("more than 1000 stages");
  }
  const bool any =
      std::any_of(stages.begin(), stages.end(), [](const Stage& s) { return s.target_rps > 0; });
  if (!any) return bad("no stage has a rate above 0");
  core::Nanos total{0};
  for (const Stage& s : stages) total += s.duration;
  if (total.count() <= 0) return bad("the stages last no time");
  return stages;
}

RateProfile::RateProfile(std::vector<Stage> stages, double start_rps)
    : stages_(std::move(stages)), start_rps_(start_rps) {
  double at = 0;
  double before = 0;
  double rate = start_rps_ / 1e9;
  for (const Stage& s : stages_) {
    const double length = static_cast<double>(s.duration.count());
    const double target = s.target_rps / 1e9;
    if (length > 0) {
      segments_.push_back(Segment{at, length, rate, target, before});
      before += (rate + target) / 2 * length;
      at += length;
    }
    rate = target;
    total_ += s.duration;
  }
}

double RateProfile::peak_rps() const {
  double peak = start_rps_;
  for (const Stage& s : stages_) peak = std::max(peak, s.target_rps);
  return peak;
}

double RateProfile::rate_at(double t_ns) const {
  for (const Segment& s : segments_) {
    if (t_ns < s.from_ns + s.length_ns) {
      const double x = std::max(0.0, t_ns - s.from_ns);
      return (s.r0 + (s.r1 - s.r0) * x / s.length_ns) * 1e9;
    }
  }
  return 0;
}

double RateProfile::arrivals_until(double t_ns) const {
  double total = 0;
  for (const Segment& s : segments_) {
    const double x = std::clamp(t_ns - s.from_ns, 0.0, s.length_ns);
    if (x <= 0) break;
    total = s.before + s.r0 * x + (s.r1 - s.r0) * x * x / (2 * s.length_ns);
  }
  return total;
}

std::optional<double> RateProfile::time_of(double u, size_t& hint) const {
  for (size_t i = hint; i < segments_.size(); ++i) {
    const Segment& s = segments_[i];
    const double in = (s.r0 + s.r1) / 2 * s.length_ns;
    if (u >= s.before + in) continue;  // half-open: an arrival at the end is the next stage's
    hint = i;
    // Solve before + r0 x + (r1 - r0) x^2 / (2 L) = u for x in [0, L]; the form
    // 2c / (b + sqrt(b^2 + 4ac)) stays exact as the ramp flattens (a -> 0).
    const double a = (s.r1 - s.r0) / (2 * s.length_ns);
    const double b = s.r0;
    const double c = u - s.before;
    const double root = std::sqrt(std::max(0.0, b * b + 4 * a * c));
    const double x = b + root > 0 ? 2 * c / (b + root) : 0;
    return s.from_ns + std::clamp(x, 0.0, s.length_ns);
  }
  hint = segments_.size();
  return std::nullopt;
}

}  // namespace knee::engine
