#include "report/capacity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "report/render.h"

namespace knee::report {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(sep) : "") + parts[i];
  return out;
}

// "2s", "500ms": a duration as it is usually typed.
std::string duration_words(double s) {
  if (s >= 1 && s == std::round(s)) return fmt::format("{:g}s", s);
  return fmt::format("{:g}ms", s * 1e3);
}

// The first run of `st` (a failed one, when `failed`) whose limit was judged.
const CapacityLimit* first_limit(const CapacityStepFigures& st, bool failed) {
  for (const CapacityRepeatFigures& r : st.repeats) {
    if (r.limit && (!failed || !r.passed)) return &*r.limit;
  }
  return nullptr;
}

}  // namespace

std::string rate_text(double rps) {
  return rps == std::round(rps) ? fmt::format("{:.0f}", rps) : fmt::format("{:.1f}", rps);
}

CapacityStepFigures capacity_step(const analysis::CapacityStep& st) {
  CapacityStepFigures f;
  f.rate_rps = st.rate_rps;
  f.phase = analysis::phase_name(st.phase);
  f.passed = st.passed;
  for (const analysis::CapacityRepeat& rep : st.repeats) {
    const analysis::CapacityMeasurement& m = rep.measurement;
    f.repeats.push_back(CapacityRepeatFigures{m.figures.p50_ns, m.figures.p99_ns, m.figures.p999_ns,
                                              m.figures.max_ns, m.figures.throughput_rps,
                                              m.achieved_rps, m.figures.errors, m.figures.sent,
                                              rep.passed, rep.failures, std::nullopt});
    if (!m.limit.empty()) {
      f.repeats.back().limit = CapacityLimit{m.limit, m.limit_detail,
                                             std::isfinite(m.client_thread_cpu_demand)
                                                 ? std::optional(m.client_thread_cpu_demand)
                                                 : std::nullopt};
    }
  }
  return f;
}

CapacityDocument capacity_document(const analysis::CapacityResult& r, std::string target,
                                   std::vector<std::string> slos, CapacityParams params) {
  CapacityDocument d;
  d.target = std::move(target);
  d.slos = std::move(slos);
  d.params = std::move(params);
  d.capacity_rps = r.capacity_rps;
  d.bracket = CapacityBracket{r.capacity_rps, r.lowest_fail_rps};
  d.reached_max = r.reached_max;
  d.confirmed = r.confirmed;
  d.interrupted = r.interrupted;
  for (const analysis::CapacityStep& st : r.steps) d.steps.push_back(capacity_step(st));
  return d;
}

std::string capacity_header(const CapacityDocument& d) {
  const int repeats = d.params.repeats;
  std::string out = fmt::format(
      "capacity search on {}: {} with no errors, achieved rate >= 99% of the target; {} run{} "
      "of {} per step, a step passes only if every run passes; the answer is confirmed by {} "
      "more\n",
      d.target, join(d.slos, " and "), repeats, repeats > 1 ? "s" : "",
      duration_words(d.params.duration_s), d.params.confirm_repeats);
  out += io_text(d.params.io);
  out += fmt::format("{:>10}  {:<7}  {:<24}  {:>6}  {:>10}  {}\n", "rate/s", "phase",
                     "p99 per run (ms)", "errors", "achieved/s", "result");
  return out;
}

std::string capacity_row(const CapacityStepFigures& st) {
  std::vector<std::string> p99s;
  uint64_t errors = 0;
  double achieved = st.repeats.empty() ? 0 : st.repeats[0].achieved_rps;
  std::string why;
  for (const CapacityRepeatFigures& r : st.repeats) {
    p99s.push_back(fmt::format("{:.2f}", r.p99_ns / 1e6));
    errors += r.errors;
    achieved = std::min(achieved, r.achieved_rps);
    if (why.empty() && !r.failures.empty()) why = r.failures.front();
  }
  return fmt::format("{:>10}  {:<7}  {:<24}  {:>6}  {:>10.1f}  {}\n", rate_text(st.rate_rps),
                     st.phase, join(p99s, " "), errors, achieved,
                     st.passed ? "PASS" : "FAIL (" + why + ")");
}

std::string capacity_conclusion(const CapacityDocument& d) {
  if (d.interrupted || !d.capacity_rps) return "";
  const std::string slo_line = join(d.slos, " and ");
  const std::string bracket =
      fmt::format("bracket [{}, {}]", rate_text(*d.capacity_rps),
                  d.bracket.lowest_fail_rps ? rate_text(*d.bracket.lowest_fail_rps) : "none");
  std::string out;
  if (d.reached_max) {
    out += fmt::format(
        "capacity: at least {} req/s (--max-rate) meets {} with no errors; no failing rate "
        "found; {}\n",
        rate_text(*d.capacity_rps), slo_line, bracket);
  } else if (!d.bracket.lowest_fail_rps) {
    out += fmt::format("capacity: {} req/s meets {} with no errors; step limit reached; {}\n",
                       rate_text(*d.capacity_rps), slo_line, bracket);
  } else {
    out += fmt::format("capacity: {} req/s meets {} with no errors; {}\n",
                       rate_text(*d.capacity_rps), slo_line, bracket);
  }
  const int confirm = d.params.confirm_repeats;
  if (confirm > 0 && !d.confirmed) {
    out += fmt::format(
        "  not confirmed: the step limit ended the search before {} req/s passed its {} "
        "confirmation runs\n",
        rate_text(*d.capacity_rps), confirm);
  } else if (confirm > 0) {
    out += fmt::format(
        "  confirmed: {} req/s passed every one of its runs, {} of them after the search\n",
        rate_text(*d.capacity_rps), confirm);
  }
  return out + capacity_limit_line(d);
}

std::string capacity_limit_line(const CapacityDocument& d) {
  if (d.interrupted || !d.capacity_rps) return "";
  if (d.bracket.lowest_fail_rps) {
    const double rate = *d.bracket.lowest_fail_rps;
    const CapacityLimit* limit = nullptr;
    for (const CapacityStepFigures& st : d.steps) {
      if (st.rate_rps == rate && !st.passed && (limit = first_limit(st, true)) != nullptr) break;
    }
    if (limit == nullptr) return "";
    if (limit->resource == "client") {
      return fmt::format(
          "  the failing rate {} req/s measured knee's client, not the target: {}; {} req/s is "
          "a floor for the target: give more threads (-t) or more processes (--part) and search "
          "again\n",
          rate_text(rate), limit->detail, rate_text(*d.capacity_rps));
    }
    if (limit->resource == "unreachable") {
      return fmt::format("  at {} req/s the target stopped answering: {}\n", rate_text(rate),
                         limit->detail);
    }
    const std::string busiest = limit->client_thread_cpu_demand
                                    ? fmt::format(" (its busiest thread at {:.0f}% of a core)",
                                                  *limit->client_thread_cpu_demand * 100)
                                    : "";
    return fmt::format("  at {} req/s knee's client kept up{}: the failure is the target's{}\n",
                       rate_text(rate), busiest,
                       limit->resource == "pool" ? " (" + limit->detail + ")" : "");
  }
  // No rate failed: the answer is where the search stopped, and may be the client's limit.
  for (const CapacityStepFigures& st : d.steps) {
    if (st.rate_rps != *d.capacity_rps) continue;
    for (const CapacityRepeatFigures& r : st.repeats) {
      if (r.limit && r.limit->resource == "client") {
        return fmt::format(
            "  at {} req/s knee's client was at its limit: {}; the target may take more\n",
            rate_text(*d.capacity_rps), r.limit->detail);
      }
    }
  }
  return "";
}

std::string render_capacity_text(const CapacityDocument& d) {
  std::string out = capacity_header(d);
  for (const CapacityStepFigures& st : d.steps) out += capacity_row(st);
  return out + capacity_conclusion(d);
}

}  // namespace knee::report
