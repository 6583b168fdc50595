// `knee sweep [URL]`: the main job. Runs closed-loop levels of concurrency against one target,
// prints the seed's table with X * mean R, marks the knee, checks Little's law and names the
// saturated resource of every level. Without a URL it measures the built-in lab server, started
// as a child process on its own CPU.
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <optional>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/interrupt.h"
#include "cli/lab_child.h"
#include "cli/load_flags.h"
#include "cli/progress.h"
#include "cli/thresholds.h"
#include "core/units.h"
#include "probes/host_context.h"
#include "probes/use.h"
#include "report/html.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using core::Status;

// The seed's tracking client: one tracking number per connection and request.
constexpr const char* kLabPath = "/tracking?no=G{conn}-{seq}";
constexpr int kMaxServerThreads = 1024;
constexpr const char* kDefaultLevels = "1,2,4,8,16,32,64";

class SweepCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    flags_.add_to(app, /*url_required=*/false, /*with_connections=*/false);
    app.add_option("--levels", levels_, "Concurrency levels, comma-separated, increasing")
        ->capture_default_str();
    app.add_option("--rate", rates_,
                   "Open-loop sweep instead: arrival rates in req/s, comma-separated, increasing "
                   "(e.g. 1000,2000,4000); latency from each request's intended send time");
    app.add_option("--arrival", flags_.arrival,
                   "With --rate: spacing of arrivals, uniform or poisson")
        ->capture_default_str();
    app.add_option("--seed", flags_.seed, "With --rate: seed of the Poisson arrivals")
        ->capture_default_str();
    app.add_option("-c,--connections", max_connections_,
                   "With --rate: the most connections each level's pool may open (default: "
                   "enough for the rate at 250 ms of latency)");
    app.add_option("--repeat", repeat_,
                   "Independent runs per level; figures become median (min-max)")
        ->capture_default_str();
    app.add_option("--json", json_path_, "Write the whole result as JSON to FILE ('-': stdout)");
    app.add_option("--html", html_path_,
                   "Write a self-contained HTML report with charts to FILE (works offline)");
    app.add_option("--hlog", hlog_path_,
                   "Write per-second latency histograms to FILE in HdrHistogram's interval log "
                   "format, tagged c<N> per level (c<N>-r<k> with repeats)");
    app.add_option("--server-pid", server_pid_,
                   "With a URL: the server's process id, to report its CPU, threads and memory");
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
        ->capture_default_str();
    add_threshold_option(app, threshold_texts_);
    add_progress_flags(app, progress_flags_);
  }

  int run() override {
    // Everything the user typed is checked before anything starts.
    const bool by_rate = !rates_.empty();
    if (by_rate && levels_ != kDefaultLevels) {
      return report_failure(Status::invalid_argument(
          "--levels and --rate: give concurrency levels or arrival rates, not both"));
    }
    if (!by_rate && max_connections_) {
      return report_failure(Status::invalid_argument(
          "-c/--connections: only with --rate (a closed-loop sweep's levels are its connections)"));
    }
    const char* list_flag = by_rate ? "--rate" : "--levels";
    const std::string& list = by_rate ? rates_ : levels_;
    auto levels = core::parse_positive_int_list(list, by_rate ? 10'000'000 : 1'000'000);
    if (!levels) {
      return report_failure(
          Status::invalid_argument(fmt::format("{}: {}", list_flag, levels.status().message())));
    }
    for (size_t i = 1; i < levels->size(); ++i) {
      if ((*levels)[i] <= (*levels)[i - 1]) {
        return report_failure(Status::invalid_argument(
            fmt::format("{}: '{}' must be strictly increasing, like {}", list_flag, list,
                        by_rate ? "1000,2000,4000" : "1,2,4,8")));
      }
    }
    if (repeat_ < 1 || repeat_ > 100) {
      return report_failure(Status::invalid_argument("--repeat: give a count from 1 to 100"));
    }
    auto thresholds = parse_thresholds(threshold_texts_);
    if (!thresholds) return report_failure(thresholds.status());
    auto sample_every = core::parse_duration(sample_every_);
    if (!sample_every || *sample_every < std::chrono::milliseconds(10)) {
      return report_failure(
          Status::invalid_argument("--sample-every: give a duration of at least 10ms, e.g. 250ms"));
    }
    const bool builtin = flags_.url.empty();
    if (builtin) {
      for (auto [flag, value] :
           {std::pair{"--server-wait", &server_wait_}, std::pair{"--server-cpu", &server_cpu_}}) {
        if (auto d = core::parse_duration(*value); !d) {
          return report_failure(
              Status::invalid_argument(fmt::format("{}: {}", flag, d.status().message())));
        }
      }
      if (server_threads_ < 1 || server_threads_ > kMaxServerThreads) {
        return report_failure(Status::invalid_argument(
            fmt::format("--server-threads: give a count from 1 to {}", kMaxServerThreads)));
      }
      if (server_pid_) {
        return report_failure(Status::invalid_argument(
            "--server-pid: only with a URL; without one knee knows its own server"));
      }
    } else if (server_wait_ != "3ms" || server_cpu_ != "0.2ms" || server_threads_ != 1) {
      return report_failure(Status::invalid_argument(
          "--server-wait/--server-cpu/--server-threads: only without a URL (they configure the "
          "built-in lab server)"));
    }
    // Validate the load flags with the largest level as the connection count.
    flags_.connections =
        by_rate ? max_connections_.value_or(engine::LoadOptions::default_open_loop_connections(
                      static_cast<double>(levels->back())))
                : static_cast<int>(levels->back());
    if (builtin) flags_.url = std::string("http://127.0.0.1:1") + kLabPath;
    auto checked = flags_.to_options();
    if (!checked) return report_failure(checked.status());
    std::ofstream json_file;  // "-": stdout
    if (Status s = open_output("--json", json_path_ == "-" ? "" : json_path_, json_file); !s) {
      return report_failure(s);
    }
    std::ofstream html_file;
    if (Status s = open_output("--html", html_path_, html_file); !s) return report_failure(s);
    std::ofstream hlog_check;  // a bad --hlog path is found now, not after the levels
    if (Status s = open_output("--hlog", hlog_path_, hlog_check); !s) return report_failure(s);

    std::optional<LabChild> lab;
    std::string target;
    std::optional<int> server_pid = server_pid_;
    if (builtin) {
      std::vector<int> cpus = allowed_cpus();
      int server_cpu = cpus.size() >= 2 ? cpus.front() : -1;
      auto child = LabChild::start({"--wait", server_wait_, "--cpu", server_cpu_, "--threads",
                                    std::to_string(server_threads_)},
                                   server_cpu);
      if (!child) return report_failure(child.status());
      lab.emplace(std::move(child).value());
      server_pid = lab->pid();
      std::string pinning = "server and client share the CPUs (fewer than 2 available)";
      if (server_cpu >= 0) {
        std::vector<int> client(cpus.begin() + 1, cpus.end());
        if (Status s = pin_to(client); !s) return report_failure(s);
        pinning = fmt::format("server pinned to CPU {}, client to CPU {}", server_cpu,
                              client.size() == 1 ? std::to_string(client[0]) : "the others");
      }
      flags_.url = fmt::format("http://127.0.0.1:{}{}", lab->port(), kLabPath);
      target = fmt::format(
          "built-in lab server (knee serve, pid {}): {} event-loop thread{}, each tracking "
          "request waits {} on a timer then burns {} of CPU; {}",
          lab->pid(), server_threads_, server_threads_ == 1 ? "" : "s", server_wait_, server_cpu_,
          pinning);
    } else {
      target = flags_.url;
    }
    auto options = flags_.to_options();
    if (!options) return report_failure(options.status());
    // Per-second intervals for --hlog, and for the JSON and HTML report's over-time chart.
    if (!hlog_path_.empty() || !json_path_.empty() || !html_path_.empty()) {
      options->interval = std::chrono::seconds(1);
    }

    const std::atomic<bool>& interrupt = install_interrupt_handler();
    std::string started_at = now_iso8601();
    std::vector<std::vector<core::RunResult>> results;
    std::vector<std::string> warnings;
    bool interrupted = false;
    std::optional<Status> failed;
    Progress progress(progress_flags_);
    progress.print_line(live_sweep_header(by_rate));
    const core::Nanos planned = options->warmup + options->duration;
    const int64_t total_runs = static_cast<int64_t>(levels->size()) * repeat_;
    int64_t runs_begun = 0;
    for (int64_t level : *levels) {
      std::vector<core::RunResult> repeats;
      for (int k = 0; k < repeat_ && !interrupted && !failed; ++k) {
        engine::LoadOptions o = *options;
        if (by_rate) {
          o.rate_rps = static_cast<double>(level);
          o.connections = max_connections_.value_or(
              engine::LoadOptions::default_open_loop_connections(static_cast<double>(level)));
        } else {
          o.connections = static_cast<int>(level);
        }
        o.threads = std::min(options->threads, o.connections);
        probes::UseSampler sampler(
            probes::FsReader("/"),
            std::chrono::duration_cast<std::chrono::milliseconds>(*sample_every));
        std::optional<core::ResourceUse> use;
        engine::RunControl control;
        control.interrupt = &interrupt;
        control.on_measure_start = [&] { sampler.start(server_pid); };
        control.on_measure_end = [&] { use = sampler.stop(); };
        control.on_progress = progress.handler();
        ++runs_begun;
        progress.begin_run(
            fmt::format("level {}/{} {}{}{}", results.size() + 1, levels->size(),
                        by_rate ? "rate=" : "c=", level,
                        repeat_ > 1 ? fmt::format(" run {}/{}", k + 1, repeat_) : ""),
            planned, (total_runs - runs_begun) * planned);
        auto r = engine::run_load(o, control);
        if (sampler.running()) use = sampler.stop();
        if (!r) {
          failed = r.status();
          break;
        }
        r->use = use;
        if (r->interrupted) {
          interrupted = true;
          break;
        }
        repeats.push_back(std::move(r).value());
      }
      if (interrupted || failed) {
        warnings.push_back(fmt::format(
            "{} during {} {}: that level is left out{}", interrupted ? "interrupted" : "failed",
            by_rate ? "rate" : "concurrency", level, failed ? ": " + failed->message() : ""));
        break;
      }
      progress.print_line(live_sweep_row(repeats, by_rate));
      results.push_back(std::move(repeats));
    }
    progress.finish();
    if (lab) lab->stop();
    if (failed && results.empty()) return report_failure(*failed);

    report::LoadParams params = load_params(*options, flags_.url);
    params.repeats = repeat_;
    report::SweepReport rep = report::analyse_sweep(target, started_at, params, std::move(results),
                                                    probes::read_host_context(probes::FsReader()));
    rep.warnings.insert(rep.warnings.end(), warnings.begin(), warnings.end());
    if (!hlog_path_.empty()) {
      std::vector<TaggedRun> tagged;
      for (const report::Repeated& level : rep.levels) {
        for (size_t k = 0; k < level.runs.size(); ++k) {
          const core::RunResult& run = level.runs[k];
          std::string tag = run.open_loop() ? fmt::format("rate{:.0f}", run.target_rate_rps)
                                            : fmt::format("c{}", run.concurrency);
          if (level.runs.size() > 1) tag += fmt::format("-r{}", k + 1);
          tagged.push_back({&level.runs[k], tag});
        }
      }
      if (Status s = write_hlog(hlog_path_, tagged); !s) return report_failure(s);
    }
    if (json_path_ != "-") fmt::print("{}", report::render_sweep_text(rep));
    if (!json_path_.empty()) {
      std::string text = report::sweep_to_json(rep).dump(2) + "\n";
      if (json_path_ == "-") {
        fmt::print("{}", text);
      } else {
        json_file << text;
        json_file.close();
        if (!json_file)
          return report_failure(Status::io_error("--json: cannot write " + json_path_));
      }
    }
    if (!html_path_.empty()) {
      auto html = report::render_html(report::sweep_to_json(rep));
      if (!html) return report_failure(html.status());
      html_file << *html;
      html_file.close();
      if (!html_file) return report_failure(Status::io_error("--html: cannot write " + html_path_));
    }
    if (failed) {
      fmt::print(stderr, "knee: {}\n", failed->message());
      return kExitRunFailed;
    }
    if (interrupted) return 130;
    return check_thresholds(*thresholds, rep.levels) ? kExitOk : kExitThresholds;
  }

 private:
  LoadFlags flags_;
  std::string levels_ = kDefaultLevels;
  std::string rates_;
  std::optional<int> max_connections_;
  int repeat_ = 1;
  std::string json_path_;
  std::string html_path_;
  std::string hlog_path_;
  std::optional<int> server_pid_;
  std::string sample_every_ = "250ms";
  std::string server_wait_ = "3ms";
  std::string server_cpu_ = "0.2ms";
  int server_threads_ = 1;
  std::vector<std::string> threshold_texts_;  // --threshold, checked on every level's median run
  ProgressFlags progress_flags_;              // --quiet, --no-color
};

}  // namespace

std::unique_ptr<Subcommand> make_sweep_command() { return std::make_unique<SweepCommand>(); }

}  // namespace knee::cli
