// `knee model`: the queueing calculator of seed 000 ("The Relation", "The Cost of Approaching
// Saturation"), extended. Four models, each a sub-subcommand:
//   knee model little  two of --n, --x, --r -> the third (Little's law)
//   knee model mm1     the seed's utilisation table and the headroom of planned peaks
//   knee model mmc     M/M/c: Erlang C, waits, queue lengths, response-time percentiles
//   knee model usl     the Universal Scalability Law fitted to measured (N, X) points
// The numbers come from analysis/ (little.h, queueing.h, usl.h, kneedle.h); this file parses,
// reads files and prints. Text by default, --json for a JSON object.
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/kneedle.h"
#include "analysis/little.h"
#include "analysis/queueing.h"
#include "analysis/usl.h"
#include "cli/command.h"
#include "cli/load_flags.h"
#include "core/units.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using analysis::ThroughputPoint;
using core::Result;
using core::Status;
using nlohmann::json;

constexpr double kNsPerMs = 1e6;

constexpr const char* kLittleSource =
    "J. D. C. Little, \"A Proof for the Queuing Formula: L = lambda W\", Operations Research "
    "9(3), 1961";
constexpr const char* kMm1Source =
    "M/M/1: Gross, Shortle, Thompson, Harris, \"Fundamentals of Queueing Theory\", 4th ed., "
    "section 2.2";
constexpr const char* kMmcSource =
    "M/M/c: Gross, Shortle, Thompson, Harris, \"Fundamentals of Queueing Theory\", 4th ed., "
    "section 2.3 (Erlang C by the recursion on Erlang B)";
constexpr const char* kUslSource =
    "N. J. Gunther, \"Guerrilla Capacity Planning\" (2007); B. Schwartz, \"Practical Scalability "
    "Analysis with the Universal Scalability Law\" (2015); fit by GSL multifit_nlinear "
    "(Levenberg-Marquardt)";
constexpr const char* kKneedleSource =
    "Satopaa, Albrecht, Irwin, Raghavan, \"Finding a 'Kneedle' in a Haystack\", ICDCS "
    "Workshops 2011";

double ms(double ns) { return ns / kNsPerMs; }

// A JSON number, or null when it is not finite.
json num(double v) { return std::isfinite(v) ? json(v) : json(); }

// Parses a whole string as a finite double.
std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  const size_t last = s.find_last_not_of(ws);
  s.erase(last == std::string::npos ? 0 : last + 1);
  return s;
}

// "416.67,833.33" -> {416.67, 833.33}, every element > 0.
Result<std::vector<double>> parse_rates(const std::string& flag, const std::string& text) {
  std::vector<double> rates;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::optional<double> v = parse_number(trim(item));
    if (!v || !(*v > 0)) {
      return Status::invalid_argument(fmt::format(
          "{}: '{}' is not a comma-separated list of rates > 0 in req/s, like 416.67,833.33", flag,
          text));
    }
    rates.push_back(*v);
  }
  if (rates.empty() || text.back() == ',') {
    return Status::invalid_argument(fmt::format(
        "{}: '{}' is not a comma-separated list of rates > 0 in req/s, like 416.67,833.33", flag,
        text));
  }
  return rates;
}

Result<std::string> read_file(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::invalid_argument(
        fmt::format("{}: cannot read '{}': {}", flag, path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The levels of a knee sweep JSON (`knee sweep --json FILE`): levels[].concurrency and
// levels[].throughput_rps.
Result<std::vector<ThroughputPoint>> sweep_points(const std::string& flag, const std::string& path,
                                                  const std::string& text) {
  const std::string form = fmt::format(
      "{}: '{}' is not a knee sweep JSON (levels[].concurrency and levels[].throughput_rps, as "
      "written by knee sweep --json FILE)",
      flag, path);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("levels") || !j["levels"].is_array() ||
      j["levels"].empty()) {
    return Status::invalid_argument(form);
  }
  std::vector<ThroughputPoint> points;
  for (const json& level : j["levels"]) {
    if (!level.is_object() || !level.contains("concurrency") || !level["concurrency"].is_number() ||
        !level.contains("throughput_rps") || !level["throughput_rps"].is_number()) {
      return Status::invalid_argument(form);
    }
    points.push_back({level["concurrency"].get<double>(), level["throughput_rps"].get<double>()});
  }
  return points;
}

// A CSV with the header `concurrency,throughput` and one (N, X) pair per line.
Result<std::vector<ThroughputPoint>> csv_points(const std::string& flag, const std::string& path,
                                                const std::string& text) {
  std::stringstream in(text);
  std::string line;
  size_t line_no = 0;
  bool header = false;
  std::vector<ThroughputPoint> points;
  while (std::getline(in, line)) {
    ++line_no;
    line = trim(line);
    if (line.empty()) continue;
    const size_t comma = line.find(',');
    const std::string first = trim(line.substr(0, comma));
    const std::string second =
        comma == std::string::npos ? std::string() : trim(line.substr(comma + 1));
    if (!header) {
      if (first != "concurrency" || second != "throughput") {
        return Status::invalid_argument(fmt::format(
            "{}: '{}' line {}: expected the header 'concurrency,throughput' (or a knee sweep "
            "JSON)",
            flag, path, line_no));
      }
      header = true;
      continue;
    }
    std::optional<double> n = parse_number(first);
    std::optional<double> x = parse_number(second);
    if (!n || !x) {
      return Status::invalid_argument(
          fmt::format("{}: '{}' line {}: expected two numbers 'concurrency,throughput', got '{}'",
                      flag, path, line_no, line));
    }
    points.push_back({*n, *x});
  }
  if (!header) {
    return Status::invalid_argument(fmt::format(
        "{}: '{}' is empty; give a CSV with the header 'concurrency,throughput' or a knee sweep "
        "JSON",
        flag, path));
  }
  return points;
}

// --points FILE: a knee sweep JSON when it starts with '{', else the CSV.
Result<std::vector<ThroughputPoint>> read_points(const std::string& flag, const std::string& path) {
  Result<std::string> text = read_file(flag, path);
  if (!text) return text.status();
  const size_t first = text->find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (*text)[first] == '{') return sweep_points(flag, path, *text);
  return csv_points(flag, path, *text);
}

// "2 to 3": the range of the headroom band.
const char* band_range(analysis::HeadroomBand band) {
  for (const analysis::HeadroomBandInfo& b : analysis::kHeadroomBands) {
    if (b.band == band) return b.range;
  }
  return "";
}

std::string pct(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", 100 * fraction, decimals);
}

// ---------------------------------------------------------------------------------------------
// knee model little

struct LittleFlags {
  std::optional<double> n;
  std::optional<double> x_rps;
  std::optional<std::string> r;
  bool json = false;
};

int run_little(const LittleFlags& f) {
  const int given = (f.n ? 1 : 0) + (f.x_rps ? 1 : 0) + (f.r ? 1 : 0);
  if (given != 2) {
    return report_failure(Status::invalid_argument(
        "model little: give exactly two of --n (requests in flight), --x (req/s) and --r (a "
        "duration like 5ms); it solves the third"));
  }
  if (f.n && !(std::isfinite(*f.n) && *f.n >= 0)) {
    return report_failure(
        Status::invalid_argument("--n: give the requests in flight as a number >= 0, e.g. 64"));
  }
  if (f.x_rps && !(std::isfinite(*f.x_rps) && *f.x_rps >= 0)) {
    return report_failure(
        Status::invalid_argument("--x: give the throughput in req/s as a number >= 0, e.g. 4268"));
  }
  std::optional<double> r_ns;
  if (f.r) {
    Result<core::Nanos> r = core::parse_duration(*f.r);
    if (!r) {
      return report_failure(Status::invalid_argument(fmt::format("--r: {}", r.status().message())));
    }
    r_ns = static_cast<double>(r->count());
  }
  double n = 0, x = 0, r = 0;
  const char* solved = "";
  if (!f.n) {
    solved = "n";
    x = *f.x_rps;
    r = *r_ns;
    n = analysis::little_n(x, r);
  } else if (!f.x_rps) {
    solved = "x";
    n = *f.n;
    r = *r_ns;
    x = analysis::little_x(n, r);
    if (!std::isfinite(x)) {
      return report_failure(
          Status::invalid_argument("--r: must be above 0 to solve X = N / R, e.g. 15ms"));
    }
  } else {
    solved = "r";
    n = *f.n;
    x = *f.x_rps;
    r = analysis::little_r_ns(n, x);
    if (!std::isfinite(r)) {
      return report_failure(
          Status::invalid_argument("--x: must be above 0 to solve R = N / X, e.g. 4268"));
    }
  }
  if (f.json) {
    fmt::print("{}\n", json{{"model", "little"},
                            {"formula", "N = X * R"},
                            {"solved", solved},
                            {"n", num(n)},
                            {"x_rps", num(x)},
                            {"r_ns", num(r)},
                            {"source", kLittleSource}}
                           .dump(2));
    return kExitOk;
  }
  auto mark = [&](const char* which) { return std::string(solved) == which ? "  <- solved" : ""; };
  fmt::print("Little's law N = X * R (Little 1961), means over a stable period\n");
  fmt::print("  N = {:.2f} requests in flight{}\n", n, mark("n"));
  fmt::print("  X = {:.2f} req/s{}\n", x, mark("x"));
  fmt::print("  R = {}{}\n", core::format_duration_ns(r), mark("r"));
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// knee model mm1

struct Mm1Flags {
  std::optional<double> mu_rps;
  std::optional<std::string> from;
  std::optional<std::string> peak;
  bool json = false;
};

int run_mm1(const Mm1Flags& f) {
  if (f.mu_rps.has_value() == f.from.has_value()) {
    return report_failure(Status::invalid_argument(
        "model mm1: give the service rate with exactly one of --mu REQ_PER_S (e.g. --mu 4268) "
        "or --from SWEEP.json (mu = its largest measured throughput)"));
  }
  double mu = 0;
  std::string mu_source;
  json mu_json;
  if (f.mu_rps) {
    mu = *f.mu_rps;
    if (!(std::isfinite(mu) && mu > 0)) {
      return report_failure(Status::invalid_argument(
          "--mu: give the service rate in req/s, a number > 0, e.g. 4268"));
    }
    mu_source = "given with --mu";
    mu_json = json{{"from", "--mu"}};
  } else {
    Result<std::string> text = read_file("--from", *f.from);
    if (!text) return report_failure(text.status());
    Result<std::vector<ThroughputPoint>> points = sweep_points("--from", *f.from, *text);
    if (!points) return report_failure(points.status());
    const ThroughputPoint best = *std::max_element(
        points->begin(), points->end(), [](const ThroughputPoint& a, const ThroughputPoint& b) {
          return a.throughput_rps < b.throughput_rps;
        });
    mu = best.throughput_rps;
    if (!(std::isfinite(mu) && mu > 0)) {
      return report_failure(Status::invalid_argument(fmt::format(
          "--from: '{}' has no level with a throughput above 0 to take as mu", *f.from)));
    }
    mu_source =
        fmt::format("measured upper bound: the largest throughput in {}, at concurrency {:g}",
                    *f.from, best.concurrency);
    mu_json = json{{"from", *f.from}, {"concurrency", best.concurrency}};
    // A sweep that found no knee may have stopped before the server saturated.
    const json doc = json::parse(*text, nullptr, false);
    if (doc.is_object() && doc.contains("knee") && doc["knee"].is_object() &&
        doc["knee"].value("index", json()).is_null()) {
      mu_source +=
          "; the sweep found no knee, so the server may not have saturated and mu may "
          "be only a lower bound: sweep further before trusting the table";
      mu_json["no_knee"] = true;
    }
  }
  std::vector<double> peaks;
  if (f.peak) {
    Result<std::vector<double>> p = parse_rates("--peak", *f.peak);
    if (!p) return report_failure(p.status());
    peaks = *p;
  }
  Result<std::vector<analysis::UtilisationRow>> rows = analysis::mm1_utilisation_table(mu);
  if (!rows) return report_failure(rows.status());
  std::vector<analysis::PeakHeadroom> headroom;
  for (double peak : peaks) {
    Result<analysis::PeakHeadroom> h = analysis::peak_headroom(mu, peak);
    if (!h) return report_failure(h.status());
    headroom.push_back(*h);
  }

  if (f.json) {
    json jrows = json::array();
    for (const analysis::UtilisationRow& r : *rows) {
      jrows.push_back(json{{"utilisation", r.utilisation},
                           {"arrival_rps", r.arrival_rps},
                           {"mean_response_ns", r.mean_response_ns},
                           {"ratio_to_first", r.ratio_to_first},
                           {"p50_ns", r.p50_ns},
                           {"p90_ns", r.p90_ns},
                           {"p99_ns", r.p99_ns}});
    }
    json jpeaks = json::array();
    for (const analysis::PeakHeadroom& h : headroom) {
      jpeaks.push_back(
          json{{"peak_rps", h.peak_rps},
               {"utilisation", h.utilisation},
               {"headroom", h.headroom},
               {"mean_response_ns", h.mean_response_ns ? json(*h.mean_response_ns) : json()},
               {"band", band_range(h.band)},
               {"verdict", h.verdict}});
    }
    fmt::print("{}\n", json{{"model", "M/M/1"},
                            {"mu_rps", mu},
                            {"mu_source", mu_json},
                            {"rows", jrows},
                            {"peaks", jpeaks},
                            {"source", kMm1Source}}
                           .dump(2));
    return kExitOk;
  }

  fmt::print(
      "M/M/1 queue MODEL, not a measurement: mean time 1 / (mu - lambda), percentiles "
      "-ln(1 - p) / (mu - lambda)\n  source: {}\n",
      kMm1Source);
  fmt::print("service rate mu = {:g} req/s ({})\n", mu, mu_source);
  std::vector<std::vector<std::string>> t;
  t.push_back({"utilisation", "arrival rate(req/s)", "modelled mean time(ms)",
               fmt::format("ratio to {} case", pct(rows->front().utilisation, 0)), "p50(ms)",
               "p90(ms)", "p99(ms)"});
  for (const analysis::UtilisationRow& r : *rows) {
    t.push_back({pct(r.utilisation, 0), fmt::format("{:.0f}", r.arrival_rps),
                 fmt::format("{:.2f}", ms(r.mean_response_ns)),
                 fmt::format("{:.1f}", r.ratio_to_first), fmt::format("{:.2f}", ms(r.p50_ns)),
                 fmt::format("{:.2f}", ms(r.p90_ns)), fmt::format("{:.2f}", ms(r.p99_ns))});
  }
  fmt::print("{}", report::render_table(t));
  for (const analysis::PeakHeadroom& h : headroom) {
    fmt::print("peak {:g} req/s -> utilisation {}, upper bound is {:.1f}x peak, {}\n", h.peak_rps,
               pct(h.utilisation, 1), h.headroom,
               h.mean_response_ns
                   ? fmt::format("modelled mean time {:.2f} ms", ms(*h.mean_response_ns))
                   : std::string("no steady state (the queue grows without bound)"));
    fmt::print("  headroom {}: {}\n", band_range(h.band), h.verdict);
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// knee model mmc

struct MmcFlags {
  int servers = 0;
  double mu_rps = 0;
  double lambda_rps = 0;
  bool json = false;
};

int run_mmc(const MmcFlags& f) {
  if (f.servers < 1) {
    return report_failure(
        Status::invalid_argument("--servers: give the number of servers, an integer >= 1, e.g. 4"));
  }
  if (!(std::isfinite(f.mu_rps) && f.mu_rps > 0)) {
    return report_failure(Status::invalid_argument(
        "--mu: give the service rate of one server in req/s, a number > 0, e.g. 1000"));
  }
  if (!(std::isfinite(f.lambda_rps) && f.lambda_rps >= 0)) {
    return report_failure(Status::invalid_argument(
        "--lambda: give the arrival rate in req/s, a number >= 0, e.g. 3500"));
  }
  Result<analysis::QueueModel> m = analysis::mmc(f.servers, f.lambda_rps, f.mu_rps);
  if (!m) {
    return report_failure(
        Status::invalid_argument(fmt::format("--lambda: {}", m.status().message())));
  }
  const double qs[] = {0.50, 0.90, 0.99, 0.999};
  const char* names[] = {"p50", "p90", "p99", "p999"};
  double quantile_ns[4];
  for (size_t i = 0; i < 4; ++i) quantile_ns[i] = analysis::response_quantile_ns(*m, qs[i]);

  if (f.json) {
    json response = json::object();
    for (size_t i = 0; i < 4; ++i) response[names[i]] = num(quantile_ns[i]);
    fmt::print("{}\n", json{{"model", "M/M/c"},
                            {"servers", m->servers},
                            {"mu_rps", m->mu_rps},
                            {"lambda_rps", m->lambda_rps},
                            {"offered_load", m->offered_load},
                            {"utilisation", m->utilisation},
                            {"p_wait", m->p_wait},
                            {"mean_wait_ns", m->mean_wait_ns},
                            {"mean_response_ns", m->mean_response_ns},
                            {"mean_queue_length", m->mean_queue_length},
                            {"mean_in_system", m->mean_in_system},
                            {"response_ns", response},
                            {"source", kMmcSource}}
                           .dump(2));
    return kExitOk;
  }
  fmt::print("M/M/c queue MODEL, not a measurement\n  source: {}\n", kMmcSource);
  fmt::print("  c = {} server{} of mu = {:g} req/s each, arrivals lambda = {:g} req/s\n",
             m->servers, m->servers == 1 ? "" : "s", m->mu_rps, m->lambda_rps);
  fmt::print("  offered load a    {:.3f} Erlangs, utilisation rho {}\n", m->offered_load,
             pct(m->utilisation, 1));
  fmt::print("  P(wait)           {:.4f} (Erlang C)\n", m->p_wait);
  fmt::print("  mean wait Wq      {:.3f} ms\n", ms(m->mean_wait_ns));
  fmt::print("  mean response W   {:.3f} ms (Wq + 1/mu)\n", ms(m->mean_response_ns));
  fmt::print("  mean queue Lq     {:.3f} requests (lambda Wq)\n", m->mean_queue_length);
  fmt::print("  mean in system L  {:.3f} requests (lambda W)\n", m->mean_in_system);
  fmt::print("  response (ms)     p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  p99.9 {:.3f}\n",
             ms(quantile_ns[0]), ms(quantile_ns[1]), ms(quantile_ns[2]), ms(quantile_ns[3]));
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// knee model usl

struct UslFlags {
  std::string points;
  bool json = false;
};

int run_usl(const UslFlags& f) {
  Result<std::vector<ThroughputPoint>> points = read_points("--points", f.points);
  if (!points) return report_failure(points.status());
  Result<analysis::UslFit> fit = analysis::fit_usl(*points);
  if (!fit) {
    if (fit.status().code() != Status::Code::kInvalidArgument) {
      return report_failure(fit.status());
    }
    return report_failure(Status::invalid_argument(
        fmt::format("--points: '{}': {}", f.points, fit.status().message())));
  }
  std::vector<ThroughputPoint> sorted = *points;
  std::sort(sorted.begin(), sorted.end(), [](const ThroughputPoint& a, const ThroughputPoint& b) {
    return a.concurrency < b.concurrency;
  });
  // Kneedle needs strictly increasing levels; with repeated levels it is skipped.
  Result<analysis::Kneedle> kneedle = analysis::find_kneedle(sorted);

  if (f.json) {
    json jpoints = json::array();
    for (const ThroughputPoint& p : sorted) {
      jpoints.push_back(json{
          {"concurrency", p.concurrency},
          {"throughput_rps", p.throughput_rps},
          {"fitted_rps",
           analysis::usl_throughput_rps(p.concurrency, fit->sigma, fit->kappa, fit->lambda_rps)}});
    }
    json jk;
    if (kneedle) {
      jk = json{{"label", kneedle->label},
                {"concurrency", kneedle->index ? json(kneedle->knee_concurrency) : json()},
                {"index", kneedle->index ? json(*kneedle->index) : json()},
                {"x_scale", analysis::x_scale_name(kneedle->x_scale)},
                {"summary", kneedle->summary},
                {"source", kKneedleSource}};
    } else {
      jk = json{{"error", kneedle.status().message()}};
    }
    fmt::print("{}\n", json{{"model", "USL"},
                            {"formula", "X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1))"},
                            {"sigma", fit->sigma},
                            {"kappa", fit->kappa},
                            {"lambda_rps", fit->lambda_rps},
                            {"r_squared", num(fit->r_squared)},
                            {"peak_concurrency",
                             fit->peak_concurrency ? json(*fit->peak_concurrency) : json()},
                            {"peak_throughput_rps",
                             fit->peak_throughput_rps ? json(*fit->peak_throughput_rps) : json()},
                            {"held_at_zero", fit->held_at_zero},
                            {"flags", fit->flags},
                            {"points", jpoints},
                            {"kneedle", jk},
                            {"source", kUslSource}}
                           .dump(2));
    return kExitOk;
  }

  fmt::print("USL fit X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)) to {} points from {}\n",
             fit->points, f.points);
  fmt::print("  source: {}\n", kUslSource);
  std::vector<std::vector<std::string>> t;
  t.push_back({"concurrency", "measured(req/s)", "fitted(req/s)", "residual"});
  for (const ThroughputPoint& p : sorted) {
    const double fitted =
        analysis::usl_throughput_rps(p.concurrency, fit->sigma, fit->kappa, fit->lambda_rps);
    t.push_back({fmt::format("{:g}", p.concurrency), fmt::format("{:.5g}", p.throughput_rps),
                 fmt::format("{:.5g}", fitted),
                 fmt::format("{:+.2f}%", 100 * (p.throughput_rps - fitted) / fitted)});
  }
  fmt::print("{}", report::render_table(t));
  fmt::print("  sigma   {:.4g}  (contention: the serialised fraction)\n", fit->sigma);
  fmt::print("  kappa   {:.4g}  (coherency: crosstalk per pair of requests)\n", fit->kappa);
  fmt::print("  lambda  {:.4g} req/s  (throughput at N = 1)\n", fit->lambda_rps);
  fmt::print("  R^2     {}\n",
             std::isfinite(fit->r_squared) ? fmt::format("{:.4f}", fit->r_squared) : "-");
  if (fit->peak_concurrency) {
    fmt::print("  peak    N* = sqrt((1 - sigma) / kappa) = {:.1f}, X(N*) = {:.5g} req/s\n",
               *fit->peak_concurrency, *fit->peak_throughput_rps);
  } else if (fit->no_growth) {
    fmt::print("  peak    none: sigma >= 1, throughput does not grow past the first level\n");
  } else if (fit->sigma > 0) {
    fmt::print("  peak    none (kappa = 0): throughput approaches lambda / sigma = {:.5g} req/s\n",
               fit->lambda_rps / fit->sigma);
  } else {
    fmt::print("  peak    none (sigma = kappa = 0): throughput grows linearly\n");
  }
  std::string flags;
  for (const std::string& fl : fit->flags) flags += (flags.empty() ? "" : "; ") + fl;
  fmt::print("  flags   {}\n", flags.empty() ? "none" : flags);
  if (kneedle) {
    fmt::print("Kneedle: {}\n", kneedle->summary);
  } else {
    fmt::print("Kneedle: skipped ({})\n", kneedle.status().message());
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------

class ModelCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.footer(fmt::format(
        "Models, not measurements: each assumes Poisson arrivals and exponential service (M/M/*) "
        "or the USL's shape; they give the direction and size of ratios.\nSources: {}; {}; {}; "
        "USL: {}; Kneedle: {}.",
        kLittleSource, kMm1Source, kMmcSource, kUslSource, kKneedleSource));

    little_ = app.add_subcommand(
        "little", "Little's law N = X * R: give two of --n, --x, --r, get the third (Little 1961)");
    little_->add_option("--n", little_flags_.n, "Requests in flight (the mean number in system)");
    little_->add_option("--x", little_flags_.x_rps, "Throughput in req/s");
    little_->add_option("--r", little_flags_.r,
                        "Mean time in system, a duration like 15ms, 250us or 1.5s");
    little_->add_flag("--json", little_flags_.json, "Print JSON (r_ns in nanoseconds)");

    std::string bands;
    for (const analysis::HeadroomBandInfo& b : analysis::kHeadroomBands) {
      bands += fmt::format("\n  {}: {}", b.range, b.verdict);
    }
    mm1_ = app.add_subcommand(
        "mm1",
        "M/M/1 (Gross et al., Fundamentals of Queueing Theory, 2.2): the seed's table of "
        "utilisation 30..99% -> mean time 1/(mu - lambda), ratio to 30%, percentiles "
        "-ln(1-p)/(mu - lambda); and the headroom of planned peaks");
    mm1_->add_option("--mu", mm1_flags_.mu_rps, "Service rate in req/s (the measured upper bound)");
    mm1_->add_option("--from", mm1_flags_.from,
                     "Take mu from a knee sweep JSON: the largest levels[].throughput_rps");
    mm1_->add_option("--peak", mm1_flags_.peak,
                     "Planned peak rates in req/s, comma-separated (e.g. 416.67,833.33): "
                     "utilisation, headroom mu/peak, modelled mean time, verdict");
    mm1_->add_flag("--json", mm1_flags_.json, "Print JSON (times in ns)");
    mm1_->footer("Headroom bands (mu / peak):" + bands);

    mmc_ = app.add_subcommand(
        "mmc",
        "M/M/c (Gross et al., 2.3): P(wait) by Erlang C (recursion on Erlang B), Wq, W, Lq, L "
        "(Little), response-time percentiles from the exact distribution (bisection)");
    mmc_->add_option("--servers", mmc_flags_.servers, "Servers c, an integer >= 1")->required();
    mmc_->add_option("--mu", mmc_flags_.mu_rps, "Service rate of one server in req/s")->required();
    mmc_->add_option("--lambda", mmc_flags_.lambda_rps, "Arrival rate in req/s")->required();
    mmc_->add_flag("--json", mmc_flags_.json, "Print JSON (times in ns)");

    usl_ = app.add_subcommand(
        "usl",
        "Universal Scalability Law (Gunther; Schwartz) X(N) = lambda N / (1 + sigma (N-1) + kappa "
        "N (N-1)) fitted by nonlinear least squares (GSL, Levenberg-Marquardt); peak "
        "N* = sqrt((1 - sigma)/kappa); Kneedle (Satopaa et al. 2011) as a secondary knee");
    usl_->add_option("--points", usl_flags_.points,
                     "(N, X) points: a CSV with the header 'concurrency,throughput', or a knee "
                     "sweep JSON (levels[].concurrency, levels[].throughput_rps)")
        ->required();
    usl_->add_flag("--json", usl_flags_.json, "Print JSON");
    usl_->footer(
        "Flags: 'fit is weak' (fewer than 6 points), 'peak extrapolated' (N* beyond the largest "
        "measured level), 'no retrograde region' (kappa = 0).");
  }

  int run() override {
    if (little_->parsed()) return run_little(little_flags_);
    if (mm1_->parsed()) return run_mm1(mm1_flags_);
    if (mmc_->parsed()) return run_mmc(mmc_flags_);
    if (usl_->parsed()) return run_usl(usl_flags_);
    return report_failure(Status::invalid_argument(
        "model: name a model: knee model little|mm1|mmc|usl (see knee model --help)"));
  }

 private:
  CLI::App* little_ = nullptr;
  CLI::App* mm1_ = nullptr;
  CLI::App* mmc_ = nullptr;
  CLI::App* usl_ = nullptr;
  LittleFlags little_flags_;
  Mm1Flags mm1_flags_;
  MmcFlags mmc_flags_;
  UslFlags usl_flags_;
};

}  // namespace

std::unique_ptr<Subcommand> make_model_command() { return std::make_unique<ModelCommand>(); }

}  // namespace knee::cli
