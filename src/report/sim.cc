#include "report/sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/queueing.h"
#include "report/html_text.h"
#include "report/queueing.h"
#include "report/record.h"
#include "report/web_assets.h"

namespace knee::report {

using core::Result;
using core::Status;
using html_text::esc;
using nlohmann::json;

namespace {

double ms(double ns) { return ns / 1e6; }

// To 4 significant digits: the page shows these in its inputs.
double round4(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

json settings_json(const SimSettings& s) {
  json j{{"topology", s.topology},
         {"loop", s.loop},
         {"dist", s.dist},
         {"workers", s.workers},
         {"service_ms", s.service_ms},
         {"delay_ms", s.delay_ms},
         {"concurrency", s.concurrency},
         {"replicas", s.replicas},
         {"policy", s.policy},
         {"requests", s.requests},
         {"seed", s.seed},
         {"arrivals", s.arrivals},
         // A slower replica, when one is picked in the page, twice as slow as the others (seed
         // 002's lesson 3); every other field takes web/sim.js's default (KneeSim.defaults).
         {"slow_factor", 2}};
  j["rate_rps"] = s.rate_rps ? json(*s.rate_rps) : json();
  return j;
}

json calibration_json(const SimCalibration& c) {
  json points = json::array();
  for (const SimPoint& p : c.points) {
    points.push_back({{"load", p.load},
                      {"throughput_rps", p.throughput_rps},
                      {"mean_ms", p.mean_ms},
                      {"p50_ms", p.p50_ms},
                      {"p99_ms", p.p99_ms}});
  }
  return {{"from", c.from},
          {"target", c.target},
          {"loop", c.loop},
          {"workers", c.workers},
          {"ceiling_rps", c.ceiling_rps},
          {"service_ms", c.service_ms},
          {"delay_ms", c.delay_ms},
          {"points", points},
          {"how", c.how},
          {"warning", c.warning ? json(*c.warning) : json()}};
}

}  // namespace

Result<SimCalibration> calibrate_sim(const SweepDocument& sweep, const std::string& from,
                                     int workers) {
  SimCalibration c;
  c.from = from;
  c.target = sweep.target;
  c.loop = sweep.mode() == LoopMode::kOpen ? "open" : "closed";
  c.arrivals = sweep.params.arrival;
  c.workers = std::max(1, workers);
  for (const LevelFigures& l : sweep.levels) {
    const RunFigures& r = l.median;
    c.points.push_back(SimPoint{r.level_key(), r.throughput_rps, ms(r.latency_ns.mean),
                                ms(static_cast<double>(r.latency_ns.p50)),
                                ms(static_cast<double>(r.latency_ns.p99))});
  }
  const LevelFigures* best = highest_throughput_level(sweep);
  if (best == nullptr) {
    return Status::invalid_field(
        "from", fmt::format("'{}' has no level with a throughput above 0 to calibrate from", from));
  }
  c.ceiling_rps = best->median.throughput_rps;
  c.ceiling_load = best->median.level_key();
  c.service_ms = round4(1000.0 * c.workers / c.ceiling_rps);
  const LevelFigures& first = sweep.levels.front();
  const RunFigures& low = first.median;
  const double low_mean_ms = ms(low.latency_ns.mean);
  // What of the lowest level's latency is waiting, not service or delay: a closed loop with more
  // clients than workers queues for sure (then no delay and no shape can be told apart); an
  // open loop waits as M/M/c does at that rate with Poisson arrivals, and next to nothing with
  // uniform ones at a utilisation this low.
  const bool queues = c.loop == "closed" && low.level_key() > c.workers;
  double wait_ms = 0;
  if (c.loop == "open" && c.arrivals == "poisson") {
    auto m = analysis::mmc(c.workers, low.level_key(), 1000.0 / c.service_ms);
    if (m) wait_ms = ms(m->mean_wait_ns);
  }
  c.delay_ms = queues ? 0 : round4(std::max(0.0, low_mean_ms - c.service_ms - wait_ms));
  // The shape: the lowest level's latency distribution, from the recorded histogram of the
  // repeat its figures are (with one repeat, the only one) at 17 quantiles, else from the
  // summary's six.
  std::vector<std::pair<double, double>> points;
  size_t repeat = 0;
  for (size_t i = 0; i < first.runs.size(); ++i) {
    if (first.runs[i] == low) repeat = i;
  }
  if (repeat < first.records.size() && first.records[repeat].result.stats.latency_ns.count() > 0) {
    const core::Histogram& h = first.records[repeat].result.stats.latency_ns;
    for (double q : {0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99,
                     0.999, 0.9999, 1.0}) {
      points.emplace_back(
          q, ms(static_cast<double>(q == 0 ? h.min() : h.value_at_percentile(100 * q))));
    }
  } else {
    const LatencySummary& q = low.latency_ns;
    for (const auto& [quantile, ns] :
         {std::pair{0.0, q.min}, std::pair{0.5, q.p50}, std::pair{0.9, q.p90},
          std::pair{0.99, q.p99}, std::pair{0.999, q.p999}, std::pair{1.0, q.max}}) {
      points.emplace_back(quantile, ms(static_cast<double>(ns)));
    }
  }
  double last = 0;
  for (const auto& [quantile, value_ms] : points) {
    // Non-decreasing, and never below 0 once the delay is taken off.
    last = std::max(last, std::max(0.0, value_ms - c.delay_ms));
    c.shape.emplace_back(quantile, last);
  }
  // No shape from an empty histogram, nor from a level whose latency is mostly queueing.
  if (c.shape.back().second <= 0 || queues) c.shape.clear();
  const std::string at = c.loop == "closed" ? fmt::format("concurrency {}", c.ceiling_load)
                                            : fmt::format("{:.6g} req/s offered", c.ceiling_load);
  if (!sweep.knee.index) {
    c.warning =
        "the sweep found no knee, so the server may not have saturated: its largest throughput "
        "is then a lower bound of the ceiling and the service time from it an upper bound; the "
        "model saturates where the measurement only stopped. Sweep higher to calibrate.";
  }
  const char* plural = c.workers == 1 ? "" : "s";
  c.how = fmt::format(
      "service time {:.4g} ms = {} worker{} / {:.6g} req/s (the largest measured throughput, at "
      "{}); delay {:.4g} ms = ",
      c.service_ms, c.workers, plural, c.ceiling_rps, at, c.delay_ms);
  if (queues) {
    c.how += fmt::format(
        "0 and exponential service times, as the lowest level (concurrency {}) already queues on "
        "{} worker{}",
        low.level_key(), c.workers, plural);
  } else if (wait_ms > 0) {
    c.how += fmt::format(
        "the mean latency at the lowest level ({:.4g} ms) - the service time - M/M/{}'s wait at "
        "that rate ({:.4g} ms)",
        low_mean_ms, c.workers, wait_ms);
  } else {
    c.how += fmt::format("the mean latency at the lowest level ({:.4g} ms) - the service time",
                         low_mean_ms);
  }
  return c;
}

SimSettings calibrated(SimSettings s, const SimCalibration& c) {
  s.topology = "single";
  s.loop = c.loop;
  s.workers = c.workers;
  s.service_ms = c.service_ms;
  s.delay_ms = c.delay_ms;
  if (c.arrivals == "uniform" || c.arrivals == "poisson") s.arrivals = c.arrivals;
  s.dist = c.shape.empty() ? "exp" : "measured";
  if (!c.points.empty()) {
    if (c.loop == "open") {
      s.rate_rps = c.points.front().load;
    } else {
      s.concurrency = std::max(1, static_cast<int>(c.points.front().load));
    }
  }
  return s;
}

std::string render_sim_html(const SimSettings& settings,
                            const std::optional<SimCalibration>& calibration) {
  json data{{"config", settings_json(settings)}, {"calibration", json()}, {"shape", json()}};
  if (calibration) {
    data["calibration"] = calibration_json(*calibration);
    if (!calibration->shape.empty()) {
      json shape = json::array();
      for (const auto& [q, v] : calibration->shape) shape.push_back({q, v});
      data["shape"] = shape;
    }
  }
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>knee model sim: the Traffic Lab</title>\n";
  out += "<style>\n" + std::string(web::uplot_css()) + "\n</style>\n";
  out += "<style>\n" + std::string(web::report_css()) + "\n</style>\n";
  out += "</head>\n<body class=\"sim\">\n<header>\n<h1>The Traffic Lab</h1>\n";
  out +=
      "<p class=\"when\">A discrete-event simulation of a server, of replicas behind a "
      "balancer and of a cache in front of a store. Drag the load: up to the saturation point "
      "throughput follows it; past it the busiest node's queue grows (without bound in open "
      "loop), throughput gains no more there, and p99 climbs. A model, not a measurement: each "
      "node is a queue of fixed workers with the service times you set.</p>\n";
  if (calibration) {
    out += "<p>Calibrated by <code>" + esc(calibration->from) + "</code> (" +
           esc(calibration->target) + ", " + esc(calibration->loop) +
           " loop): " + esc(calibration->how) +
           ". Its levels are the black points on the charts.</p>\n";
    if (calibration->warning) {
      out += "<p class=\"warning\">Warning: " + esc(*calibration->warning) + "</p>\n";
    }
  }
  out +=
      "</header>\n<noscript><p class=\"warning\">The simulation runs in JavaScript; this page "
      "needs it.</p></noscript>\n";
  out +=
      "<section><h2>Topology and load</h2>\n<form id=\"controls\" class=\"controls\" "
      "onsubmit=\"return false\"></form></section>\n";
  out += "<section><h2>At this load</h2>\n<div id=\"now\"></div></section>\n";
  out +=
      "<section class=\"charts\"><h2>Over the load</h2>\n<p>Each point is its own simulated "
      "run. The red line is the saturation point (open loop) or N* = X max x R min, where a "
      "closed loop's throughput bound stops rising (Denning and Buzen 1978).</p>\n"
      "<div id=\"charts\" class=\"chart-grid\"></div></section>\n";
  if (calibration) {
    out +=
        "<section><h2>Simulated against measured</h2>\n<div id=\"agreement\"></div>"
        "</section>\n";
  }
  out += "<pre id=\"knee-selftest\" hidden></pre>\n";
  out += "<script type=\"application/json\" id=\"knee-sim\">" + html_text::script_json(data) +
         "</script>\n";
  for (std::string_view js : {web::uplot_js(), web::sim_js(), web::sim_page_js()}) {
    out += "<script>\n" + html_text::script_text(js) + "\n</script>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace knee::report
