// `knee capacity URL --slo 'p99<50ms'`: the highest open-loop rate (req/s) whose SLOs hold with no
// errors and the client keeping up (achieved >= 99 % of the target), by the bracket-then-bisect
// search of analysis/capacity.h, each step one or more engine::run_load runs with rate_rps set.
// Prints one table row per step as it completes, then the answer and its bracket; --json prints
// the whole result on stdout instead (rows then go to stderr).
// Exit: 0 a passing rate was found; 1 even the start rate fails, or the target is unreachable;
// 2 bad input; 130 interrupted (Ctrl-C), after printing what was measured.
#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/capacity.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/interrupt.h"
#include "cli/load_flags.h"
#include "cli/progress.h"
#include "cli/thresholds.h"

namespace knee::cli {
namespace {

using core::Status;

// Whole req/s without decimals, otherwise one decimal.
std::string rate_text(double rps) {
  return rps == std::round(rps) ? fmt::format("{:.0f}", rps) : fmt::format("{:.1f}", rps);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(sep) : "") + parts[i];
  return out;
}

class CapacityCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    flags_.add_to(app, /*url_required=*/true, /*with_connections=*/true);
    app.add_option("--arrival", flags_.arrival,
                   "Spacing of arrivals, uniform or poisson (Poisson arrivals queue sooner, as "
                   "independent users do)")
        ->capture_default_str();
    app.add_option("--seed", flags_.seed, "Seed of the Poisson arrivals")->capture_default_str();
    app.add_option("--slo", slo_texts_,
                   "Service-level objective, repeatable, all must hold: METRIC OP VALUE like "
                   "'p99<50ms' (the --threshold grammar of knee run). A rate passes when every "
                   "SLO holds, errors are 0 and the achieved rate is >= 99% of the target")
        ->required()
        ->allow_extra_args(false);
    app.add_option("--start-rate", start_rate_, "First open-loop rate tried, req/s; then doubled")
        ->capture_default_str();
    app.add_option("--max-rate", max_rate_, "Highest rate tried, req/s")->capture_default_str();
    app.add_option("--precision", precision_pct_,
                   "Stop bisecting when the bracket is within this percent of its lower bound")
        ->capture_default_str();
    app.add_option("--repeat", repeat_,
                   "Runs per step; a step passes only if every run passes (conservative)")
        ->capture_default_str();
    app.add_option("--confirm", confirm_,
                   "Runs re-measuring the answer after the search; while any fails, the answer "
                   "steps down by --precision and is confirmed again (0: no confirmation)")
        ->capture_default_str();
    app.add_flag("--json", json_, "Print the whole result as JSON on stdout");
    add_progress_flags(app, progress_flags_);
  }

  int run() override {
    const std::vector<std::string>& slo_texts = slo_texts_;
    analysis::CapacityOptions copts;
    for (const std::string& text : slo_texts_) {
      auto t = analysis::parse_threshold(text);
      if (!t) return report_failure(Status::invalid_argument("--slo: " + t.status().message()));
      copts.slos.push_back(std::move(t).value());
    }
    if (!(start_rate_ > 0) || !std::isfinite(start_rate_)) {
      return report_failure(Status::invalid_argument("--start-rate: give a rate above 0 req/s"));
    }
    if (!(max_rate_ >= start_rate_) || !(max_rate_ <= engine::kMaxRateRps)) {
      return report_failure(Status::invalid_argument(
          "--max-rate: give a rate at or above --start-rate and at most 1e6 req/s"));
    }
    if (!(precision_pct_ > 0 && precision_pct_ <= 100)) {
      return report_failure(
          Status::invalid_argument("--precision: give a percentage above 0, at most 100"));
    }
    if (repeat_ < 1 || repeat_ > 100) {
      return report_failure(Status::invalid_argument("--repeat: give a count from 1 to 100"));
    }
    copts.start_rate_rps = start_rate_;
    copts.max_rate_rps = max_rate_;
    copts.precision = precision_pct_ / 100;
    copts.repeats = repeat_;
    if (confirm_ < 0 || confirm_ > 100) {
      return report_failure(Status::invalid_argument("--confirm: give a count from 0 to 100"));
    }
    copts.confirm_repeats = confirm_;

    auto base = flags_.to_options();
    if (!base) return report_failure(base.status());
    if (Status s = options_at(*base, start_rate_).validate(); !s) return report_failure(s);

    const std::atomic<bool>& interrupt = install_interrupt_handler();
    engine::RunControl control;
    control.interrupt = &interrupt;
    Progress progress(progress_flags_);  // live line on stderr; cleared before each row
    control.on_progress = progress.handler();
    int steps_done = 0;
    analysis::CapacityMeasure measure =
        [&](double rate, int repeat) -> core::Result<analysis::CapacityMeasurement> {
      analysis::CapacityMeasurement m;
      if (interrupt.load()) {
        m.interrupted = true;
        return m;
      }
      progress.begin_run(
          fmt::format("step {} {}/s run {}", steps_done + 1, rate_text(rate), repeat + 1),
          base->warmup + base->duration, core::Nanos(0));
      auto result = engine::run_load(options_at(*base, rate), control);
      if (!result) return result.status();
      m.figures = threshold_input(*result);
      m.achieved_rps = result->achieved_rate_rps();
      m.scheduled_rps = result->scheduled_rate_rps();
      m.interrupted = result->interrupted;
      return m;
    };

    std::FILE* rows = json_ ? stderr : stdout;
    const std::string slo_line = join(slo_texts, " and ");
    fmt::print(rows,
               "capacity search on {}: {} with no errors, achieved rate >= 99% of the target; "
               "{} run{} of {} per step, a step passes only if every run passes; the answer "
               "is confirmed by {} more\n",
               flags_.url, slo_line, repeat_, repeat_ > 1 ? "s" : "", flags_.duration, confirm_);
    fmt::print(rows, "{:>10}  {:<7}  {:<24}  {:>6}  {:>10}  {}\n", "rate/s", "phase",
               "p99 per run (ms)", "errors", "achieved/s", "result");
    std::fflush(rows);
    auto print_step = [&](const analysis::CapacityStep& st) {
      progress.clear();
      ++steps_done;
      std::vector<std::string> p99s;
      uint64_t errors = 0;
      double achieved = st.repeats.empty() ? 0 : st.repeats[0].measurement.achieved_rps;
      std::string why;
      for (const analysis::CapacityRepeat& r : st.repeats) {
        p99s.push_back(fmt::format("{:.2f}", r.measurement.figures.p99_ns / 1e6));
        errors += r.measurement.figures.errors;
        achieved = std::min(achieved, r.measurement.achieved_rps);
        if (why.empty() && !r.failures.empty()) why = r.failures.front();
      }
      fmt::print(rows, "{:>10}  {:<7}  {:<24}  {:>6}  {:>10.1f}  {}\n", rate_text(st.rate_rps),
                 analysis::phase_name(st.phase), join(p99s, " "), errors, achieved,
                 st.passed ? "PASS" : "FAIL (" + why + ")");
      std::fflush(rows);
    };

    auto found = analysis::find_capacity(copts, measure, print_step);
    progress.finish();
    if (!found) return report_failure(found.status());
    const analysis::CapacityResult& r = *found;

    if (json_) fmt::print("{}\n", to_json(r, *base, slo_texts).dump(2));
    std::string bracket =
        fmt::format("bracket [{}, {}]", r.capacity_rps ? rate_text(*r.capacity_rps) : "none",
                    r.lowest_fail_rps ? rate_text(*r.lowest_fail_rps) : "none");
    if (r.interrupted) {
      fmt::print(stderr, "knee: capacity: interrupted; so far {}\n", bracket);
      return 130;
    }
    if (!r.capacity_rps) {
      fmt::print(stderr,
                 "knee: capacity: no passing rate: even the start rate {} req/s fails {} with no "
                 "errors (try a lower --start-rate)\n",
                 rate_text(start_rate_), slo_line);
      return kExitRunFailed;
    }
    if (r.reached_max) {
      fmt::print(rows,
                 "capacity: at least {} req/s (--max-rate) meets {} with no errors; no failing "
                 "rate found; {}\n",
                 rate_text(*r.capacity_rps), slo_line, bracket);
    } else if (!r.lowest_fail_rps) {
      fmt::print(rows, "capacity: {} req/s meets {} with no errors; step limit reached; {}\n",
                 rate_text(*r.capacity_rps), slo_line, bracket);
    } else {
      fmt::print(rows, "capacity: {} req/s meets {} with no errors; {}\n",
                 rate_text(*r.capacity_rps), slo_line, bracket);
    }
    if (confirm_ > 0 && !r.confirmed) {
      fmt::print(rows,
                 "  not confirmed: the step limit ended the search before {} req/s passed "
                 "its {} confirmation runs\n",
                 rate_text(*r.capacity_rps), confirm_);
    } else if (confirm_ > 0) {
      fmt::print(rows,
                 "  confirmed: {} req/s passed every one of its runs, {} of them after the "
                 "search\n",
                 rate_text(*r.capacity_rps), confirm_);
    }
    return kExitOk;
  }

 private:
  LoadFlags flags_;
  std::vector<std::string> slo_texts_;
  double start_rate_ = 100;
  double max_rate_ = 1e6;
  double precision_pct_ = 5;
  int repeat_ = 3;
  int confirm_ = 3;
  bool json_ = false;
  ProgressFlags progress_flags_;  // --quiet, --no-color

  // The load options of one step: open loop at `rate`, with -c as the pool's cap when given,
  // otherwise the engine's default pool for that rate.
  engine::LoadOptions options_at(const engine::LoadOptions& base, double rate) const {
    engine::LoadOptions o = base;
    o.rate_rps = rate;
    o.connections = flags_.connections_given
                        ? flags_.connections
                        : engine::LoadOptions::default_open_loop_connections(rate);
    return o;
  }

  nlohmann::json to_json(const analysis::CapacityResult& r, const engine::LoadOptions& base,
                         const std::vector<std::string>& slo_texts) const {
    using nlohmann::json;
    auto opt = [](const std::optional<double>& v) -> json { return v ? json(*v) : json(nullptr); };
    json steps = json::array();
    for (const analysis::CapacityStep& st : r.steps) {
      json reps = json::array();
      for (const analysis::CapacityRepeat& rep : st.repeats) {
        const analysis::CapacityMeasurement& m = rep.measurement;
        reps.push_back({{"p50_ns", m.figures.p50_ns},
                        {"p99_ns", m.figures.p99_ns},
                        {"p999_ns", m.figures.p999_ns},
                        {"max_ns", m.figures.max_ns},
                        {"throughput_rps", m.figures.throughput_rps},
                        {"achieved_rps", m.achieved_rps},
                        {"errors", m.figures.errors},
                        {"sent", m.figures.sent},
                        {"passed", rep.passed},
                        {"failures", rep.failures}});
      }
      steps.push_back({{"rate_rps", st.rate_rps},
                       {"phase", analysis::phase_name(st.phase)},
                       {"passed", st.passed},
                       {"repeats", reps}});
    }
    return {
        {"target", flags_.url},
        {"slos", slo_texts},
        {"params",
         {{"start_rate_rps", start_rate_},
          {"max_rate_rps", max_rate_},
          {"precision_percent", precision_pct_},
          {"repeats", repeat_},
          {"confirm_repeats", confirm_},
          {"duration_s", std::chrono::duration<double>(base.duration).count()},
          {"warmup_s", std::chrono::duration<double>(base.warmup).count()},
          {"timeout_s", std::chrono::duration<double>(base.timeout).count()},
          {"max_connections",
           flags_.connections_given ? json(flags_.connections) : json("default per rate")}}},
        {"capacity_rps", opt(r.capacity_rps)},
        {"bracket",
         {{"highest_pass_rps", opt(r.capacity_rps)}, {"lowest_fail_rps", opt(r.lowest_fail_rps)}}},
        {"reached_max", r.reached_max},
        {"confirmed", r.confirmed},
        {"interrupted", r.interrupted},
        {"steps", steps}};
  }
};

}  // namespace

std::unique_ptr<Subcommand> make_capacity_command() { return std::make_unique<CapacityCommand>(); }

}  // namespace knee::cli
