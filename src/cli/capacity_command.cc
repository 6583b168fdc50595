// `knee capacity URL --slo 'p99<50ms'`: the highest open-loop rate (req/s) whose SLOs hold with no
// errors and the client keeping up (achieved >= 99 % of the target), by the bracket-then-bisect
// search of analysis/capacity.h, each step one or more runs at its rate (harness/capacity.h).
// Prints one table row per step as it completes, then the answer, its bracket and whose limit
// bounded it; --json FILE writes the whole result (--json or --json -: on stdout instead, the rows
// then on stderr).
// Exit: 0 a passing rate was found; 1 even the start rate fails, or the target is unreachable;
// 2 bad input; 130 interrupted (Ctrl-C), after printing what was measured.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/load_flags.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "harness/capacity.h"
#include "net/write_path.h"
#include "report/capacity.h"

namespace knee::cli {
namespace {

using core::Status;

class CapacityCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app_ = &app;
    // The URL is checked in run(): `--json URL` gives --json no file and the URL.
    flags_.add_to(app, /*url_required=*/false, /*with_connections=*/true);
    flags_.add_arrival_to(app, "");
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
                   "Stop bisecting when the bracket is within this percent of its lower bound "
                   "(5 or 5%)")
        ->capture_default_str()
        // Regression (a new user's trial): '10%', as the docs write it, was not a number.
        ->transform(
            [](std::string v) {
              if (!v.empty() && v.back() == '%') v.pop_back();
              return v;
            },
            "", "percent");
    app.add_option("--repeat", repeat_,
                   "Runs per step; a step passes only if every run passes (conservative)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    app.add_option("--confirm", confirm_,
                   "Runs re-measuring the answer after the search; while any fails, the answer "
                   "steps down by --precision and is confirmed again (0: no confirmation)")
        ->capture_default_str()
        ->check(CLI::Range(0, 100));
    app.add_option("--json", json_,
                   "Write the whole result as JSON (fields in docs/output.md) to FILE, whole once "
                   "the search ends; alone or with '-': to stdout instead, the table's rows then "
                   "on stderr")
        ->expected(0, 1)
        ->type_name("FILE");
    add_progress_flags(app, progress_flags_);
  }

  int run() override {
    if (app_->count("--json") > 0) {
      // Regression (a new user's trial): --json took no file, as run's and sweep's do.
      if (json_.find("://") != std::string::npos && flags_.url.empty())
        std::swap(json_, flags_.url);
      if (json_.empty()) json_ = "-";
    }
    if (flags_.url.empty()) {
      return report_failure(Status::invalid_argument(
          "a target is required: knee capacity URL --slo 'p99<50ms' (see knee capacity --help)"));
    }
    analysis::CapacityOptions copts;
    for (const std::string& text : slo_texts_) {
      auto t = analysis::parse_threshold(text);
      if (!t) return report_failure(t.status().with_context("--slo"));
      if (Status s = analysis::check_capacity_slo(*t); !s) {
        return report_failure(s.with_context("--slo"));
      }
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
    copts.start_rate_rps = start_rate_;
    copts.max_rate_rps = max_rate_;
    copts.precision = precision_pct_ / 100;
    copts.repeats = repeat_;
    copts.confirm_repeats = confirm_;
    // Every step is an open loop: the rate is set per step, the pool's cap by -c or the engine.
    flags_.rate = start_rate_;
    flags_.rate_given = true;
    auto base = flags_.to_options();
    if (!base) return report_failure(base.status());
    // Regression (a trial): a kernel without io_uring failed the first step, after the header.
    if (Status s = net::WritePath::check(base->io); !s) return report_failure(s);
    FileOrStdout json_file;  // opened before the search, so a bad path costs no measurement
    if (Status s = json_file.open("--json", json_, flags_.input_files()); !s) {
      return report_failure(s);
    }

    const std::atomic<bool>& interrupt = install_interrupt_handler();
    engine::RunControl control;
    control.interrupt = &interrupt;
    Progress progress(progress_flags_);  // live line on stderr; cleared before each row
    control.on_progress = progress.handler();
    int steps_done = 0;
    analysis::CapacityMeasure measure =
        harness::capacity_measure(*base, control, [&](double rate, int repeat) {
          progress.begin_run(fmt::format("step {} {}/s run {}", steps_done + 1,
                                         report::rate_text(rate), repeat + 1),
                             base->warmup + base->duration, core::Nanos(0));
        });

    report::CapacityParams params{start_rate_,
                                  max_rate_,
                                  precision_pct_,
                                  repeat_,
                                  confirm_,
                                  std::chrono::duration<double>(base->duration).count(),
                                  std::chrono::duration<double>(base->warmup).count(),
                                  std::chrono::duration<double>(base->timeout).count(),
                                  report::PoolCap{base->max_connections},
                                  base->io != net::IoPath::kEpoll
                                      ? std::optional<std::string>(net::io_path_name(base->io))
                                      : std::nullopt};
    report::CapacityDocument header = report::capacity_document({}, flags_.url, slo_texts_, params);
    std::FILE* rows = json_ == "-" ? stderr : stdout;
    fmt::print(rows, "{}", report::capacity_header(header));
    std::fflush(rows);
    auto found = analysis::find_capacity(copts, measure, [&](const analysis::CapacityStep& st) {
      progress.clear();
      ++steps_done;
      fmt::print(rows, "{}", report::capacity_row(report::capacity_step(st)));
      std::fflush(rows);
    });
    progress.finish();
    if (!found) return report_failure(found.status());
    const report::CapacityDocument doc =
        report::capacity_document(*found, flags_.url, slo_texts_, params);
    if (json_file.wanted()) {
      if (Status s = json_file.write(json_text(doc)); !s) return report_failure(s);
    }
    if (doc.interrupted) {
      fmt::print(
          stderr, "knee: capacity: interrupted; so far bracket [{}, {}]\n",
          doc.capacity_rps ? report::rate_text(*doc.capacity_rps) : "none",
          doc.bracket.lowest_fail_rps ? report::rate_text(*doc.bracket.lowest_fail_rps) : "none");
      return kExitInterrupted;
    }
    if (!doc.capacity_rps) {
      std::string slos;
      for (const std::string& t : slo_texts_) slos += (slos.empty() ? "" : " and ") + t;
      // Regression (a new user's trial): a URL that answers 404 to every request was told to
      // try a lower --start-rate.
      const bool all_failed =
          !doc.steps.empty() && !doc.steps.front().repeats.empty() &&
          std::all_of(doc.steps.front().repeats.begin(), doc.steps.front().repeats.end(),
                      [](const auto& r) { return r.sent > 0 && r.errors >= r.sent; });
      fmt::print(stderr,
                 "knee: capacity: no passing rate: even the start rate {} req/s fails {}{}\n",
                 report::rate_text(start_rate_), slos,
                 all_failed ? "; every request there failed (see its errors: check the URL and "
                              "the server)"
                            : " with no errors (try a lower --start-rate)");
      return kExitRunFailed;
    }
    fmt::print(rows, "{}", report::capacity_conclusion(doc));
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
  CLI::App* app_ = nullptr;
  std::string json_;              // --json: "" not asked, "-" stdout, else a file
  ProgressFlags progress_flags_;  // --quiet, --no-color
};

}  // namespace

std::unique_ptr<Subcommand> make_capacity_command() { return std::make_unique<CapacityCommand>(); }

}  // namespace knee::cli
