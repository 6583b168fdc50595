#include "report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/usl.h"
#include "report/compare.h"
#include "report/document.h"
#include "report/external.h"
#include "report/html_text.h"
#include "report/render.h"
#include "report/sim.h"
#include "report/web_assets.h"

namespace knee::report {

using html_text::esc;
using html_text::script_json;
using html_text::script_text;
using nlohmann::json;

namespace {

json or_null(std::optional<double> v) { return v && std::isfinite(*v) ? json(*v) : json(); }

// Rounds to 6 significant digits so derived figures (curves, ms) do not carry float noise.
double round6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}
double ms_of(double ns) { return round6(ns / 1e6); }

std::string fixed(std::optional<double> v, int decimals) {
  if (!v || !std::isfinite(*v)) return "-";
  return fmt::format("{:.{}f}", *v, decimals);
}
std::string pct(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "-";
  return fmt::format("{:.0f}%", *v);
}

// "4251" or, with repeats, "4251 (4100-4300)".
std::string ranged(const Range& range, double scale, int decimals, bool with_range) {
  std::string out = fixed(range.median * scale, decimals);
  if (with_range) {
    out += fmt::format(" ({}&ndash;{})", fixed(range.min * scale, decimals),
                       fixed(range.max * scale, decimals));
  }
  return out;
}

// ---- one level (or run) of the document ----

struct Level {
  const LevelFigures* f = nullptr;
  double x = 0;         // N, or the arrival rate of an open-loop level
  int connections = 0;  // N, or the open loop's pool cap
  bool open = false;
  double throughput_rps = 0;
  std::optional<double> p50_ms, p99_ms, p999_ms, mean_ms;
  std::optional<double> x_times_mean_r;  // Little's N_eff
  std::optional<double> mean_in_system;  // open loop: L measured directly
  std::optional<double> server_cpu_pct, client_cpu_pct, cpus_busy_pct;
  std::string saturated, saturated_detail;
  double errors = 0;
  bool little_holds = true;
  bool client_bound = false;
};

Level level_of(const LevelFigures& f) {
  Level l;
  l.f = &f;
  const RunFigures& r = f.median;
  l.open = f.mode == LoopMode::kOpen;
  l.connections = r.concurrency ? *r.concurrency : r.max_connections.value_or(0);
  l.x = r.level_key();
  l.throughput_rps = f.ranges.throughput_rps.median;
  if (r.latency_ns.count > 0) {
    const LatencyRanges& lat = f.ranges.latency_ns;
    l.p50_ms = ms_of(lat.p50.median);
    l.p99_ms = ms_of(lat.p99.median);
    l.p999_ms = ms_of(lat.p999.median);
    l.mean_ms = ms_of(lat.mean.median);
  }
  l.x_times_mean_r = f.little.x_times_mean_r;
  l.little_holds = f.little.holds;
  if (r.open) l.mean_in_system = r.open->mean_in_system;
  if (r.resources) {
    if (r.resources->server) l.server_cpu_pct = r.resources->server->cpu_pct;
    l.cpus_busy_pct = r.resources->cpu_busy_all_pct;
  }
  l.client_cpu_pct = 100 * r.client_max_thread_cpu_demand;
  if (f.saturated) {
    l.saturated = f.saturated->resource;
    l.saturated_detail = f.saturated->detail;
  }
  l.errors = static_cast<double>(r.total_errors());
  l.client_bound = l.saturated == "client";
  return l;
}

std::string level_name(const Level& l) {
  return l.open ? fmt::format("rate {:.0f} req/s", l.x) : fmt::format("N = {}", l.connections);
}

// ---- charts ----

// Aligned columns from (x, y per series) rows: rows sharing an x are merged.
json aligned(const std::map<double, std::vector<std::optional<double>>>& rows, size_t series) {
  json data = json::array();
  json xs = json::array();
  std::vector<json> ys(series, json::array());
  for (const auto& [x, values] : rows) {
    xs.push_back(x);
    for (size_t s = 0; s < series; ++s)
      ys[s].push_back(s < values.size() ? or_null(values[s]) : json());
  }
  data.push_back(xs);
  for (json& y : ys) data.push_back(std::move(y));
  return data;
}

void put(std::map<double, std::vector<std::optional<double>>>& rows, double x, size_t series,
         size_t index, std::optional<double> y) {
  auto& row = rows[x];
  if (row.size() < series) row.resize(series);
  if (y && std::isfinite(*y)) row[index] = y;
}

json series(const std::string& label, int axis, const char* style) {
  return json{{"label", label}, {"axis", axis}, {"style", style}};
}

json chart(const char* id, const std::string& title, const std::string& caption,
           const std::string& x_label, const char* x_scale, json axes) {
  return json{{"id", id},
              {"title", title},
              {"caption", caption},
              {"x", {{"label", x_label}, {"scale", x_scale}}},
              {"axes", std::move(axes)},
              {"log_toggle", false},
              {"data", json::array()},
              {"series", json::array()},
              {"marks", json::array()},
              {"point_labels", json::array()}};
}

json axis(const std::string& label, const char* scale = "linear") {
  return json{{"label", label}, {"scale", scale}};
}

// What a page is drawn from: a run or a sweep document, seen the same way.
struct PageInput {
  bool sweep = false;
  std::string target, started_at;
  const LoadParams* params = nullptr;
  const HostFigures* host = nullptr;
  std::vector<Level> levels;
  std::optional<size_t> knee;          // a sweep's knee level
  const SweepDocument* doc = nullptr;  // a sweep's analysis (USL, Kneedle, demand)
  std::vector<std::string> warnings;   // the document's warnings and notes
};

PageInput page_input(const RunDocument& d) {
  PageInput p;
  p.target = d.target;
  p.started_at = d.started_at;
  p.params = &d.params;
  p.host = &d.host;
  p.levels.push_back(level_of(d.level));
  p.warnings = d.level.notes;
  return p;
}

PageInput page_input(const SweepDocument& d) {
  PageInput p;
  p.sweep = true;
  p.target = d.target;
  p.started_at = d.started_at;
  p.params = &d.params;
  p.host = &d.host;
  for (const LevelFigures& l : d.levels) p.levels.push_back(level_of(l));
  // A knee index from a saved document is trusted only inside the levels.
  if (d.knee.index && *d.knee.index < d.levels.size()) p.knee = d.knee.index;
  p.doc = &d;
  p.warnings = d.warnings;
  return p;
}

json spectrum_chart(const std::vector<std::pair<std::string, const RunFigures*>>& runs) {
  json c = chart("spectrum", "Latency by percentile",
                 "HdrHistogram's percentile spectrum: latency (ms) at each percentile, on a "
                 "1/(1-p) axis so the tail (99.9 %, 99.99 %, 99.999 %) gets as much room as the "
                 "median. A curve that bends up early means a heavy tail.",
                 "percentile", "percentile", json::array({axis("latency (ms)")}));
  c["log_toggle"] = true;
  const size_t n = runs.size();
  std::map<double, std::vector<std::optional<double>>> rows;
  for (size_t s = 0; s < n; ++s) {
    for (const SpectrumPoint& point : runs[s].second->spectrum) {
      if (point.percentile >= 100) continue;
      put(rows, round6(1.0 / (1.0 - point.percentile / 100.0)), n, s,
          ms_of(static_cast<double>(point.value_ns)));
    }
    c["series"].push_back(series(runs[s].first, 0, "line"));
  }
  c["data"] = aligned(rows, n);
  return c;
}

// Per-second throughput and p99 of the levels (or the run), one after the other on one time
// axis: seconds since the first measured phase began. Null rows between levels break the lines.
std::optional<json> over_time_chart(
    const std::vector<std::pair<std::string, const RunFigures*>>& runs) {
  json c = chart("over_time", "Throughput and p99, second by second",
                 "Each point is one second of a measured phase (warm-up left out): successful "
                 "responses per second (left axis) and their p99 (right axis). A first second "
                 "unlike the rest means the warm-up was too short; steps or spikes inside a level "
                 "mean the server (or the host) was not steady.",
                 "seconds since the first measured phase began", "linear",
                 json::array({axis("throughput (req/s)"), axis("p99 (ms)")}));
  std::map<double, std::vector<std::optional<double>>> rows;
  bool any = false;
  bool staged = false;  // --stages: the intended rate beside the throughput
  const double first_epoch = runs.front().second->measure_start_epoch_s;
  double offset = 0;  // without start times: levels laid end to end, 1 s apart
  for (const auto& [name, run] : runs) {
    if (run->intervals.empty()) {
      offset += run->duration_s + 1;
      continue;
    }
    const double epoch = run->measure_start_epoch_s;
    const double base = epoch > 0 && first_epoch > 0 ? epoch - first_epoch : offset;
    double end = base;
    for (const IntervalFigures& i : run->intervals) {
      const double start = base + i.start_s;
      put(rows, round6(start), 3, 0, round6(i.throughput_rps));
      put(rows, round6(start), 3, 1,
          i.responses > 0 ? std::optional(ms_of(static_cast<double>(i.p99_ns))) : std::nullopt);
      if (i.target_rps) {
        put(rows, round6(start), 3, 2, round6(*i.target_rps));
        staged = true;
      }
      end = std::max(end, start + i.length_s);
      any = true;
    }
    if (runs.size() > 1) {
      c["marks"].push_back(json{{"x", round6(base)}, {"label", name}, {"style", "level"}});
      put(rows, round6(end), 3, 0, std::nullopt);  // a gap before the next level
    }
    offset = end + 1;
  }
  if (!any) return std::nullopt;
  c["series"].push_back(series("throughput (req/s)", 0, "line"));
  c["series"].push_back(series("p99 (ms)", 1, "line"));
  if (staged) c["series"].push_back(series("intended rate (req/s)", 0, "line"));
  c["data"] = aligned(rows, staged ? 3 : 2);
  return c;
}

json knee_marks(const PageInput& page) {
  json marks = json::array();
  if (page.knee) {
    const Level& k = page.levels[*page.knee];
    marks.push_back(json{{"x", k.x}, {"label", "knee: " + level_name(k)}, {"style", "knee"}});
  }
  return marks;
}

std::vector<std::pair<std::string, const RunFigures*>> runs_of(const PageInput& page) {
  std::vector<std::pair<std::string, const RunFigures*>> runs;
  for (const Level& l : page.levels) runs.emplace_back(level_name(l), &l.f->median);
  return runs;
}

std::vector<json> sweep_charts(const PageInput& page) {
  const std::vector<Level>& levels = page.levels;
  std::vector<json> charts;
  const bool open = !levels.empty() && levels.front().open;
  const std::string x_label = open ? "arrival rate (req/s)" : "concurrency N (requests in flight)";
  const json marks = knee_marks(page);

  // Throughput with the USL curve.
  {
    json c = chart("throughput", "Throughput against " + std::string(open ? "rate" : "concurrency"),
                   "Measured throughput X per level (median run). The knee is the first level "
                   "after which doubling gains less than 10 % throughput while p99 grows at least "
                   "1.5x. The dashed curve is the Universal Scalability Law fitted to the points: "
                   "its bend is contention (sigma), its fall coherency (kappa).",
                   x_label, "log2", json::array({axis("throughput (req/s)")}));
    std::map<double, std::vector<std::optional<double>>> rows;
    for (const Level& l : levels) put(rows, l.x, 2, 0, l.throughput_rps);
    c["series"].push_back(series("measured X", 0, "points"));
    if (page.doc->usl && !open && levels.size() >= 2) {
      const UslFigures& u = *page.doc->usl;
      const double lo = levels.front().x, hi = levels.back().x;
      for (int i = 0; i < kUslCurvePoints; ++i) {
        const double n = round6(lo * std::pow(hi / lo, i / double(kUslCurvePoints - 1)));
        put(rows, n, 2, 1, round6(analysis::usl_throughput_rps(n, u.sigma, u.kappa, u.lambda_rps)));
      }
      c["series"].push_back(
          series(fmt::format("USL fit (sigma {:.4f}, kappa {:.6f})", u.sigma, u.kappa), 0, "dash"));
    }
    c["data"] = aligned(rows, c["series"].size());
    c["marks"] = marks;
    if (page.doc->kneedle && !open) {
      const double kneedle = page.doc->kneedle->concurrency;
      c["marks"].push_back(json{{"x", kneedle},
                                {"label", fmt::format("Kneedle: {:.0f}", kneedle)},
                                {"style", "secondary"}});
    }
    charts.push_back(std::move(c));
  }
  // p50 and p99.
  {
    json c = chart("latency", "Latency against " + std::string(open ? "rate" : "concurrency"),
                   "Median and p99 of successful responses per level, ms. Past the knee latency "
                   "grows in proportion to N while throughput stays flat: requests only queue.",
                   x_label, "log2", json::array({axis("latency (ms)")}));
    c["log_toggle"] = true;
    std::map<double, std::vector<std::optional<double>>> rows;
    for (const Level& l : levels) {
      put(rows, l.x, 2, 0, l.p50_ms);
      put(rows, l.x, 2, 1, l.p99_ms);
    }
    c["series"].push_back(series("p50", 0, "line"));
    c["series"].push_back(series("p99", 0, "line"));
    c["data"] = aligned(rows, 2);
    c["marks"] = marks;
    charts.push_back(std::move(c));
  }
  // Little's law.
  {
    json c = chart(
        "little", open ? "Little's law: L = X * R" : "Little's law: N = X * R",
        open ? "Throughput times mean latency against the mean number of requests in the system, "
               "measured directly. On the diagonal the level was steady; above it the queue grew."
             : "Throughput times mean latency against N. In a closed loop every point must lie on "
               "the diagonal; a point below it means the client did not keep N requests in flight.",
        open ? "mean number in the system L" : "concurrency N (requests in flight)", "log2",
        json::array({axis("X * mean R", "log2")}));
    std::map<double, std::vector<std::optional<double>>> rows;
    for (const Level& l : levels) {
      std::optional<double> x = open ? l.mean_in_system : std::optional<double>(l.x);
      if (!x || *x <= 0) continue;
      put(rows, round6(*x), 2, 0,
          l.x_times_mean_r ? std::optional(round6(*l.x_times_mean_r)) : std::nullopt);
      put(rows, round6(*x), 2, 1, round6(*x));
    }
    c["series"].push_back(series("X * mean R", 0, "points"));
    c["series"].push_back(series(open ? "L (the law)" : "N (the law)", 0, "dash"));
    c["data"] = aligned(rows, 2);
    charts.push_back(std::move(c));
  }
  // Spectrum per level, then over time.
  const auto runs = runs_of(page);
  if (!runs.empty()) charts.push_back(spectrum_chart(runs));
  if (!runs.empty()) {
    if (auto c = over_time_chart(runs)) charts.push_back(std::move(*c));
  }
  // CPU per level and the saturated resource.
  {
    std::string at_knee;
    if (page.knee) {
      const Level& k = levels[*page.knee];
      if (!k.saturated.empty()) at_knee = fmt::format(": {} at the knee", k.saturated);
    }
    json c = chart("cpu", "CPU per level and the saturated resource" + at_knee,
                   "The server process's CPU (% of one core), the busiest client thread's CPU "
                   "demand (% of a core, used + waiting) and all CPUs' busy share, sampled over "
                   "each level's measured phase. The word at each level is the resource that "
                   "limited it by knee's rule (client, cpu, disk, network, or none).",
                   x_label, "log2", json::array({axis("CPU (%)")}));
    std::map<double, std::vector<std::optional<double>>> rows;
    std::vector<std::pair<std::string, std::optional<double> Level::*>> wanted = {
        {"server process (% of one core)", &Level::server_cpu_pct},
        {"busiest client thread (% of a core)", &Level::client_cpu_pct},
        {"all CPUs busy (%)", &Level::cpus_busy_pct}};
    std::vector<std::pair<std::string, std::optional<double> Level::*>> present;
    for (const auto& w : wanted) {
      for (const Level& l : levels) {
        if (l.*(w.second)) {
          present.push_back(w);
          break;
        }
      }
    }
    for (const Level& l : levels) {
      rows[l.x].resize(present.size());
      for (size_t s = 0; s < present.size(); ++s) {
        auto v = l.*(present[s].second);
        put(rows, l.x, present.size(), s, v ? std::optional(round6(*v)) : std::nullopt);
      }
    }
    for (const auto& p : present) c["series"].push_back(series(p.first, 0, "line"));
    if (!present.empty()) {
      for (size_t i = 0; i < levels.size(); ++i) {
        if (levels[i].saturated.empty()) continue;
        c["point_labels"].push_back(
            json{{"series", 0}, {"x", levels[i].x}, {"text", levels[i].saturated}});
      }
      c["data"] = aligned(rows, present.size());
      c["marks"] = marks;
      charts.push_back(std::move(c));
    }
  }
  return charts;
}

// ---- the page ----

// "warm-up may be too short" from the per-second data: a first second with under 80 % of the
// median throughput of the seconds after it, or over twice their median p99. The last second is
// left out (it holds the grace period's responses); needs at least 3 seconds.
std::vector<std::string> warmup_notes(const PageInput& page) {
  std::vector<std::string> notes;
  if (page.params->warmup_s <= 0) {
    notes.push_back(
        "no warm-up: the first requests include connection set-up and cold caches, and count");
  }
  for (const Level& l : page.levels) {
    const std::vector<IntervalFigures>& iv = l.f->median.intervals;
    if (iv.size() < 4) continue;
    std::vector<double> x, p99;
    for (size_t i = 1; i + 1 < iv.size(); ++i) {
      x.push_back(iv[i].throughput_rps);
      p99.push_back(static_cast<double>(iv[i].p99_ns));
    }
    std::sort(x.begin(), x.end());
    std::sort(p99.begin(), p99.end());
    const double x_med = x[x.size() / 2], p99_med = p99[p99.size() / 2];
    const double x0 = iv[0].throughput_rps;
    const double p0 = static_cast<double>(iv[0].p99_ns);
    if (x0 < 0.8 * x_med || (p99_med > 0 && p0 > 2 * p99_med)) {
      notes.push_back(fmt::format(
          "warm-up may be too short at {}: its first measured second ran {:.0f} req/s with p99 "
          "{:.2f} ms, the seconds after it {:.0f} req/s with p99 {:.2f} ms (median)",
          level_name(l), x0, p0 / 1e6, x_med, p99_med / 1e6));
    }
  }
  return notes;
}

std::string list_items(const std::vector<std::string>& items, const char* cls) {
  if (items.empty()) return "";
  std::string out = fmt::format("<ul class=\"{}\">\n", cls);
  for (const std::string& i : items) out += "<li>" + esc(i) + "</li>\n";
  return out + "</ul>\n";
}

std::string definition_list(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "<dl>\n";
  for (const auto& [k, v] : rows) {
    if (v.empty()) continue;
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", esc(k), esc(v));
  }
  return out + "</dl>\n";
}

std::string host_section(const HostFigures& host) {
  return "<section class=\"host\">\n<h2>Host</h2>\n" +
         definition_list({{"host", host.hostname},
                          {"CPU", host.cpu_model},
                          {"logical CPUs", fmt::format("{}", host.logical_cpus)},
                          {"kernel", host.kernel},
                          {"OS", host.os},
                          {"governor", host.governor},
                          {"turbo", host.turbo},
                          {"compiler", host.compiler},
                          {"build", host.build_type},
                          {"knee", host.knee_version.value_or("")},
                          {"flags", host.cxx_flags},
                          {"clock resolution", fmt::format("{} ns", host.clock_resolution_ns)},
                          {"load average (1 min)",
                           host.load_avg_1m ? fmt::format("{:.2f}", *host.load_avg_1m) : ""}}) +
         "</section>\n";
}

// A closed loop's load in words: "64 connections", or with streams or pipelining "64
// connections x 10 = 640 in flight".
std::string closed_load(int concurrency, int per_connection) {
  if (per_connection <= 1) return fmt::format("closed loop, {} connections", concurrency);
  return fmt::format("closed loop, {} connections x {} = {} in flight",
                     concurrency / per_connection, per_connection, concurrency);
}

std::string params_list(const PageInput& page) {
  const LoadParams& p = *page.params;
  const std::vector<Level>& levels = page.levels;
  const bool open = !levels.empty() && levels.front().open;
  std::string load;
  if (page.sweep) {
    std::string xs;
    for (const Level& l : levels) xs += (xs.empty() ? "" : ", ") + fmt::format("{:g}", l.x);
    load = fmt::format("{} levels, {}: {}", levels.size(),
                       open ? "open loop, arrival rates (req/s)" : "closed loop, concurrency", xs);
  } else if (!levels.empty()) {
    load = open ? fmt::format("open loop, {:.0f} req/s ({} arrivals), up to {} connections",
                              levels.front().x, p.arrival, levels.front().connections)
                : closed_load(levels.front().connections, p.per_connection.value_or(1));
  }
  auto seconds = [](double v) { return fmt::format("{:g} s", v); };
  const ConnectFigures* connects = nullptr;
  if (!levels.empty() && levels.front().f->median.connects) {
    connects = &*levels.front().f->median.connects;
  }
  return definition_list(
      {{"target", page.target},
       {"request", p.mix ? "mix " + *p.mix + " on " + p.url : p.method + " " + p.url},
       {"protocol", protocol_name(p, connects)},
       {"started", page.started_at},
       {"load", load},
       {page.sweep ? "measured per level" : "measured", seconds(p.duration_s)},
       {"warm-up", seconds(p.warmup_s)},
       {"client threads", fmt::format("{}", p.threads)},
       {"repeats", fmt::format("{}", p.repeats)},
       {"timeout", seconds(p.timeout_s)},
       {"grace", seconds(p.grace_s)}});
}

std::string summary_table(const PageInput& page) {
  const std::vector<Level>& levels = page.levels;
  const bool open = !levels.empty() && levels.front().open;
  std::string out = "<table class=\"summary\">\n<thead><tr>";
  std::vector<std::string> head;
  if (open) head = {"rate (req/s)", "achieved (req/s)"};
  head.insert(head.end(),
              {open ? "max connections" : "concurrency", "requests", "throughput (req/s)",
               "p50 (ms)", "p99 (ms)", "p99.9 (ms)", open ? "X*meanR (=L?)" : "X*meanR (=N?)",
               "errors", "server CPU", "client CPU", "saturated"});
  for (const std::string& h : head) out += "<th>" + esc(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < levels.size(); ++i) {
    const Level& l = levels[i];
    const LevelFigures& f = *l.f;
    const bool with_range = f.repeats > 1;
    const bool is_knee = page.knee && *page.knee == i;
    out += is_knee ? "<tr class=\"knee\">" : "<tr>";
    std::vector<std::string> cells;
    if (open) {
      cells.push_back(fixed(l.x, 0));
      cells.push_back(fixed(f.median.open->achieved_rate_rps, 0));
    }
    cells.push_back(std::to_string(l.connections));
    cells.push_back(fixed(static_cast<double>(f.median.requests), 0));
    cells.push_back(ranged(f.ranges.throughput_rps, 1, 0, with_range));
    cells.push_back(ranged(f.ranges.latency_ns.p50, 1e-6, 2, with_range));
    cells.push_back(ranged(f.ranges.latency_ns.p99, 1e-6, 2, with_range));
    cells.push_back(ranged(f.ranges.latency_ns.p999, 1e-6, 2, with_range));
    cells.push_back(fixed(l.x_times_mean_r, 2));
    cells.push_back(fixed(l.errors, 0));
    cells.push_back(pct(l.server_cpu_pct));
    cells.push_back(pct(l.client_cpu_pct));
    // Cells are already escaped figures except the resource name.
    for (const std::string& c : cells) out += "<td>" + c + "</td>";
    out += "<td class=\"saturated\">" + esc(l.saturated.empty() ? "-" : l.saturated) +
           (is_knee ? " &larr; knee" : "") + "</td></tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

// A mix's endpoints at every level (the run's one level): share, requests, throughput, latency.
std::string endpoints_table(const PageInput& page) {
  const std::vector<Level>& levels = page.levels;
  if (levels.empty() || !levels.front().f->median.endpoints) return "";
  std::string out = "<table class=\"summary endpoints\">\n<thead><tr>";
  std::vector<std::string> head;
  if (page.sweep) head.push_back(levels.front().open ? "rate (req/s)" : "concurrency");
  head.insert(head.end(), {"endpoint", "share", "sent", "ok", "throughput (req/s)", "p50 (ms)",
                           "p99 (ms)", "max (ms)", "errors"});
  for (const std::string& h : head) out += "<th>" + esc(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const Level& l : levels) {
    if (!l.f->median.endpoints) continue;
    for (const EndpointFigures& e : *l.f->median.endpoints) {
      const bool timed = e.latency_ns.count > 0;
      auto latency = [&](int64_t ns) {
        return timed ? fixed(static_cast<double>(ns) / 1e6, 2) : std::string("-");
      };
      uint64_t errors = 0;
      for (const auto& [kind, n] : e.errors) errors += n;
      out += "<tr>";
      if (page.sweep) out += "<td>" + fixed(l.x, 0) + "</td>";
      out += "<td class=\"name\">" + esc(e.name) + "</td><td>" + fixed(100 * e.share, 1) +
             " %</td><td>" + std::to_string(e.sent) + "</td><td>" + std::to_string(e.ok) +
             "</td><td>" + fixed(e.throughput_rps, 1) + "</td><td>" + latency(e.latency_ns.p50) +
             "</td><td>" + latency(e.latency_ns.p99) + "</td><td>" + latency(e.latency_ns.max) +
             "</td><td>" + std::to_string(errors) + "</td></tr>\n";
    }
  }
  return out + "</tbody>\n</table>\n";
}

// The target's processes behind a balancer (--stack) at every level: CPU, and the requests
// each replica answered with its share (balanced counts beside the latency they bought).
std::string processes_table(const PageInput& page) {
  const std::vector<Level>& levels = page.levels;
  auto resources = [](const Level& l) -> const ResourceFigures* {
    return l.f->median.resources ? &*l.f->median.resources : nullptr;
  };
  if (levels.empty() || resources(levels.front()) == nullptr ||
      resources(levels.front())->backends.empty()) {
    return "";
  }
  std::string out = "<table class=\"summary processes\">\n<thead><tr>";
  std::vector<std::string> head;
  if (page.sweep) head.push_back(levels.front().open ? "rate (req/s)" : "concurrency");
  head.insert(head.end(),
              {"process", "pid", "CPU (% of one core)", "busiest thread (%)", "requests", "share"});
  for (const std::string& h : head) out += "<th>" + esc(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  auto pct = [](const std::optional<double>& v) { return v ? fixed(*v, 0) : std::string("-"); };
  for (const Level& l : levels) {
    const ResourceFigures* r = resources(l);
    if (r == nullptr) continue;
    double total = 0;
    for (const ServerFigures& b : r->backends) total += b.requests.value_or(0);
    std::vector<std::pair<const ServerFigures*, bool>> rows;
    if (r->server) rows.emplace_back(&*r->server, false);
    for (const ServerFigures& b : r->backends) rows.emplace_back(&b, true);
    for (const auto& [p, counted] : rows) {
      const bool known = counted && p->requests;
      out += "<tr>";
      if (page.sweep) out += "<td>" + fixed(l.x, 0) + "</td>";
      out += "<td class=\"name\">" + esc(p->name.value_or("server")) + "</td><td>" +
             std::to_string(p->pid) + "</td><td>" + pct(p->cpu_pct) + "</td><td>" +
             pct(p->busiest_thread_cpu_pct) + "</td><td>" + (known ? fixed(*p->requests, 0) : "-") +
             "</td><td>" +
             (known && total > 0 ? fixed(100 * *p->requests / total, 1) + " %" : "-") +
             "</td></tr>\n";
    }
  }
  return out + "</tbody>\n</table>\n";
}

std::vector<std::string> sweep_verdicts(const PageInput& page) {
  const SweepDocument& doc = *page.doc;
  const std::vector<Level>& levels = page.levels;
  std::vector<std::string> v;
  v.push_back(doc.knee.summary);
  if (!levels.empty()) {
    size_t at = page.knee ? *page.knee : levels.size() - 1;
    const char* where = page.knee ? "at the knee" : "at the last level";
    if (page.knee && doc.knee.saturated_index && *doc.knee.saturated_index != *page.knee &&
        *doc.knee.saturated_index < levels.size()) {
      at = *doc.knee.saturated_index;
      where = "where the server fell behind";
    }
    if (!levels[at].saturated.empty()) {
      v.push_back(fmt::format("saturated resource {} ({}): {}: {}", where, level_name(levels[at]),
                              levels[at].saturated, levels[at].saturated_detail));
    }
  }
  if (doc.usl) {
    const UslFigures& u = *doc.usl;
    std::string line = fmt::format(
        "USL fit: sigma {:.4f} (contention), kappa {:.6f} (coherency), lambda {:.1f} req/s, R^2 "
        "{}",
        u.sigma, u.kappa, u.lambda_rps, fixed(u.r_squared, 3));
    if (u.peak_concurrency && u.peak_throughput_rps) {
      line += fmt::format("; peak N* = {:.1f} at X(N*) = {:.0f} req/s", *u.peak_concurrency,
                          *u.peak_throughput_rps);
    }
    for (const std::string& f : u.flags) line += "; " + f;
    v.push_back(line);
  }
  if (doc.kneedle && !doc.kneedle->summary.empty()) v.push_back("Kneedle: " + doc.kneedle->summary);
  if (doc.service_demand) {
    double best = 0;
    for (const Level& l : levels) best = std::max(best, l.throughput_rps);
    const DemandFigures& sd = *doc.service_demand;
    const std::string where = sd.level_index && *sd.level_index < levels.size()
                                  ? " at " + level_name(levels[*sd.level_index])
                                  : "";
    v.push_back(
        fmt::format("{} CPU per request D = U / X = {:.3f} ms{}: the CPU alone bounds throughput "
                    "at 1/D = {:.0f} req/s (measured maximum {:.0f} req/s)",
                    sd.process ? "busiest process's (" + *sd.process + ")" : std::string("server"),
                    sd.cpu_demand_ns / 1e6, where, sd.cpu_bound_rps, best));
    if (sd.total_cpu_demand_ns && sd.total_cpu_bound_rps) {
      v.push_back(fmt::format(
          "all the stack's processes together: sum D = {:.3f} ms per request; the host's CPUs "
          "bound them at {:.0f} req/s",
          *sd.total_cpu_demand_ns / 1e6, *sd.total_cpu_bound_rps));
    }
  }
  std::vector<std::string> broken;
  for (const Level& l : levels) {
    if (!l.little_holds) broken.push_back(level_name(l));
  }
  const bool open = !levels.empty() && levels.front().open;
  if (broken.empty()) {
    v.push_back(open ? "Little's law L = X * R holds within 5 % at every level"
                     : "Little's law N = X * R holds within 5 % at every level: the client kept "
                       "N requests in flight");
  } else {
    std::string at;
    for (const std::string& b : broken) at += (at.empty() ? "" : ", ") + b;
    v.push_back("Little's law is broken (off by more than 5 %) at " + at + ": see the warnings");
  }
  return v;
}

// Verdicts both kinds share: the client, the warm-up, the errors.
void common_verdicts(const PageInput& page, std::vector<std::string>& v) {
  std::vector<std::string> bound;
  double worst = 0;
  for (const Level& l : page.levels) {
    if (l.client_bound) bound.push_back(level_name(l));
    worst = std::max(worst, l.client_cpu_pct.value_or(0));
  }
  if (bound.empty()) {
    v.push_back(fmt::format(
        "the client kept up: its busiest thread asked for at most {:.0f} % of a core (at 90 % "
        "a level is client-bound and measures knee, not the server)",
        worst));
  } else {
    std::string at;
    for (const std::string& b : bound) at += (at.empty() ? "" : ", ") + b;
    v.push_back("CLIENT-BOUND at " + at +
                ": those levels measure knee, not the server; add client threads (-t) or a "
                "second client host");
  }
  for (std::string& n : warmup_notes(page)) v.push_back(std::move(n));
  double errors = 0;
  for (const Level& l : page.levels) errors += l.errors;
  if (errors == 0) {
    v.push_back("no errors");
  } else {
    v.push_back(fmt::format("{:.0f} errors in all (by kind and cause in the JSON)", errors));
  }
}

std::vector<std::string> run_verdicts(const Level& l) {
  const RunFigures& r = l.f->median;
  std::vector<std::string> v;
  v.push_back(fmt::format("{:.1f} req/s; latency p50 {} ms, p99 {} ms, p99.9 {} ms, max {} ms",
                          l.throughput_rps, fixed(l.p50_ms, 3), fixed(l.p99_ms, 3),
                          fixed(l.p999_ms, 3),
                          fixed(ms_of(static_cast<double>(r.latency_ns.max)), 3)));
  if (l.open) {
    const OpenLoopFigures& o = *r.open;
    v.push_back(
        fmt::format("open loop: {:.1f} req/s achieved of {:.1f} asked for; {} scheduled, "
                    "{} never sent (still waiting for a connection at the end)",
                    o.achieved_rate_rps, l.x, o.scheduled, o.never_sent));
    v.push_back(fmt::format(
        "service time (actual send to response) p50 {} ms, p99 {} ms; send lag (actual minus "
        "intended send) p50 {} ms, p99 {} ms",
        fixed(ms_of(static_cast<double>(o.service_time_ns.p50)), 3),
        fixed(ms_of(static_cast<double>(o.service_time_ns.p99)), 3),
        fixed(ms_of(static_cast<double>(o.send_lag_ns.p50)), 3),
        fixed(ms_of(static_cast<double>(o.send_lag_ns.p99)), 3)));
    v.push_back(fmt::format(
        "{} of {} requests sent over 1 ms late ({}); at most {} waited for a connection at "
        "once (backlog); every connection busy {} of the time",
        o.late, r.sent,
        pct(r.sent > 0 ? std::optional<double>(100.0 * static_cast<double>(o.late) /
                                               static_cast<double>(r.sent))
                       : std::nullopt),
        o.max_backlog, pct(100 * o.pool_full_share)));
  }
  v.push_back(fmt::format(
      "warm-up: {} sent, {} completed, {} failed, {} aborted, {} carried over "
      "into the measured phase",
      r.warmup.sent, r.warmup.completed, r.warmup.failed, r.warmup.aborted, r.warmup.carried_over));
  v.push_back(fmt::format(
      "transfer: {:.0f} bytes/s received ({} bytes, {} of them body), {:.0f} "
      "bytes/s sent",
      r.bytes.received_per_s, r.bytes.received, r.bytes.received_body, r.bytes.sent_per_s));
  if (l.x_times_mean_r) {
    v.push_back(fmt::format("Little's law: X * mean R = {:.2f} against {} {}", *l.x_times_mean_r,
                            l.open ? "a mean in the system of" : "N =",
                            l.open ? fixed(l.mean_in_system, 2) : std::to_string(l.connections)) +
                (l.little_holds ? " (holds within 5 %)" : " (BROKEN: off by more than 5 %)"));
  }
  if (!l.saturated.empty()) v.push_back("saturated: " + l.saturated + ": " + l.saturated_detail);
  if (l.f->saturated) {
    for (const std::string& w : l.f->saturated->warnings) v.push_back("warning: " + w);
  }
  for (const std::string& n : l.f->notes) v.push_back("note: " + n);
  return v;
}

std::string chart_figures(const json& data) {
  std::string out =
      "<section class=\"charts\">\n<h2>Charts</h2>\n<noscript><p class=\"warning\">The charts "
      "need JavaScript; the table above has every figure.</p></noscript>\n<div "
      "class=\"chart-grid\">\n";
  for (const json& c : data["charts"]) {
    out += fmt::format(
        "<figure class=\"chart\" id=\"chart-{}\">\n<figcaption><h3>{}</h3><p>{}</p></figcaption>\n"
        "<div class=\"plot\"></div>\n</figure>\n",
        esc(c["id"].get<std::string>()), esc(c["title"].get<std::string>()),
        esc(c["caption"].get<std::string>()));
  }
  return out + "</div>\n</section>\n";
}

// The page: `body` (header, verdicts, table), the charts, then `tail` (the host).
std::string page(const std::string& title, const std::string& body, const std::string& tail,
                 const json& data) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + esc(title) + "</title>\n";
  out += "<style>\n" + std::string(web::uplot_css()) + "\n</style>\n";
  out += "<style>\n" + std::string(web::report_css()) + "\n</style>\n";
  out += "</head>\n<body>\n";
  out += body;
  out += chart_figures(data);
  out += tail;
  out += "<pre id=\"knee-selftest\" hidden></pre>\n";
  out += "<script type=\"application/json\" id=\"knee-data\">" + script_json(data) + "</script>\n";
  out += "<script>\n" + script_text(web::uplot_js()) + "\n</script>\n";
  out += "<script>\n" + script_text(web::report_js()) + "\n</script>\n";
  out += "</body>\n</html>\n";
  return out;
}

json chart_data(const PageInput& page) {
  json data{{"kind", page.sweep ? "sweep" : "run"}, {"charts", json::array()}};
  if (page.sweep) {
    for (json& c : sweep_charts(page)) data["charts"].push_back(std::move(c));
  } else {
    std::vector<std::pair<std::string, const RunFigures*>> runs{
        {"run", &page.levels.front().f->median}};
    data["charts"].push_back(spectrum_chart(runs));
    if (auto c = over_time_chart(runs)) data["charts"].push_back(std::move(*c));
  }
  return data;
}

// "Simulate this server": the Traffic Lab this sweep calibrates (report/sim.h), and the command
// that writes it. Empty when the sweep cannot calibrate one (no throughput).
std::string sim_section(const SweepDocument& doc) {
  auto c = calibrate_sim(doc, "SWEEP.json", 1);
  if (!c) return "";
  return "<section class=\"simulate\">\n<h2>Simulate this server</h2>\n<p>" +
         esc(fmt::format("This sweep calibrates a simulation of a {}-loop server of one worker "
                         "(an event loop): {}.",
                         c->loop, c->how)) +
         (c->warning ? " " + esc("Warning: " + *c->warning) : std::string()) +
         " <code>knee model sim --from SWEEP.json -o sim.html</code> (SWEEP.json: this sweep's "
         "<code>--json</code> file) writes the Traffic Lab: an offline page where the load moves "
         "on a slider, the simulated curve is drawn over these measured levels, and each level "
         "is marked where the two agree or part. Give <code>--workers W</code> for a server of W "
         "workers.</p>\n</section>\n";
}

std::string render_page(const PageInput& in, const std::string& extra = "") {
  const json data = chart_data(in);
  const std::string title =
      fmt::format("knee {}: {} {}", in.sweep ? "sweep" : "run", in.params->method, in.params->url);
  std::string body;
  body += "<header>\n<h1>" + esc(title) + "</h1>\n";
  body += "<p class=\"when\">measured " + esc(in.started_at) + " on " + esc(in.host->hostname) +
          "</p>\n";
  body += params_list(in) + "</header>\n";
  std::vector<std::string> verdicts =
      in.sweep ? sweep_verdicts(in) : run_verdicts(in.levels.front());
  common_verdicts(in, verdicts);
  body += "<section class=\"verdicts\">\n<h2>Verdicts</h2>\n" + list_items(verdicts, "verdicts") +
          "</section>\n";
  std::vector<std::string> warnings = in.warnings;
  for (const std::string& w : in.host->warnings) warnings.push_back("host: " + w);
  if (!warnings.empty()) {
    body += "<section class=\"warnings\">\n<h2>Warnings</h2>\n" + list_items(warnings, "warnings") +
            "</section>\n";
  }
  body += std::string("<section class=\"table\">\n<h2>") + (in.sweep ? "Levels" : "Result") +
          "</h2>\n" + summary_table(in) + "</section>\n";
  if (const std::string endpoints = endpoints_table(in); !endpoints.empty()) {
    body += "<section class=\"table\">\n<h2>Per endpoint</h2>\n" + endpoints + "</section>\n";
  }
  if (const std::string processes = processes_table(in); !processes.empty()) {
    body += "<section class=\"table\">\n<h2>Per process</h2>\n" + processes + "</section>\n";
  }
  body += extra;
  return page(title, body, host_section(*in.host), data);
}

}  // namespace

json html_chart_data(const RunDocument& doc) { return chart_data(page_input(doc)); }
json html_chart_data(const SweepDocument& doc) { return chart_data(page_input(doc)); }
std::string render_html(const RunDocument& doc) { return render_page(page_input(doc)); }
std::string render_html(const SweepDocument& doc) {
  return render_page(page_input(doc), sim_section(doc));
}

core::Result<json> compare_chart_data(const SweepDocument& a, const SweepDocument& b,
                                      const std::string& label_a, const std::string& label_b) {
  const PageInput pa = page_input(a), pb = page_input(b);
  const bool open = a.mode() == LoopMode::kOpen;
  if (b.mode() != a.mode()) {
    return core::Status::invalid_argument(
        "report: one sweep is closed loop (x: connections), the other open loop (x: arrival "
        "rate); their curves share no axis, so they are not overlaid");
  }
  const std::string x_label = open ? "arrival rate (req/s)" : "concurrency N (requests in flight)";
  json data{{"kind", "compare"}, {"charts", json::array()}};
  // A figure's range over a level's repeats: the median run's value and the min and max.
  struct Figure {
    const char* id;
    const char* title;
    const char* axis;
    const Range& (*range)(const LevelFigures&);
    double scale;  // to the axis' unit
  };
  const Figure figures[] = {
      {"throughput", "Throughput: A against B", "throughput (req/s)",
       [](const LevelFigures& f) -> const Range& { return f.ranges.throughput_rps; }, 1.0},
      {"p99", "p99 latency: A against B", "p99 (ms)",
       [](const LevelFigures& f) -> const Range& { return f.ranges.latency_ns.p99; }, 1e-6}};
  const bool bands = a.params.repeats > 1 || b.params.repeats > 1;
  for (const Figure& f : figures) {
    json c = chart(f.id, f.title,
                   std::string("The same figure of two sweeps per level (median runs), A solid, B "
                               "dashed") +
                       (bands ? "; the shaded bands span each level's repeats, min to max." : "."),
                   x_label, "log2", json::array({axis(f.axis)}));
    if (std::string_view(f.id) == "p99") c["log_toggle"] = true;
    // Series: A, B, then per side with repeats its max and min (a band between them).
    constexpr size_t kSeries = 6;
    std::map<double, std::vector<std::optional<double>>> rows;
    const std::vector<Level>* sides[] = {&pa.levels, &pb.levels};
    for (size_t side = 0; side < 2; ++side) {
      for (const Level& l : *sides[side]) {
        const bool latency = l.f->median.latency_ns.count > 0 || std::string_view(f.id) != "p99";
        const Range& r = f.range(*l.f);
        put(rows, l.x, kSeries, side,
            latency ? std::optional<double>(r.median * f.scale) : std::nullopt);
        if (latency && l.f->repeats > 1) {
          put(rows, l.x, kSeries, 2 + 2 * side, r.max * f.scale);
          put(rows, l.x, kSeries, 3 + 2 * side, r.min * f.scale);
        }
      }
    }
    c["series"].push_back(series("A: " + label_a, 0, "line"));
    c["series"].push_back(series("B: " + label_b, 0, "dash"));
    c["bands"] = json::array();
    for (size_t side = 0; side < 2; ++side) {
      const std::string name = side == 0 ? "A" : "B";
      json hi = series(name + " max of repeats", 0, "band"),
           lo = series(name + " min of repeats", 0, "band");
      hi["of"] = side;
      lo["of"] = side;
      c["series"].push_back(std::move(hi));
      c["series"].push_back(std::move(lo));
      c["bands"].push_back(json{{"upper", 2 + 2 * side}, {"lower", 3 + 2 * side}, {"of", side}});
    }
    c["data"] = aligned(rows, kSeries);
    data["charts"].push_back(std::move(c));
  }
  return data;
}

core::Result<std::string> render_compare_html(const SweepDocument& a, const SweepDocument& b,
                                              const std::string& label_a,
                                              const std::string& label_b) {
  auto data = compare_chart_data(a, b, label_a, label_b);
  if (!data) return data.status();
  auto cmp = compare(Document(a), label_a, Document(b), label_b);
  if (!cmp) return cmp.status();
  const std::string title = "knee compare: " + label_a + " against " + label_b;
  std::string body = "<header>\n<h1>" + esc(title) + "</h1>\n</header>\n";
  // The verdicts, as the text compare prints them: a difference counts only when both files
  // have repeats and their min-max ranges do not overlap.
  body +=
      "<section class=\"table\">\n<h2>A against B, level by level</h2>\n<p>Figures are "
      "the median (min&ndash;max) over each level's repeats; a difference counts when both "
      "files have repeats and the two ranges do not overlap.</p>\n";
  const std::vector<std::vector<std::string>> rows = compare_rows(*cmp);
  if (rows.size() <= 1) {
    body += "<p>No level is in both files.</p>\n";
  } else {
    body += "<table class=\"compare\">\n<thead><tr>";
    for (const std::string& h : rows[0]) body += "<th>" + esc(h) + "</th>";
    body += "</tr></thead>\n<tbody>\n";
    for (size_t i = 1; i < rows.size(); ++i) {
      body += "<tr>";
      for (const std::string& cell : rows[i]) body += "<td>" + esc(cell) + "</td>";
      body += "</tr>\n";
    }
    body += "</tbody>\n</table>\n";
  }
  body += "</section>\n";
  for (const auto& [label, doc] :
       {std::pair{"A: " + label_a, &a}, std::pair{"B: " + label_b, &b}}) {
    const PageInput in = page_input(*doc);
    body += "<section class=\"table\">\n<h2>" + esc(label) + "</h2>\n" + params_list(in) +
            list_items(sweep_verdicts(in), "verdicts") + list_items(doc->warnings, "warnings") +
            list_items(doc->host.warnings, "warnings") + summary_table(in) + "</section>\n";
  }
  return page(title, body, "", *data);
}

json html_chart_data(const ExternalSweepDocument& doc) {
  json data{{"kind", "sweep"}, {"charts", json::array()}};
  const std::string level = level_name_of(doc.command);
  const std::string unit = doc.unit.empty() ? "ops/s" : doc.unit;
  const std::string x_label = fmt::format("{} (the level put into {{N}})", level);
  json marks = json::array();
  if (doc.knee.index) {
    marks.push_back(
        json{{"x", doc.levels[*doc.knee.index].level},
             {"label", fmt::format("knee: {} {}", level, doc.levels[*doc.knee.index].level)},
             {"style", "knee"}});
  }
  std::map<double, std::vector<std::optional<double>>> x_rows, lat_rows, little_rows;
  json labels = json::array();
  for (const ExternalLevelFigures& l : doc.levels) {
    const double x = l.level;
    put(x_rows, x, 1, 0, l.throughput.median);
    labels.push_back(json{{"series", 0}, {"x", x}, {"text", l.saturated.resource}});
    const ExternalResultFigures& t = l.median.total;
    auto ms = [](std::optional<double> ns) {
      return ns ? std::optional<double>(ms_of(*ns)) : std::nullopt;
    };
    put(lat_rows, x, 2, 0, ms(t.latency_mean_ns));
    put(lat_rows, x, 2, 1, ms(t.latency_p99_ns));
    if (l.little && l.little->x_times_mean_r) {
      put(little_rows, x, 2, 0, *l.little->x_times_mean_r);
      put(little_rows, x, 2, 1, l.little->n);
    }
  }
  json c = chart("throughput", "Throughput against " + level,
                 "The tool's own throughput per level (median of repeats), the knee marked and the "
                 "limit named at each point.",
                 x_label, "log2", json::array({axis("throughput (" + unit + ")")}));
  c["series"].push_back(series("throughput", 0, "points"));
  c["data"] = aligned(x_rows, 1);
  c["marks"] = marks;
  c["point_labels"] = labels;
  data["charts"].push_back(std::move(c));
  json lat = chart("latency", "Latency against " + level,
                   "Mean and p99 latency as the tool reports them (pgbench gives no p99).", x_label,
                   "log2", json::array({axis("latency (ms)")}));
  lat["log_toggle"] = true;
  lat["series"].push_back(series("mean", 0, "points"));
  lat["series"].push_back(series("p99", 0, "points"));
  lat["data"] = aligned(lat_rows, 2);
  lat["marks"] = marks;
  data["charts"].push_back(std::move(lat));
  if (!little_rows.empty()) {
    json lc = chart("little", "Little's law: X * mean R against the tool's N",
                    "On the dashed line N = X * R holds; below it the tool kept fewer in flight "
                    "than it was asked to.",
                    x_label, "log2", json::array({axis("in flight")}));
    lc["series"].push_back(series("X * mean R", 0, "points"));
    lc["series"].push_back(series("N (the tool's)", 0, "dash"));
    lc["data"] = aligned(little_rows, 2);
    data["charts"].push_back(std::move(lc));
  }
  return data;
}

std::string render_html(const ExternalSweepDocument& doc) {
  const json data = html_chart_data(doc);
  const std::string title = fmt::format("knee sweep --exec: {}", doc.command);
  std::string body = "<header>\n<h1>" + esc(title) + "</h1>\n";
  body += "<p class=\"when\">measured " + esc(doc.started_at) + " on " + esc(doc.host.hostname) +
          "</p>\n";
  std::string files;
  for (const std::string& f : doc.files) files += (files.empty() ? "" : ", ") + f;
  body += definition_list({{"adapter", doc.adapter},
                           {"unit", doc.unit},
                           {"repeats", std::to_string(doc.repeats)},
                           {"timeout per run", fmt::format("{:g} s", doc.timeout_s)},
                           {"files", files},
                           {"device", doc.device.value_or("")},
                           {"filesystem", doc.fs_type.value_or("")}}) +
          "</header>\n";
  std::vector<std::string> verdicts = {"knee: " + doc.knee.summary};
  if (!doc.levels.empty()) {
    const size_t at =
        std::min(doc.knee.saturated_index.value_or(doc.levels.size() - 1), doc.levels.size() - 1);
    const ExternalLevelFigures& l = doc.levels[at];
    verdicts.push_back(fmt::format("limit at {} {}: {}: {}", level_name_of(doc.command), l.level,
                                   l.saturated.resource, l.saturated.detail));
  }
  if (doc.usl) {
    verdicts.push_back(fmt::format("USL fit: sigma {:.4f}, kappa {:.6f}, lambda {:.1f} {}",
                                   doc.usl->sigma, doc.usl->kappa, doc.usl->lambda_rps, doc.unit));
  }
  if (doc.failed) verdicts.push_back("stopped: " + *doc.failed);
  body += "<section class=\"verdicts\">\n<h2>Verdicts</h2>\n" + list_items(verdicts, "verdicts") +
          "</section>\n";
  std::vector<std::string> warnings = doc.warnings;
  for (const std::string& w : doc.host.warnings) warnings.push_back("host: " + w);
  if (!warnings.empty()) {
    body += "<section class=\"warnings\">\n<h2>Warnings</h2>\n" + list_items(warnings, "warnings") +
            "</section>\n";
  }
  // The table: the text report's, one row per level.
  const std::string text = render_external_sweep_text(doc);
  body += "<section class=\"table\">\n<h2>Levels</h2>\n<pre class=\"levels\">" +
          esc(text.substr(0, text.find("\n\n"))) + "</pre>\n</section>\n";
  return page(title, body, host_section(doc.host), data);
}

core::Result<std::string> render_html(const Document& doc, const std::string& label) {
  if (const auto* run = std::get_if<RunDocument>(&doc)) return render_html(*run);
  if (const auto* sweep = std::get_if<SweepDocument>(&doc)) return render_html(*sweep);
  if (const auto* external = std::get_if<ExternalSweepDocument>(&doc))
    return render_html(*external);
  return wrong_document(label, doc, "report FILE.json -o", "a run or a sweep");
}

core::Result<std::string> render_compare_html(const Document& a, const Document& b,
                                              const std::string& label_a,
                                              const std::string& label_b) {
  for (const auto& [doc, label] : {std::pair{&a, &label_a}, std::pair{&b, &label_b}}) {
    if (!std::holds_alternative<SweepDocument>(*doc)) {
      return wrong_document(*label, *doc, "report a.json b.json -o", "two sweeps");
    }
  }
  return render_compare_html(std::get<SweepDocument>(a), std::get<SweepDocument>(b), label_a,
                             label_b);
}

}  // namespace knee::report
