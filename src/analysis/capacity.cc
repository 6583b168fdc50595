#include "analysis/capacity.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace knee::analysis {

using core::Result;
using core::Status;

namespace {

std::string format_rate(double rps) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << rps;
  return s.str();
}

Status validate(const CapacityOptions& o) {
  if (o.slos.empty()) return Status::invalid_argument("capacity: at least one SLO is required");
  if (!(o.start_rate_rps > 0) || !std::isfinite(o.start_rate_rps))
    return Status::invalid_argument("capacity: the start rate must be > 0 req/s");
  if (!(o.max_rate_rps >= o.start_rate_rps) || !std::isfinite(o.max_rate_rps))
    return Status::invalid_argument("capacity: the max rate must be >= the start rate");
  if (!(o.precision > 0) || !std::isfinite(o.precision))
    return Status::invalid_argument("capacity: the precision must be > 0");
  if (o.repeats < 1 || o.repeats > 100)
    return Status::invalid_argument("capacity: repeats must be from 1 to 100");
  if (o.confirm_repeats < 0 || o.confirm_repeats > 100)
    return Status::invalid_argument("capacity: confirm repeats must be from 0 to 100");
  if (o.max_steps < 1) return Status::invalid_argument("capacity: max_steps must be >= 1");
  return Status::success();
}

// The highest rate that passed every step measured at it.
std::optional<double> highest_clean_pass(const std::vector<CapacityStep>& steps) {
  std::optional<double> best;
  for (const CapacityStep& s : steps) {
    if (!s.passed) continue;
    bool ever_failed = std::any_of(steps.begin(), steps.end(), [&](const CapacityStep& o) {
      return o.rate_rps == s.rate_rps && !o.passed;
    });
    if (!ever_failed) best = std::max(best.value_or(s.rate_rps), s.rate_rps);
  }
  return best;
}

}  // namespace

const char* phase_name(CapacityPhase phase) {
  switch (phase) {
    case CapacityPhase::kBracket:
      return "bracket";
    case CapacityPhase::kBisect:
      return "bisect";
    case CapacityPhase::kConfirm:
      return "confirm";
  }
  return "?";
}

core::Status check_capacity_slo(const Threshold& slo) {
  if (slo.op == ThresholdOp::kLess || slo.op == ThresholdOp::kLessEqual) {
    return core::Status::success();
  }
  return core::Status::invalid_argument(fmt::format(
      "'{}' is a lower bound, which cannot hold at the low rate the search starts from; give "
      "upper bounds such as 'p99<50ms' or 'errors<1%' (the rate capacity finds is the "
      "throughput that keeps them)",
      slo.text));
}

CapacityRepeat judge_capacity_repeat(const std::vector<Threshold>& slos, double rate_rps,
                                     const CapacityMeasurement& m) {
  CapacityRepeat r;
  r.measurement = m;
  for (const Threshold& t : slos) {
    ThresholdResult tr = evaluate(t, m.figures);
    if (!tr.passed) r.failures.push_back(tr.line);
  }
  if (m.figures.errors != 0) {
    r.failures.push_back("errors: " + std::to_string(m.figures.errors) + " of " +
                         std::to_string(m.figures.sent) + " sent (must be 0)");
  }
  const double due = m.scheduled_rps > 0 ? m.scheduled_rps : rate_rps;
  if (m.achieved_rps < 0.99 * due) {
    r.failures.push_back("achieved rate " + format_rate(m.achieved_rps) +
                         " req/s is below 99% of the " + format_rate(due) + " scheduled");
  }
  r.passed = r.failures.empty();
  return r;
}

Result<CapacityResult> find_capacity(const CapacityOptions& options, const CapacityMeasure& measure,
                                     const std::function<void(const CapacityStep&)>& on_step) {
  if (Status s = validate(options); !s) return s;
  CapacityResult out;
  // Measures one step; false when it was interrupted (the step is then not recorded).
  auto step = [&](double rate, CapacityPhase phase) -> Result<bool> {
    CapacityStep st;
    st.rate_rps = rate;
    st.phase = phase;
    st.passed = true;
    const int runs = phase == CapacityPhase::kConfirm ? options.confirm_repeats : options.repeats;
    for (int k = 0; k < runs; ++k) {
      auto m = measure(rate, k);
      if (!m) return m.status();
      if (m->interrupted) {
        out.interrupted = true;
        return false;
      }
      st.repeats.push_back(judge_capacity_repeat(options.slos, rate, *m));
      st.passed = st.passed && st.repeats.back().passed;
    }
    out.steps.push_back(std::move(st));
    if (on_step) on_step(out.steps.back());
    if (!out.steps.back().passed) {
      out.lowest_fail_rps = std::min(out.lowest_fail_rps.value_or(rate), rate);
    }
    out.capacity_rps = highest_clean_pass(out.steps);
    return true;
  };
  auto budget_left = [&] { return static_cast<int>(out.steps.size()) < options.max_steps; };

  // 1. Bracket.
  double rate = options.start_rate_rps;
  while (budget_left()) {
    auto ok = step(rate, CapacityPhase::kBracket);
    if (!ok) return ok.status();
    if (!*ok) return out;
    if (!out.steps.back().passed) break;
    if (rate >= options.max_rate_rps) {
      out.reached_max = true;
      break;
    }
    rate = std::min(rate * 2, options.max_rate_rps);
  }
  if (!out.capacity_rps) return out;                         // the start failed
  if (!out.reached_max && !out.lowest_fail_rps) return out;  // out of steps while doubling

  // 2. Bisect.
  while (!out.reached_max && budget_left()) {
    const double lo = *out.capacity_rps;
    const double hi = *out.lowest_fail_rps;
    if (hi - lo <= options.precision * lo) break;
    double mid = std::round((lo + hi) / 2);
    if (mid <= lo || mid >= hi) mid = (lo + hi) / 2;  // below whole req/s resolution
    if (mid <= lo || mid >= hi) break;
    auto ok = step(mid, CapacityPhase::kBisect);
    if (!ok) return ok.status();
    if (!*ok) return out;
  }

  // 3. Confirm, stepping down by the precision while a confirmation fails.
  if (options.confirm_repeats == 0) return out;
  double candidate = *out.capacity_rps;
  while (budget_left()) {
    auto ok = step(candidate, CapacityPhase::kConfirm);
    if (!ok) return ok.status();
    if (!*ok) return out;
    if (out.steps.back().passed) {
      out.confirmed = out.capacity_rps == candidate;
      return out;
    }
    out.reached_max = false;
    // Next: the highest rate still passing everywhere when it is within one precision step,
    // else one precision step down (never measured yet: the confirmation then measures it).
    double next = std::round(candidate * (1 - options.precision));
    if (next >= candidate) next = candidate * (1 - options.precision);  // below 1 req/s
    if (out.capacity_rps && *out.capacity_rps >= next) next = *out.capacity_rps;
    if (!(next > 0)) return out;
    candidate = next;
  }
  return out;
}

}  // namespace knee::analysis
