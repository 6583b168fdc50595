// `knee run URL`: one load test, closed loop (-c) or open loop (-r), optionally repeated; a
// wrk-like summary or --json. `--scenario` runs several at once (cli/scenario.h).
#include <fmt/core.h>

#include "cli/command.h"
#include "cli/distributed.h"
#include "cli/interrupt.h"
#include "cli/load_flags.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/thresholds.h"
#include "core/clock.h"
#include "engine/scenario.h"
#include "probes/host_context.h"
#include "report/analyse.h"
#include "report/html.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using core::Status;

class RunCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app_ = &app;
    flags_.add_to(app, /*url_required=*/false, /*with_connections=*/true);
    flags_.add_rate_to(app);
    flags_.add_arrival_to(app);
    flags_.add_distribution_flags(app);
    app.add_option("--repeat", repeat_,
                   "Independent runs; figures become median (min-max) over them")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    target_.add_to(app);
    app.add_flag("--strict", strict_,
                 "Open loop (with -r): exit 3 when a run sent fewer than 99% of the requests its "
                 "schedule asked for within the measured phase (the achieved rate fell short of "
                 "the target)");
    app.add_flag("--timeline", timeline_,
                 "Print the per-second timeline: throughput, p50, p99 and errors second by "
                 "second (a deploy's burst of 502s shows there)");
    outputs_.add_to(app);
    app.add_option("--scenario", scenario_texts_,
                   fmt::format("Run several load tests at once, one per --scenario (repeatable), "
                               "each with its own target, load and report: {}. c: connections "
                               "(default 10), r: open-loop rate/s, t: threads (default 1), m: "
                               "method (default GET). No positional URL then; -d, -w, --timeout, "
                               "--grace, -H, the body and --repeat apply to every scenario",
                               engine::kScenarioForm))
        ->allow_extra_args(false);
    add_threshold_option(app, threshold_texts_);
    add_progress_flags(app, progress_flags_);
  }

  int run() override {
    outputs_.resolve(*app_, flags_.url);
    const bool open_loop = flags_.open_loop();
    if (Status s = LoadFlags::check_open_loop_only(*app_, open_loop, "-r RATE"); !s) {
      return report_failure(s);
    }
    if (strict_ && !open_loop && scenario_texts_.empty()) {
      return report_failure(Status::invalid_argument(
          "--strict: only in open loop (with -r RATE); it fails the run when the achieved rate "
          "falls short of the target, and a closed loop has no target rate"));
    }
    auto watched = target_.resolve();
    if (!watched) return report_failure(watched.status());
    auto thresholds = parse_thresholds(threshold_texts_);
    if (!thresholds) return report_failure(thresholds.status());
    const bool scenarios = !scenario_texts_.empty();
    if (scenarios && (!thresholds->empty() || !outputs_.html.empty() || !outputs_.hlog.empty() ||
                      target_.server_pid || target_.stack)) {
      return report_failure(Status::invalid_argument(fmt::format(
          "{}: not with --scenario; give a URL instead", !thresholds->empty()     ? "--threshold"
                                                         : !outputs_.html.empty() ? "--html"
                                                         : !outputs_.hlog.empty() ? "--hlog"
                                                         : target_.stack          ? "--stack"
                                                                         : "--server-pid")));
    }
    if (!scenarios && flags_.url.empty()) {
      return report_failure(Status::invalid_argument(
          "a target is required: give a URL, or one --scenario per target"));
    }
    engine::Plan plan;
    plan.repeats = repeat_;
    std::vector<std::string> urls;
    if (scenarios) {
      if (Status s = check_scenario_flags(); !s) return report_failure(s);
      auto base = flags_.to_options(/*with_url=*/false);
      if (!base) return report_failure(base.status());
      auto parsed = engine::parse_scenarios(scenario_texts_, *base);
      if (!parsed) return report_failure(parsed.status());
      plan.levels.emplace_back();
      for (engine::Scenario& sc : *parsed) {
        plan.scenario_names.push_back(sc.name);
        urls.push_back(sc.url);
        plan.levels[0].push_back(std::move(sc.options));
      }
    } else {
      auto options = flags_.to_options();
      if (!options) return report_failure(options.status());
      urls.push_back(flags_.url);
      plan.levels.push_back({std::move(options).value()});
    }
    Distributed group;  // under mpirun: this rank's part, rank 0 merges and writes
    if (Status s = group.join(flags_, outputs_); !s) return report_failure(s);
    if (scenarios && (group.active() || !flags_.part.empty())) {
      return report_failure(Status::invalid_argument(
          fmt::format("--scenario: not with {} yet; give one URL, whose load the parts share",
                      group.active() ? "mpirun" : "--part")));
    }
    ResultFiles files;
    if (Status s = group.prepare(flags_, plan, /*shared_target=*/true, core::wall_clock_s(), files);
        !s) {
      return fail_agreed(group, s);
    }
    if (!group.root()) progress_flags_.quiet = true;
    // Per-second intervals for --hlog, and for the JSON and HTML report's over-time chart.
    if (outputs_.per_second() || timeline_) {
      for (engine::LoadOptions& o : plan.levels[0]) o.interval = std::chrono::seconds(1);
    }

    HostObserver observer(std::move(watched->processes), std::move(watched->stack),
                          std::chrono::milliseconds(250));
    Progress progress(progress_flags_);
    engine::PlanControl control;
    control.interrupt = &install_interrupt_handler();
    if (!scenarios) control.observer = &observer;
    control.on_progress = progress.handler();
    control.on_run_start = [&](const engine::PlanPosition& p) {
      progress.begin_run(p.repeats > 1 ? fmt::format("run {}/{}", p.repeat + 1, p.repeats) : "run",
                         p.planned, p.after);
      files.hlog.set_tag(
          report::interval_log_tag(/*sweep=*/false, std::nullopt, 0, p.repeat, p.repeats));
    };
    files.connect(control);
    const std::string started_at = now_iso8601();
    engine::PlanResult result = group.run(plan, control);
    progress.finish();
    if (result.failed) return fail_agreed(group, *result.failed);

    const probes::HostContext host = probes::read_host_context(probes::FsReader());
    std::vector<std::vector<core::RunResult>>& runs = result.levels.at(0);  // [scenario][repeat]
    report::ScenariosDocument all;
    for (size_t s = 0; s < runs.size(); ++s) {
      report::LoadParams params =
          load_params(plan.levels[0][s], urls[s], static_cast<int>(runs[s].size()));
      if (timeline_) params.timeline = true;
      report::RunDocument doc =
          report::analyse_run(urls[s], started_at, std::move(params), runs[s], host);
      if (auto code = take_merged(group, doc, false, files); code) return *code;
      if (!scenarios) return finish(doc, runs[s], *thresholds, files);
      all.order.push_back(plan.scenario_names[s]);
      all.scenarios.emplace(plan.scenario_names[s], std::move(doc));
    }
    if (Status s = files.write(all, report::render_scenarios_text(all)); !s) {
      return report_failure(s);
    }
    bool missed_rate = false, unreachable = false;
    for (const auto& [name, doc] : all.scenarios) {
      missed_rate |= !kept_rate(doc, name);
      unreachable |= went_away(doc.level, "scenario " + name);
    }
    if (result.interrupted) return kExitInterrupted;
    if (unreachable) return kExitRunFailed;
    return missed_rate ? kExitThresholds : kExitOk;
  }

 private:
  CLI::App* app_ = nullptr;
  LoadFlags flags_;
  OutputFlags outputs_;
  int repeat_ = 1;
  TargetFlags target_;  // --server-pid, --stack
  bool strict_ = false;
  bool timeline_ = false;                     // --timeline
  std::vector<std::string> threshold_texts_;  // --threshold, on the printed (median) figures
  std::vector<std::string> scenario_texts_;   // --scenario
  ProgressFlags progress_flags_;              // --quiet, --no-color

  // The flags a scenario sets for itself may not also be given outside the scenarios.
  Status check_scenario_flags() const {
    if (!flags_.url.empty()) {
      return Status::invalid_argument(
          fmt::format("URL '{}' with --scenario: give each target as url= inside its scenario, "
                      "not as the positional URL; use --scenario {}",
                      flags_.url, engine::kScenarioForm));
    }
    for (const auto& [flag, key] : {std::pair{"-c/--connections", "c"},
                                    {"-t/--threads", "t"},
                                    {"-m/--method", "m"},
                                    {"-r/--rate", "r"},
                                    {"--arrival", "arrival"}}) {
      if (app_->count(std::string(flag).substr(0, std::string(flag).find('/'))) > 0) {
        return Status::invalid_argument(fmt::format(
            "{} with --scenario: set {}= inside each scenario instead; use --scenario {}", flag,
            key, engine::kScenarioForm));
      }
    }
    if (app_->count("--stages") > 0) {  // regression: the engine's own check spoke instead
      return Status::invalid_argument(
          "--stages with --scenario: not together yet (a scenario has a constant rate r=); run "
          "the staged load as its own knee run with a URL");
    }
    return Status::success();
  }

  // --strict: every open-loop repeat sent >= 99 % of its schedule; else says so on stderr.
  bool kept_rate(const report::RunDocument& doc, const std::string& scenario) const {
    if (!strict_) return true;
    const std::vector<std::string> missed = report::schedule_shortfalls(doc.level);
    for (const std::string& m : missed) {
      fmt::print(stderr, "knee: --strict: {}{}\n",
                 scenario.empty() ? "" : "scenario " + scenario + " ", m);
    }
    return missed.empty();
  }

  int finish(report::RunDocument& doc, const std::vector<core::RunResult>& runs,
             const std::vector<analysis::Threshold>& thresholds, ResultFiles& files) {
    const std::vector<report::ThresholdOutcome> outcomes =
        report::check_thresholds(thresholds, {doc.level}, /*name_levels=*/false);
    doc.thresholds = outcomes;
    if (Status s = files.write(doc, report::render_run_text(doc)); !s) return report_failure(s);
    if (runs.back().interrupted) return kExitInterrupted;
    if (went_away(doc.level, "")) return kExitRunFailed;
    const bool passed = print_threshold_check(outcomes);
    const bool kept = kept_rate(doc, "");
    return passed && kept ? kExitOk : kExitThresholds;
  }
};

}  // namespace

std::unique_ptr<Subcommand> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace knee::cli
