// `knee sweep [URL]`: the main job. Runs closed-loop levels of concurrency (or open-loop arrival
// rates) against one target, prints the seed's table with X * mean R, marks the knee, checks
// Little's law and names the saturated resource of every level. Without a URL it measures the
// built-in lab server, started as a child process on its own CPU; with --exec, an external
// benchmark (cli/exec_sweep.h).
#include <fmt/core.h>

#include "cli/command.h"
#include "cli/distributed.h"
#include "cli/exec_sweep.h"
#include "cli/interrupt.h"
#include "cli/load_flags.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/thresholds.h"
#include "core/clock.h"
#include "core/units.h"
#include "lab/server_process.h"
#include "probes/host_context.h"
#include "report/analyse.h"
#include "report/html.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using core::Status;

class SweepCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app_ = &app;
    flags_.add_to(app, /*url_required=*/false, /*with_connections=*/false);
    app.add_option("--levels", levels_, "Concurrency levels, comma-separated, increasing")
        ->capture_default_str();
    app.add_option("--rate", rates_,
                   "Open-loop sweep instead: arrival rates in req/s, comma-separated, increasing "
                   "(e.g. 1000,2000,4000); latency from each request's intended send time");
    flags_.add_arrival_to(app, "With --rate: ");
    flags_.add_distribution_flags(app);
    app.add_option("-c,--connections", max_connections_,
                   "With --rate: the most connections each level's pool may open (default: "
                   "enough for the rate at 250 ms of latency)");
    app.add_option("--repeat", repeat_,
                   "Independent runs per level; figures become median (min-max)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    outputs_.add_to(app);
    target_.add_to(app);
    app.add_option("--sample-every", sample_every_,
                   "How often the host's resources are sampled during each level")
        ->capture_default_str();
    app.add_option("--server-wait", server_wait_,
                   "Built-in server (no URL): wait per tracking request, on a timer")
        ->capture_default_str();
    app.add_option("--server-cpu", server_cpu_,
                   "Built-in server (no URL): CPU burnt per tracking request")
        ->capture_default_str();
    app.add_option("--server-threads", server_threads_,
                   "Built-in server (no URL): event-loop threads")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    app.add_flag("--server-tls", server_tls_,
                 "Built-in server (no URL): serve over TLS (knee serve --tls, a self-signed "
                 "certificate the client does not verify)");
    add_threshold_option(app, threshold_texts_);
    add_progress_flags(app, progress_flags_);
    exec_.add_to(app);
  }

  int run() override {
    // Everything the user typed is checked before anything starts.
    outputs_.resolve(*app_, flags_.url);
    if (exec_.given(*app_)) {
      return run_exec_sweep(
          exec_, {app_, levels_, repeat_, app_->count("--timeout") > 0 ? flags_.timeout : "",
                  sample_every_, &outputs_, &target_, &progress_flags_});
    }
    if (Status s = ExecSweepFlags::check_unused(*app_); !s) return report_failure(s);
    const bool by_rate = !rates_.empty();
    if (Status s = LoadFlags::check_open_loop_only(*app_, by_rate, "--rate RATES"); !s) {
      return report_failure(s);
    }
    if (by_rate && app_->count("--levels") > 0) {
      return report_failure(Status::invalid_argument(
          "--levels and --rate: give concurrency levels or arrival rates, not both"));
    }
    if (!by_rate && max_connections_) {
      return report_failure(Status::invalid_field(
          "connections", "only with --rate (a closed-loop sweep's levels are its connections)"));
    }
    auto levels = core::parse_increasing_int_list(by_rate ? rates_ : levels_,
                                                  by_rate ? 10'000'000 : 1'000'000);
    if (!levels) return report_failure(levels.status().with_field(by_rate ? "rates" : "levels"));
    auto thresholds = parse_thresholds(threshold_texts_);
    if (!thresholds) return report_failure(thresholds.status());
    auto sample_every = core::parse_duration(sample_every_);
    if (!sample_every || *sample_every < std::chrono::milliseconds(10)) {
      return report_failure(
          Status::invalid_argument("--sample-every: give a duration of at least 10ms, e.g. 250ms"));
    }
    const bool builtin = flags_.url.empty();
    if (Status s = check_server_flags(builtin); !s) return report_failure(s);
    auto watched = target_.resolve();
    if (!watched) return report_failure(watched.status());
    if (builtin) flags_.url = lab::builtin_url(server_tls_, 1);  // the port once it has one
    auto plan = flags_.to_sweep_plan(*levels, by_rate, max_connections_, repeat_);
    if (!plan) return report_failure(plan.status());
    Distributed group;  // under mpirun: this rank's part, rank 0 merges and writes
    if (Status s = group.join(flags_, outputs_); !s) return report_failure(s);
    ResultFiles files;
    if (Status s =
            group.prepare(flags_, *plan, /*shared_target=*/!builtin, core::wall_clock_s(), files);
        !s) {
      return fail_agreed(group, s);
    }

    std::optional<lab::ServerProcess> lab;
    std::string target = flags_.url;
    if (builtin) {
      auto started =
          lab::start_builtin_server(server_wait_, server_cpu_, server_threads_, server_tls_);
      if (!started) return report_failure(started.status());
      lab.emplace(std::move(started->process));
      target = started->description;
      watched->processes = probes::WatchedProcesses::server_only(lab->pid());
      flags_.url = started->url;
      // Its own child's certificate, self-signed: knee knows whom it talks to.
      engine::aim_plan(*plan, *http::parse_url(flags_.url), /*verify_tls=*/false);
    }
    // Per-second intervals for --hlog, and for the JSON and HTML report's over-time chart.
    if (outputs_.per_second()) {
      for (auto& level : plan->levels) level[0].interval = std::chrono::seconds(1);
    }

    HostObserver observer(std::move(watched->processes), std::move(watched->stack),
                          std::chrono::duration_cast<std::chrono::milliseconds>(*sample_every));
    if (!group.root()) progress_flags_.quiet = true;
    Progress progress(progress_flags_);
    report::LoadParams params = load_params(plan->levels[0][0], flags_.url, repeat_);
    params.threads = flags_.threads;  // as asked; a level runs min(threads, N) of them
    progress.print_lines(report::sweep_heading(params, target, plan->levels.size(), by_rate));
    progress.print_line(report::live_sweep_header(by_rate));
    engine::PlanControl control;
    control.interrupt = &install_interrupt_handler();
    control.observer = &observer;
    control.on_progress = progress.handler();
    control.on_run_start = [&](const engine::PlanPosition& p) {
      progress.begin_run(
          fmt::format("level {}/{} {}{}{}", p.level + 1, p.levels,
                      by_rate ? "rate=" : "c=", (*levels)[p.level],
                      p.repeats > 1 ? fmt::format(" run {}/{}", p.repeat + 1, p.repeats) : ""),
          p.planned, p.after);
      const engine::LoadOptions& o = plan->levels[p.level][0];
      files.hlog.set_tag(
          report::interval_log_tag(/*sweep=*/true, o.rate_rps, o.connections, p.repeat, p.repeats));
    };
    files.connect(control);
    control.on_level_done = [&](size_t, const std::vector<std::vector<core::RunResult>>& r) {
      progress.print_line(report::live_sweep_row(r[0], by_rate));
    };
    const std::string started_at = now_iso8601();
    engine::PlanResult result = group.run(*plan, control);
    progress.finish();
    if (lab) lab->stop();
    if (result.failed && result.levels.empty()) return fail_agreed(group, *result.failed);
    std::vector<std::vector<core::RunResult>> runs;  // [level][repeat]
    for (auto& level : result.levels) runs.push_back(std::move(level[0]));
    report::SweepDocument doc = report::analyse_sweep(
        target, started_at, std::move(params), runs, probes::read_host_context(probes::FsReader()));
    if (auto code = take_merged(group, doc, result.failed.has_value(), files); code) return *code;
    if (result.failed || result.interrupted) {
      // In the table's units: a closed level's N is its connections x the streams or pipeline.
      const int64_t level = (*levels)[runs.size()] * (by_rate ? 1 : flags_.per_connection());
      doc.warnings.push_back(fmt::format("{} during {} {}: that level is left out{}",
                                         result.interrupted ? "interrupted" : "failed",
                                         by_rate ? "rate" : "concurrency", level,
                                         result.failed ? ": " + failure_text(*result.failed) : ""));
    }
    const std::vector<report::ThresholdOutcome> outcomes =
        report::check_thresholds(*thresholds, doc.levels, /*name_levels=*/true);
    doc.thresholds = outcomes;
    if (Status s = files.write(doc, report::render_sweep_text(doc)); !s) return report_failure(s);
    if (result.failed) {
      fmt::print(stderr, "knee: {}\n", failure_text(*result.failed));
      return kExitRunFailed;
    }
    if (result.interrupted) return kExitInterrupted;
    if (went_away(doc.levels)) return kExitRunFailed;
    return print_threshold_check(outcomes) ? kExitOk : kExitThresholds;
  }

 private:
  CLI::App* app_ = nullptr;
  LoadFlags flags_;
  OutputFlags outputs_;
  std::string levels_ = "1,2,4,8,16,32,64";  // powers of two up to 64
  std::string rates_;
  std::optional<int> max_connections_;
  int repeat_ = 1;
  TargetFlags target_;  // --server-pid, --stack
  std::string sample_every_ = "250ms";
  std::string server_wait_ = "3ms";
  std::string server_cpu_ = "0.2ms";
  int server_threads_ = 1;
  bool server_tls_ = false;
  std::vector<std::string> threshold_texts_;  // --threshold, on each level's printed figures
  ProgressFlags progress_flags_;              // --quiet, --no-color
  ExecSweepFlags exec_;                       // --exec: an external benchmark instead

  // The built-in server's flags only without a URL, --server-pid only with one.
  Status check_server_flags(bool builtin) const {
    if (!builtin) {
      if (app_->count("--server-wait") + app_->count("--server-cpu") +
              app_->count("--server-threads") + app_->count("--server-tls") >
          0) {
        return Status::invalid_argument(
            "--server-wait/--server-cpu/--server-threads/--server-tls: only without a URL (they "
            "configure the built-in lab server)");
      }
      return Status::success();
    }
    if (flags_.h2 && !server_tls_) {
      return Status::invalid_argument(
          "--h2: the built-in lab server speaks HTTP/2 over TLS with --server-tls; add it, or use "
          "--h2c for HTTP/2 over cleartext");
    }
    for (auto [flag, value] :
         {std::pair{"--server-wait", &server_wait_}, std::pair{"--server-cpu", &server_cpu_}}) {
      if (auto d = core::parse_duration(*value); !d) return d.status().with_context(flag);
    }
    if (target_.server_pid || target_.stack) {
      return Status::invalid_argument(
          fmt::format("{}: only with a URL; without one knee knows its own server",
                      target_.stack ? "--stack" : "--server-pid"));
    }
    return Status::success();
  }
};

}  // namespace

std::unique_ptr<Subcommand> make_sweep_command() { return std::make_unique<SweepCommand>(); }

}  // namespace knee::cli
