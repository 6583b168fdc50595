// The Traffic Lab of `knee model sim`: one self-contained HTML page (offline, like the reports)
// with an interactive discrete-event simulation of the course's topologies (web/sim.js) and its
// controls and charts (web/sim_page.js), optionally calibrated by a measured sweep whose points
// it draws over the simulated curve.
//
// The simulation itself runs in the page (and under Node.js in tests/report/sim_theory_test.js);
// this file only chooses the starting configuration, derives the calibration from a sweep and
// writes the page. Pure functions, no I/O. Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "report/document.h"

namespace knee::report {

// The page's starting configuration: the fields of web/sim.js's config, with the same names in
// the page's JSON. Times in ms, rates in req/s.
struct SimSettings {
  std::string topology = "single";  // single | blocking | replicas | cache
  std::string loop = "open";        // open (rate_rps) | closed (concurrency)
  std::string dist = "exp";         // exp | det | measured (needs a calibration's shape)
  int workers = 1;
  double service_ms = 5;  // seed 002's /slow-sync?ms=5: mu = 200 req/s on one worker
  double delay_ms = 0;
  std::optional<double> rate_rps;  // empty: 70 % of the saturation point
  int concurrency = 1;
  int replicas = 3;
  std::string policy = "round_robin";  // round_robin | least_conn | random
  std::string arrivals = "poisson";    // open loop: poisson | uniform (knee's own default)
  int requests = 100000;               // simulated per move of the load slider
  uint32_t seed = 1;
};

// One measured level, as the page draws it: load is the concurrency (closed loop) or the
// target rate in req/s (open loop); latencies in ms.
struct SimPoint {
  double load = 0;
  double throughput_rps = 0;
  double mean_ms = 0, p50_ms = 0, p99_ms = 0;
};

// What a sweep says about the server, for the simulation. With W workers and the largest
// measured throughput X: service time S = W / X (the server saturates where the measurement
// did); delay d = the mean latency at the lowest level minus S (the network and the client,
// which do not queue) and, in an open loop with Poisson arrivals, minus M/M/W's wait at that
// rate; 0 when the lowest level already queues (concurrency above W), with no shape; the
// shape: the lowest level's latency at 17 quantiles of its recorded histogram (min, 1 %, 5 %,
// 10 % ... 90 %, 95 %, 99 %, 99.9 %, 99.99 %, max; the summary's min, p50, p90, p99, p99.9 and max
// in files without records) minus d, as an inverse CDF that sim.js scales to the mean S.
struct SimCalibration {
  std::string from, target;
  std::string loop;      // open | closed, the sweep's
  std::string arrivals;  // open loop: the sweep's arrival process, uniform or poisson
  int workers = 1;
  double ceiling_rps = 0, ceiling_load = 0;
  double service_ms = 0, delay_ms = 0;
  std::vector<std::pair<double, double>> shape;  // (quantile 0..1, ms)
  std::vector<SimPoint> points;
  std::string how;  // the derivation, one sentence with the figures
  // Set when the sweep found no knee: the server may not have saturated, so the largest
  // throughput (and the service time from it) is a bound, not the ceiling.
  std::optional<std::string> warning;
};

// The calibration of `sweep` (read from `from`) for a server of `workers` workers. Errors
// (invalid_field "from"): no level with a throughput above 0.
core::Result<SimCalibration> calibrate_sim(const SweepDocument& sweep, const std::string& from,
                                           int workers);

// `settings` with a calibration applied: its loop, workers, service time, delay and the
// measured shape, the load at the sweep's lowest level.
SimSettings calibrated(SimSettings settings, const SimCalibration& calibration);

// The whole page: uPlot, web/sim.js and web/sim_page.js embedded, the configuration and the
// calibration in <script type="application/json" id="knee-sim">. No network address anywhere.
std::string render_sim_html(const SimSettings& settings,
                            const std::optional<SimCalibration>& calibration);

}  // namespace knee::report
