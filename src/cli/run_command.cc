// `knee run URL`: one load test, closed loop (-c) or open loop (-r), optionally repeated; a
// wrk-like summary or --json.
#include <fmt/core.h>

#include <fstream>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/interrupt.h"
#include "cli/load_flags.h"
#include "cli/progress.h"
#include "cli/scenario.h"
#include "cli/thresholds.h"
#include "probes/host_context.h"
#include "probes/use.h"
#include "report/html.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using core::Status;

class RunCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    flags_.add_to(app, /*url_required=*/false, /*with_connections=*/true);
    flags_.add_open_loop_to(app);
    app.add_option("--repeat", repeat_,
                   "Independent runs; figures become median (min-max) over them")
        ->capture_default_str();
    app.add_option("--server-pid", server_pid_,
                   "The server's process id, to report its CPU, threads and memory and name the "
                   "saturated resource");
    app.add_flag(
        "--strict", strict_,
        "Open loop: exit 3 when fewer than 99% of the scheduled requests were sent on time "
        "(the achieved rate fell short of the target)");
    app.add_option("--hlog", hlog_path_,
                   "Write per-second latency histograms to FILE in HdrHistogram's interval log "
                   "format (read back with knee report FILE)");
    app.add_flag("--json", json_, "Print the result as JSON on stdout (fields in docs/output.md)");
    app.add_option("--html", html_path_,
                   "Write a self-contained HTML report with charts to FILE (works offline)");
    add_scenario_option(app);
    add_threshold_option(app, threshold_texts_);
    add_progress_flags(app, progress_flags_);
  }

  int run() override {
    auto thresholds = parse_thresholds(threshold_texts_);
    if (!thresholds) return report_failure(thresholds.status());
    if (!scenario_texts_.empty() && !thresholds->empty()) {
      return report_failure(
          Status::invalid_argument("--threshold: not with --scenario; give a URL instead"));
    }
    if (!scenario_texts_.empty() && !html_path_.empty()) {
      return report_failure(
          Status::invalid_argument("--html: not with --scenario; give a URL instead"));
    }
    if (!scenario_texts_.empty()) return run_scenarios_and_print();
    if (flags_.url.empty()) {
      return report_failure(Status::invalid_argument(
          "a target is required: give a URL, or one --scenario per target"));
    }
    auto options = flags_.to_options();
    if (!options) return report_failure(options.status());
    std::ofstream hlog_check;  // a bad --hlog path is found now, not after the run
    if (Status s = open_output("--hlog", hlog_path_, hlog_check); !s) return report_failure(s);
    // Per-second intervals for --hlog, and for the JSON and HTML report's over-time chart.
    if (!hlog_path_.empty() || json_ || !html_path_.empty()) {
      options->interval = std::chrono::seconds(1);
    }
    if (repeat_ < 1 || repeat_ > 100) {
      return report_failure(Status::invalid_argument("--repeat: give a count from 1 to 100"));
    }
    std::ofstream html_file;
    if (Status s = open_output("--html", html_path_, html_file); !s) return report_failure(s);
    const std::atomic<bool>& interrupt = install_interrupt_handler();
    std::string started_at = now_iso8601();
    std::vector<core::RunResult> runs;
    Progress progress(progress_flags_);
    const core::Nanos planned = options->warmup + options->duration;
    for (int k = 0; k < repeat_; ++k) {
      probes::UseSampler sampler;
      std::optional<core::ResourceUse> use;
      engine::RunControl control;
      control.interrupt = &interrupt;
      control.on_measure_start = [&] { sampler.start(server_pid_); };
      control.on_measure_end = [&] { use = sampler.stop(); };
      control.on_progress = progress.handler();
      progress.begin_run(repeat_ > 1 ? fmt::format("run {}/{}", k + 1, repeat_) : "run", planned,
                         (repeat_ - k - 1) * planned);
      auto result = engine::run_load(*options, control);
      if (sampler.running()) use = sampler.stop();
      if (!result) {
        progress.finish();
        return report_failure(result.status());
      }
      result->use = use;
      runs.push_back(std::move(result).value());
      if (runs.back().interrupted) break;
    }
    progress.finish();
    report::LoadParams params = load_params(*options, flags_.url);
    params.repeats = static_cast<int>(runs.size());
    report::RunReport rep = report::analyse_run(flags_.url, started_at, params, std::move(runs),
                                                probes::read_host_context(probes::FsReader()));
    if (!hlog_path_.empty()) {
      std::vector<TaggedRun> tagged;
      for (size_t k = 0; k < rep.result.runs.size(); ++k) {
        tagged.push_back(
            {&rep.result.runs[k], rep.result.runs.size() > 1 ? fmt::format("r{}", k + 1) : ""});
      }
      if (Status s = write_hlog(hlog_path_, tagged); !s) return report_failure(s);
    }
    if (json_) {
      fmt::print("{}\n", report::run_to_json(rep).dump(2));
    } else {
      fmt::print("{}", report::render_run_text(rep));
    }
    if (!html_path_.empty()) {
      auto html = report::render_html(report::run_to_json(rep));
      if (!html) return report_failure(html.status());
      html_file << *html;
      html_file.close();
      if (!html_file) return report_failure(Status::io_error("--html: cannot write " + html_path_));
    }
    const core::RunResult& median = rep.result.median_run();
    if (rep.result.runs.back().interrupted) return 130;
    const bool thresholds_passed = check_thresholds(*thresholds, median);
    if (strict_ && median.open_loop()) {
      for (const core::RunResult& r : rep.result.runs) {
        if (!r.kept_schedule()) {
          fmt::print(stderr,
                     "knee: --strict: achieved {:.1f} req/s, below 99% of the {:.1f} req/s "
                     "scheduled\n",
                     r.achieved_rate_rps(), r.scheduled_rate_rps());
          return kExitThresholds;
        }
      }
    }
    return thresholds_passed ? kExitOk : kExitThresholds;
  }

 private:
  LoadFlags flags_;
  int repeat_ = 1;
  std::optional<int> server_pid_;
  bool json_ = false;
  std::string html_path_;
  std::string hlog_path_;
  bool strict_ = false;
  std::vector<std::string> threshold_texts_;  // --threshold, checked on the median run
  ProgressFlags progress_flags_;              // --quiet, --no-color

  // --scenario: several targets at once, each with its own load model and report (scenario.h).
  std::vector<std::string> scenario_texts_;

  void add_scenario_option(CLI::App& app) {
    app.add_option("--scenario", scenario_texts_,
                   fmt::format("Run several load tests at once, one per --scenario (repeatable), "
                               "each with its own target, load and report: {}. c: connections "
                               "(default 10), r: open-loop rate/s, t: threads (default 1), m: "
                               "method (default GET). No positional URL then; -d, -w, --timeout, "
                               "--grace, -H, the body and --repeat apply to every scenario",
                               kScenarioForm))
        ->allow_extra_args(false);
  }

  // Runs the scenarios together, --repeat times; prints "== scenario NAME ==" and its report for
  // each, or with --json one object {"scenarios": {NAME: <run JSON>}}. Exit codes as for one
  // run; --strict applies to every open-loop scenario.
  int run_scenarios_and_print() {
    auto scenarios = parse_scenarios(scenario_texts_, flags_);
    if (!scenarios) return report_failure(scenarios.status());
    if (repeat_ < 1 || repeat_ > 100) {
      return report_failure(Status::invalid_argument("--repeat: give a count from 1 to 100"));
    }
    engine::RunControl control;
    control.interrupt = &install_interrupt_handler();
    const std::string started_at = now_iso8601();
    std::vector<std::vector<core::RunResult>> runs(scenarios->size());  // [scenario][repeat]
    bool interrupted = false;
    for (int k = 0; k < repeat_ && !interrupted; ++k) {
      auto results = run_scenarios(*scenarios, control);
      if (!results) return report_failure(results.status());
      for (size_t i = 0; i < runs.size(); ++i) {
        interrupted = interrupted || (*results)[i].result.interrupted;
        runs[i].push_back(std::move((*results)[i].result));
      }
    }
    const probes::HostContext host = probes::read_host_context(probes::FsReader());
    nlohmann::json all = nlohmann::json::object();
    bool missed_rate = false;
    for (size_t i = 0; i < scenarios->size(); ++i) {
      const Scenario& sc = (*scenarios)[i];
      report::LoadParams params = load_params(sc.options, sc.url);
      params.repeats = static_cast<int>(runs[i].size());
      report::RunReport rep =
          report::analyse_run(sc.url, started_at, params, std::move(runs[i]), host);
      if (json_) {
        all[sc.name] = report::run_to_json(rep);
      } else {
        fmt::print("{}== scenario {} ==\n{}", i == 0 ? "" : "\n", sc.name,
                   report::render_run_text(rep));
      }
      for (const core::RunResult& r : rep.result.runs) {
        if (strict_ && r.open_loop() && !r.kept_schedule()) {
          fmt::print(stderr,
                     "knee: --strict: scenario {} achieved {:.1f} req/s, below 99% of the "
                     "target {:.1f}\n",
                     sc.name, r.achieved_rate_rps(), r.target_rate_rps);
          missed_rate = true;
          break;
        }
      }
    }
    if (json_) fmt::print("{}\n", nlohmann::json{{"scenarios", all}}.dump(2));
    if (interrupted) return 130;
    return missed_rate ? kExitThresholds : kExitOk;
  }
};

}  // namespace

std::unique_ptr<Subcommand> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace knee::cli
