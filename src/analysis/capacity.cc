#include "analysis/capacity.h"

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
  if (o.max_steps < 1) return Status::invalid_argument("capacity: max_steps must be >= 1");
  return Status::ok();
}

}  // namespace

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
  auto step = [&](double rate, bool bisecting) -> Result<bool> {
    CapacityStep st;
    st.rate_rps = rate;
    st.bisecting = bisecting;
    st.passed = true;
    for (int k = 0; k < options.repeats; ++k) {
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
    if (out.steps.back().passed) {
      out.capacity_rps = std::max(out.capacity_rps.value_or(0), rate);
    } else {
      out.lowest_fail_rps = std::min(out.lowest_fail_rps.value_or(rate), rate);
    }
    return true;
  };
  auto budget_left = [&] { return static_cast<int>(out.steps.size()) < options.max_steps; };

  // 1. Bracket.
  double rate = options.start_rate_rps;
  while (budget_left()) {
    auto ok = step(rate, false);
    if (!ok) return ok.status();
    if (!*ok) return out;
    if (!out.steps.back().passed) break;
    if (rate >= options.max_rate_rps) {
      out.reached_max = true;
      return out;
    }
    rate = std::min(rate * 2, options.max_rate_rps);
  }
  if (!out.capacity_rps || !out.lowest_fail_rps) return out;  // start failed, or out of steps

  // 2. Bisect.
  while (budget_left()) {
    const double lo = *out.capacity_rps;
    const double hi = *out.lowest_fail_rps;
    if (hi - lo <= options.precision * lo) break;
    double mid = std::round((lo + hi) / 2);
    if (mid <= lo || mid >= hi) mid = (lo + hi) / 2;  // below whole req/s resolution
    if (mid <= lo || mid >= hi) break;
    auto ok = step(mid, true);
    if (!ok) return ok.status();
    if (!*ok) return out;
  }
  return out;
}

}  // namespace knee::analysis
