// `knee model sim`: the Traffic Lab page (report/sim.h). A model, so it sits with the queueing
// calculator, not under `knee lab`, whose commands start real servers.
#include "cli/model_sim.h"

#include <fmt/core.h>

#include <cmath>
#include <tuple>
#include <utility>

#include "cli/command.h"
#include "cli/output.h"
#include "core/units.h"
#include "report/queueing.h"

namespace knee::cli {

using core::Result;
using core::Status;

void ModelSimFlags::add_to(CLI::App& model) {
  app_ = model.add_subcommand(
      "sim",
      "The Traffic Lab: write one offline HTML page with an interactive discrete-event "
      "simulation (a single server, a blocking handler, replicas behind a balancer, a cache in "
      "front of a store) and the load on a slider; with --from, calibrated by a measured sweep "
      "whose points it draws over the simulated curve");
  app_->add_option("-o,--output", output_, "The page to write (HTML), e.g. sim.html")
      ->required()
      ->type_name("FILE");
  app_->add_option("--from", from_,
                   "Calibrate from a knee sweep JSON: service time = workers / the largest "
                   "throughput, delay = the lowest level's mean latency - service time, the "
                   "measured latency shape; its levels drawn as points")
      ->type_name("FILE");
  app_->add_option("--topology", settings_.topology, "Starting topology (the page can change it)")
      ->check(CLI::IsMember({"single", "blocking", "replicas", "cache"}))
      ->capture_default_str();
  app_->add_option("--loop", settings_.loop,
                   "open: the load is an arrival rate; closed: a number of clients")
      ->check(CLI::IsMember({"open", "closed"}))
      ->capture_default_str();
  app_->add_option("--dist", settings_.dist, "Service times: exp (exponential) or det (fixed)")
      ->check(CLI::IsMember({"exp", "det"}))
      ->capture_default_str();
  app_->add_option("--workers", workers_, "Workers per server (1: an event loop)")
      ->check(CLI::Range(1, 4096));
  app_->add_option("--service-time", service_time_,
                   "Mean service time per request, a duration like 5ms (default 5ms)");
  app_->add_option("--delay", delay_,
                   "Network and client time per request, not queued, a duration (default 0)");
  app_->add_option("--rate", rate_rps_,
                   "Starting arrival rate in req/s (open loop; default 70 % of saturation)");
  app_->add_option("-c,--concurrency", concurrency_, "Starting clients (closed loop)")
      ->check(CLI::Range(1, 100000));
  app_->add_option("--replicas", settings_.replicas, "Replicas (topology replicas)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app_->add_option("--requests", settings_.requests, "Simulated requests per move of the slider")
      ->check(CLI::Range(1000, 1'000'000))
      ->capture_default_str();
  app_->add_option("--seed", settings_.seed, "Seed of the simulation's random numbers")
      ->capture_default_str();
  app_->footer(
      "Checked against theory by tests/report/sim_theory_test.js: M/M/1 and M/M/c mean and p99 "
      "within 3 %, D/D/c exact, Little's law within 1 %, closed loops against mean value "
      "analysis.");
}

int ModelSimFlags::run() {
  report::SimSettings s = settings_;
  std::optional<report::SimCalibration> calibration;
  if (output_.empty()) {
    return report_failure(Status::invalid_argument(
        "-o: give a file path for the page, e.g. -o sim.html, or - for stdout"));
  }
  // The output first, so that a bad path costs nothing (and never the --from file itself).
  std::vector<std::string> inputs;
  if (from_) inputs.push_back(*from_);
  FileOrStdout out;
  if (Status st = out.open("-o", output_, inputs); !st) return report_failure(st);
  if (from_) {
    for (const auto& [given, flag] : {std::pair{service_time_.has_value(), "--service-time"},
                                      std::pair{delay_.has_value(), "--delay"}}) {
      if (given) {
        return report_failure(Status::invalid_argument(fmt::format(
            "{} and --from both set it: --from takes it from the sweep; give one", flag)));
      }
    }
    Result<std::string> text = read_text_file("--from", *from_);
    if (!text) return report_failure(text.status());
    auto sweep =
        report::read_sweep(*from_, *text, "model sim --from", "a sweep (knee sweep --json FILE)");
    if (!sweep) return report_failure(sweep.status());
    auto c = report::calibrate_sim(*sweep, *from_, workers_.value_or(1));
    if (!c) return report_failure(c.status());
    calibration = std::move(*c);
    s = report::calibrated(s, *calibration);
    // What the user named wins over what the sweep suggests.
    if (app_->count("--dist") > 0) s.dist = settings_.dist;
    if (app_->count("--loop") > 0) s.loop = settings_.loop;
    if (app_->count("--topology") > 0) s.topology = settings_.topology;
  }
  // Flags that would do nothing are refused, not ignored.
  const std::pair<bool, const char*> unused[] = {
      {rate_rps_ && s.loop == "closed",
       "--rate: only in open loop (the load is then a rate); give -c N"},
      {concurrency_ && s.loop == "open",
       "-c/--concurrency: only in closed loop (--loop closed); give --rate REQ_PER_S"},
      {app_->count("--replicas") > 0 && s.topology != "replicas",
       "--replicas: only with --topology replicas"},
      {workers_ && s.topology == "blocking",
       "--workers: not with --topology blocking (one event loop, W = 1)"}};
  for (const auto& [refused, message] : unused) {
    if (refused) return report_failure(Status::invalid_argument(message));
  }
  if (workers_) s.workers = *workers_;
  for (const auto& [text, flag, field] :
       {std::tuple{&service_time_, "--service-time", &s.service_ms},
        std::tuple{&delay_, "--delay", &s.delay_ms}}) {
    if (!*text) continue;
    Result<core::Nanos> d = core::parse_duration(**text);
    if (!d) return report_failure(d.status().with_context(flag));
    if (d->count() <= 0 && field == &s.service_ms) {
      return report_failure(
          Status::invalid_argument("--service-time: give a duration above 0, e.g. 5ms or 250us"));
    }
    *field = static_cast<double>(d->count()) / 1e6;
  }
  if (rate_rps_) {
    if (!(std::isfinite(*rate_rps_) && *rate_rps_ > 0)) {
      return report_failure(
          Status::invalid_argument("--rate: give the arrival rate in req/s, above 0, e.g. 150"));
    }
    s.rate_rps = *rate_rps_;
  }
  if (concurrency_) s.concurrency = *concurrency_;
  // Written whole (a temporary file renamed into place) or not at all.
  if (Status st = out.write(report::render_sim_html(s, calibration)); !st) {
    return report_failure(st);
  }
  if (output_ != "-") {
    fmt::print("model sim: wrote {} (open it in a browser; it needs no network)\n", output_);
  }
  return kExitOk;
}

}  // namespace knee::cli
