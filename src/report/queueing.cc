#include "report/queueing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "analysis/kneedle.h"
#include "analysis/little.h"
#include "analysis/queueing.h"
#include "core/units.h"
#include "report/render.h"

namespace knee::report {

using analysis::ThroughputPoint;
using core::Result;
using core::Status;

namespace {

double ms(double ns) { return ns / 1e6; }

std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// A whole string as a finite double.
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

std::string pct(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", 100 * fraction, decimals);
}

const char* band_range(analysis::HeadroomBand band) {
  for (const analysis::HeadroomBandInfo& b : analysis::kHeadroomBands) {
    if (b.band == band) return b.range;
  }
  return "";
}

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
    // The header line is optional: a first line of two numbers is already a point.
    if (!header && !(parse_number(first) && parse_number(second))) {
      if (first != "concurrency" || second != "throughput") {
        return Status::invalid_argument(fmt::format(
            "{}: '{}' line {}: expected the header 'concurrency,throughput' or a first point "
            "such as '1,1000' (or a knee sweep JSON)",
            flag, path, line_no));
      }
      header = true;
      continue;
    }
    header = true;
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

}  // namespace

const LevelFigures* highest_throughput_level(const SweepDocument& sweep) {
  const LevelFigures* best = nullptr;
  for (const LevelFigures& l : sweep.levels) {
    const double x = l.median.throughput_rps;
    if (std::isfinite(x) && x > 0 && (best == nullptr || x > best->median.throughput_rps))
      best = &l;
  }
  return best;
}

Result<SweepDocument> read_sweep(const std::string& label, const std::string& text,
                                 std::string_view command, std::string_view needs) {
  auto doc = parse_document(text, label);
  if (!doc) return doc.status();
  const auto* sweep = std::get_if<SweepDocument>(&*doc);
  if (sweep == nullptr) return wrong_document(label, *doc, command, needs);
  if (sweep->levels.empty()) {
    return Status::invalid_argument(fmt::format("{}: a sweep without levels", label));
  }
  return *sweep;
}

Result<LittleDocument> little_document(std::optional<double> n, std::optional<double> x_rps,
                                       std::optional<double> r_ns) {
  const int given = (n ? 1 : 0) + (x_rps ? 1 : 0) + (r_ns ? 1 : 0);
  if (given != 2) {
    return Status::invalid_argument(
        "model little: give exactly two of --n (requests in flight), --x (req/s) and --r (a "
        "duration like 5ms); it solves the third");
  }
  if (n && !(std::isfinite(*n) && *n >= 0)) {
    return Status::invalid_field("n", "give the requests in flight as a number >= 0, e.g. 64");
  }
  if (x_rps && !(std::isfinite(*x_rps) && *x_rps >= 0)) {
    return Status::invalid_field("x", "give the throughput in req/s as a number >= 0, e.g. 4268");
  }
  LittleDocument d;
  d.formula = "N = X * R";
  d.source = kLittleSource;
  if (!n) {
    d.solved = "n";
    d.x_rps = *x_rps;
    d.r_ns = *r_ns;
    d.n = finite(analysis::little_n(*x_rps, *r_ns));
  } else if (!x_rps) {
    d.solved = "x";
    d.n = *n;
    d.r_ns = *r_ns;
    const double x = analysis::little_x(*n, *r_ns);
    if (!std::isfinite(x)) {
      return Status::invalid_field("r", "must be above 0 to solve X = N / R, e.g. 15ms");
    }
    d.x_rps = x;
  } else {
    d.solved = "r";
    d.n = *n;
    d.x_rps = *x_rps;
    const double r = analysis::little_r_ns(*n, *x_rps);
    if (!std::isfinite(r)) {
      return Status::invalid_field("x", "must be above 0 to solve R = N / X, e.g. 4268");
    }
    d.r_ns = r;
  }
  return d;
}

std::string render_little_text(const LittleDocument& d) {
  auto mark = [&](const char* which) { return d.solved == which ? "  <- solved" : ""; };
  std::string out = "Little's law N = X * R (Little 1961), means over a stable period\n";
  out += fmt::format("  N = {:.2f} requests in flight{}\n", d.n.value_or(NAN), mark("n"));
  out += fmt::format("  X = {:.2f} req/s{}\n", d.x_rps.value_or(NAN), mark("x"));
  out += fmt::format("  R = {}{}\n", core::format_duration_ns(d.r_ns.value_or(NAN)), mark("r"));
  return out;
}

Result<std::vector<ThroughputPoint>> read_points(const std::string& flag, const std::string& label,
                                                 const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return csv_points(flag, label, text);
  auto sweep = read_sweep(label, text, "model usl",
                          "a closed-loop sweep or a CSV of concurrency,throughput");
  if (!sweep) return sweep.status();
  if (sweep->mode() != LoopMode::kClosed) {
    return wrong_document(label, Document(*sweep), "model usl",
                          "a closed-loop sweep or a CSV of concurrency,throughput");
  }
  std::vector<ThroughputPoint> points;
  for (const LevelFigures& l : sweep->levels) {
    points.push_back({l.median.level_key(), l.median.throughput_rps});
  }
  return points;
}

Result<std::pair<double, MuSource>> mu_from_sweep(const std::string& label,
                                                  const std::string& text) {
  auto sweep = read_sweep(label, text, "model mm1 --from", "a sweep (knee sweep --json FILE)");
  if (!sweep) return sweep.status();
  const LevelFigures* best = highest_throughput_level(*sweep);
  if (best == nullptr) {
    return Status::invalid_field(
        "from", fmt::format("'{}' has no level with a throughput above 0 to take as mu", label));
  }
  const double mu = best->median.throughput_rps;
  MuSource source;
  source.from = label;
  if (best->mode == LoopMode::kOpen) {
    source.rate_rps = best->median.level_key();
  } else {
    source.concurrency = best->median.level_key();
  }
  // A sweep that found no knee may have stopped before the server saturated.
  if (!sweep->knee.index) source.no_knee = true;
  return std::pair<double, MuSource>(mu, source);
}

Result<Mm1Document> mm1_document(double mu_rps, MuSource source,
                                 const std::vector<double>& peaks_rps) {
  auto rows = analysis::mm1_utilisation_table(mu_rps);
  if (!rows) return rows.status();
  Mm1Document d;
  d.mu_rps = mu_rps;
  d.mu_source = std::move(source);
  d.source = kMm1Source;
  for (const analysis::UtilisationRow& r : *rows) {
    d.rows.push_back(Mm1Row{r.utilisation, r.arrival_rps, r.mean_response_ns, r.ratio_to_first,
                            r.p50_ns, r.p90_ns, r.p99_ns});
  }
  for (double peak : peaks_rps) {
    auto h = analysis::peak_headroom(mu_rps, peak);
    if (!h) return h.status();
    d.peaks.push_back(Mm1Peak{h->peak_rps, h->utilisation, h->headroom, h->mean_response_ns,
                              band_range(h->band), h->verdict});
  }
  return d;
}

std::string render_mm1_text(const Mm1Document& d) {
  std::string source = "given with --mu";
  const MuSource& m = d.mu_source;
  if (m.from != "--mu") {
    source = fmt::format("measured upper bound: the largest throughput in {}, at {}", m.from,
                         m.rate_rps ? fmt::format("rate {:g} req/s", *m.rate_rps)
                                    : fmt::format("concurrency {:g}", m.concurrency.value_or(0)));
    if (m.no_knee.value_or(false)) {
      source +=
          "; the sweep found no knee, so the server may not have saturated and mu may "
          "be only a lower bound: sweep further before trusting the table";
    }
  }
  std::string out = fmt::format(
      "M/M/1 queue MODEL, not a measurement: mean time 1 / (mu - lambda), percentiles "
      "-ln(1 - p) / (mu - lambda)\n  source: {}\n",
      d.source);
  out += fmt::format("service rate mu = {:g} req/s ({})\n", d.mu_rps, source);
  std::vector<std::vector<std::string>> t;
  t.push_back(
      {"utilisation", "arrival rate(req/s)", "modelled mean time(ms)",
       fmt::format("ratio to {} case", d.rows.empty() ? "" : pct(d.rows.front().utilisation, 0)),
       "p50(ms)", "p90(ms)", "p99(ms)"});
  for (const Mm1Row& r : d.rows) {
    t.push_back({pct(r.utilisation, 0), fmt::format("{:.0f}", r.arrival_rps),
                 fmt::format("{:.2f}", ms(r.mean_response_ns)),
                 fmt::format("{:.1f}", r.ratio_to_first), fmt::format("{:.2f}", ms(r.p50_ns)),
                 fmt::format("{:.2f}", ms(r.p90_ns)), fmt::format("{:.2f}", ms(r.p99_ns))});
  }
  out += render_table(t);
  for (const Mm1Peak& h : d.peaks) {
    out += fmt::format("peak {:g} req/s -> utilisation {}, upper bound is {:.1f}x peak, {}\n",
                       h.peak_rps, pct(h.utilisation, 1), h.headroom,
                       h.mean_response_ns
                           ? fmt::format("modelled mean time {:.2f} ms", ms(*h.mean_response_ns))
                           : std::string("no steady state (the queue grows without bound)"));
    out += fmt::format("  headroom {}: {}\n", h.band, h.verdict);
  }
  return out;
}

Result<MmcDocument> mmc_document(int servers, double mu_rps, double lambda_rps) {
  auto m = analysis::mmc(servers, lambda_rps, mu_rps);
  if (!m) return Status::invalid_field("lambda", m.status().message());
  MmcDocument d;
  d.servers = m->servers;
  d.mu_rps = m->mu_rps;
  d.lambda_rps = m->lambda_rps;
  d.offered_load = m->offered_load;
  d.utilisation = m->utilisation;
  d.p_wait = m->p_wait;
  d.mean_wait_ns = m->mean_wait_ns;
  d.mean_response_ns = m->mean_response_ns;
  d.mean_queue_length = m->mean_queue_length;
  d.mean_in_system = m->mean_in_system;
  const double qs[] = {0.50, 0.90, 0.99, 0.999};
  const char* names[] = {"p50", "p90", "p99", "p999"};
  for (size_t i = 0; i < 4; ++i) {
    d.response_ns[names[i]] = finite(analysis::response_quantile_ns(*m, qs[i]));
    d.wait_ns[names[i]] = finite(analysis::wait_quantile_ns(*m, qs[i]));
  }
  d.p_block = analysis::erlang_b(m->servers, m->offered_load);
  d.source = kMmcSource;
  return d;
}

std::string render_mmc_text(const MmcDocument& d) {
  auto q = [&](const char* name) {
    auto it = d.response_ns.find(name);
    return ms(it == d.response_ns.end() ? NAN : it->second.value_or(NAN));
  };
  std::string out = fmt::format("M/M/c queue MODEL, not a measurement\n  source: {}\n", d.source);
  out += fmt::format("  c = {} server{} of mu = {:g} req/s each, arrivals lambda = {:g} req/s\n",
                     d.servers, d.servers == 1 ? "" : "s", d.mu_rps, d.lambda_rps);
  out += fmt::format("  offered load a    {:.3f} Erlangs, utilisation rho {}\n", d.offered_load,
                     pct(d.utilisation, 1));
  out += fmt::format("  P(wait)           {:.4f} (Erlang C)\n", d.p_wait);
  if (d.p_block) {
    out += fmt::format(
        "  P(block)          {:.4f} (Erlang B: the share an M/M/c/c system, the same servers "
        "with no queue, would turn away)\n",
        *d.p_block);
  }
  out += fmt::format("  mean wait Wq      {:.3f} ms\n", ms(d.mean_wait_ns));
  out += fmt::format("  mean response W   {:.3f} ms (Wq + 1/mu)\n", ms(d.mean_response_ns));
  out += fmt::format("  mean queue Lq     {:.3f} requests (lambda Wq)\n", d.mean_queue_length);
  out += fmt::format("  mean in system L  {:.3f} requests (lambda W)\n", d.mean_in_system);
  out += fmt::format("  response (ms)     p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  p99.9 {:.3f}\n",
                     q("p50"), q("p90"), q("p99"), q("p999"));
  if (!d.wait_ns.empty()) {
    auto w = [&](const char* name) {
      auto it = d.wait_ns.find(name);
      return ms(it == d.wait_ns.end() ? NAN : it->second.value_or(NAN));
    };
    out += fmt::format(
        "  wait Wq (ms)      p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  p99.9 {:.3f}  (P(Wq > t) = C "
        "e^-(c mu - lambda) t: 0 for the {:.1f}% that find a server free)\n",
        w("p50"), w("p90"), w("p99"), w("p999"), 100 * (1 - d.p_wait));
  }
  return out;
}

Result<UslDocument> usl_document(const std::vector<ThroughputPoint>& points, std::string from) {
  auto fit = analysis::fit_usl(points);
  if (!fit) return fit.status();
  std::vector<ThroughputPoint> sorted = points;
  std::sort(sorted.begin(), sorted.end(), [](const ThroughputPoint& a, const ThroughputPoint& b) {
    return a.concurrency < b.concurrency;
  });
  UslDocument d;
  d.from = std::move(from);
  d.formula = "X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1))";
  d.sigma = fit->sigma;
  d.kappa = fit->kappa;
  d.lambda_rps = fit->lambda_rps;
  d.r_squared = finite(fit->r_squared);
  d.peak_concurrency = fit->peak_concurrency;
  d.peak_throughput_rps = fit->peak_throughput_rps;
  d.held_at_zero = fit->held_at_zero;
  d.flags = fit->flags;
  d.sigma_se = fit->sigma_se;
  d.kappa_se = fit->kappa_se;
  d.lambda_se = fit->lambda_se;
  for (const ThroughputPoint& p : sorted) {
    d.points.push_back(UslPoint{
        p.concurrency, p.throughput_rps,
        analysis::usl_throughput_rps(p.concurrency, fit->sigma, fit->kappa, fit->lambda_rps)});
  }
  // Kneedle needs strictly increasing levels; with repeated levels it is skipped.
  auto kneedle = analysis::find_kneedle(sorted);
  if (kneedle) {
    d.kneedle.label = kneedle->label;
    if (kneedle->index) {
      d.kneedle.concurrency = kneedle->knee_concurrency;
      d.kneedle.index = kneedle->index;
    }
    d.kneedle.x_scale = std::string(analysis::x_scale_name(kneedle->x_scale));
    d.kneedle.summary = kneedle->summary;
    d.kneedle.source = kKneedleSource;
  } else {
    d.kneedle.error = kneedle.status().message();
  }
  d.source = kUslSource;
  return d;
}

std::string render_usl_text(const UslDocument& d) {
  std::string out = fmt::format(
      "USL fit X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)) to {} points from {}\n",
      d.points.size(), d.from);
  out += fmt::format("  source: {}\n", d.source);
  std::vector<std::vector<std::string>> t;
  t.push_back({"concurrency", "measured(req/s)", "fitted(req/s)", "residual"});
  for (const UslPoint& p : d.points) {
    t.push_back({fmt::format("{:g}", p.concurrency), fmt::format("{:.5g}", p.throughput_rps),
                 fmt::format("{:.5g}", p.fitted_rps),
                 fmt::format("{:+.2f}%", 100 * (p.throughput_rps - p.fitted_rps) / p.fitted_rps)});
  }
  out += render_table(t);
  // "0.03878 +- 0.0021", or "0 (held)" for a parameter the chosen model leaves out.
  auto with_se = [](double v, const std::optional<double>& se, bool held) {
    if (held) return std::string("0 (held at 0 by the simpler model)");
    return se ? fmt::format("{:.4g} +- {:.2g}", v, *se) : fmt::format("{:.4g}", v);
  };
  const bool sigma_held = d.held_at_zero == "sigma" || d.held_at_zero == "sigma and kappa";
  const bool kappa_held = d.held_at_zero == "kappa" || d.held_at_zero == "sigma and kappa";
  out += fmt::format("  sigma   {}  (contention: the serialised fraction)\n",
                     with_se(d.sigma, d.sigma_se, sigma_held));
  out += fmt::format("  kappa   {}  (coherency: crosstalk per pair of requests)\n",
                     with_se(d.kappa, d.kappa_se, kappa_held));
  std::string measured_x1;
  for (const UslPoint& p : d.points) {
    if (p.concurrency == 1)
      measured_x1 = fmt::format("; the measured X(1) is {:.5g}", p.throughput_rps);
  }
  out += fmt::format(
      "  lambda  {} req/s  (the fitted slope at the origin, X(N) ~ lambda N for small N{})\n",
      with_se(d.lambda_rps, d.lambda_se, false), measured_x1);
  out += "  (+- one standard error, from the fit's Jacobian)\n";
  if (d.sigma > 0) {
    out += fmt::format(
        "  amdahl  1/sigma = {:.1f}; ceiling lambda/sigma = {:.5g} req/s: the most throughput "
        "contention alone would allow (at N = 1 + 1/sigma it halves the throughput per request "
        "in flight)\n",
        1 / d.sigma, d.lambda_rps / d.sigma);
  }
  out += fmt::format("  R^2     {}\n", d.r_squared ? fmt::format("{:.4f}", *d.r_squared) : "-");
  if (d.peak_concurrency) {
    out += fmt::format("  peak    N* = sqrt((1 - sigma) / kappa) = {:.1f}, X(N*) = {:.5g} req/s\n",
                       *d.peak_concurrency, d.peak_throughput_rps.value_or(NAN));
  } else if (d.sigma >= 1) {
    out += "  peak    none: sigma >= 1, throughput does not grow past the first level\n";
  } else if (d.sigma > 0) {
    out += fmt::format(
        "  peak    none (kappa = 0): throughput approaches lambda / sigma = {:.5g} req/s\n",
        d.lambda_rps / d.sigma);
  } else {
    out += "  peak    none (sigma = kappa = 0): throughput grows linearly\n";
  }
  std::string flags;
  for (const std::string& fl : d.flags) flags += (flags.empty() ? "" : "; ") + fl;
  out += fmt::format("  flags   {}\n", flags.empty() ? "none" : flags);
  if (d.kneedle.error) {
    out += fmt::format("Kneedle: skipped ({})\n", *d.kneedle.error);
  } else {
    out += fmt::format("Kneedle: {}\n", d.kneedle.summary.value_or(""));
  }
  return out;
}

}  // namespace knee::report
