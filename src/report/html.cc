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
#include "report/web_assets.h"

namespace knee::report {

using nlohmann::json;

namespace {

constexpr int kSchemaVersion = 1;

// ---- reading the document: missing fields read as null, never throw ----

const json& field(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}
const json& field(const json& j, const char* a, const char* b) { return field(field(j, a), b); }
const json& field(const json& j, const char* a, const char* b, const char* c) {
  return field(field(j, a, b), c);
}

std::optional<double> number(const json& j) {
  if (j.is_number()) return j.get<double>();
  return std::nullopt;
}

// The knee's level index from a saved document, when it is a whole number inside [0, n): a
// hand-edited or foreign file must not turn it into an out-of-range (or undefined) cast.
std::optional<size_t> knee_index(const json& doc, size_t n) {
  auto k = number(field(doc, "knee", "index"));
  if (!k || !(*k >= 0) || *k != std::floor(*k) || *k >= static_cast<double>(n)) return {};
  return static_cast<size_t>(*k);
}
double number_or(const json& j, double fallback) { return number(j).value_or(fallback); }
std::string text(const json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }
json or_null(std::optional<double> v) { return v && std::isfinite(*v) ? json(*v) : json(); }

// Rounds to 6 significant digits so derived figures (curves, ms) do not carry float noise.
double round6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}
std::optional<double> ms_of(const json& ns) {
  auto v = number(ns);
  if (!v) return std::nullopt;
  return round6(*v / 1e6);
}

// ---- HTML text ----

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON inside <script type="application/json">: '<' can only occur inside JSON strings, where
// \u003c means the same character, so no "</script>" or "<!--" survives.
std::string script_json(const json& j) {
  std::string dumped = j.dump();
  std::string out;
  out.reserve(dumped.size());
  for (char c : dumped) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

// A script's text inside <script>: "</script" would end the element; "<\/script" means the same
// in JavaScript strings and regular expressions (uPlot's and ours contain none today).
std::string script_text(std::string_view js) {
  std::string out(js);
  for (size_t at = out.find("</"); at != std::string::npos; at = out.find("</", at + 3)) {
    out.replace(at, 2, "<\\/");
  }
  return out;
}

std::string fixed(std::optional<double> v, int decimals) {
  if (!v || !std::isfinite(*v)) return "-";
  return fmt::format("{:.{}f}", *v, decimals);
}
std::string pct(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "-";
  return fmt::format("{:.0f}%", *v);
}

// "4251" or, with repeats, "4251 (4100-4300)" from a {median, min, max} range.
std::string ranged(const json& range, std::optional<double> fallback, double scale, int decimals,
                   bool with_range) {
  auto median = number(field(range, "median"));
  if (!median) return fallback ? fixed(*fallback * scale, decimals) : "-";
  std::string out = fixed(*median * scale, decimals);
  if (with_range) {
    out += fmt::format(" ({}&ndash;{})", fixed(number_or(field(range, "min"), 0) * scale, decimals),
                       fixed(number_or(field(range, "max"), 0) * scale, decimals));
  }
  return out;
}

// ---- one level (or run) of the document ----

struct Level {
  const json* j = nullptr;
  double x = 0;  // N, or the arrival rate of an open-loop level
  int concurrency = 0;
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

Level level_of(const json& j) {
  Level l;
  l.j = &j;
  l.open = text(field(j, "mode")) == "open";
  l.concurrency = static_cast<int>(number_or(field(j, "concurrency"), 0));
  l.x = l.open ? number_or(field(j, "target_rate_rps"), 0) : l.concurrency;
  l.throughput_rps = number_or(field(j, "ranges", "throughput_rps", "median"),
                               number_or(field(j, "throughput_rps"), 0));
  const json& lat = field(j, "ranges", "latency_ns");
  auto median_ms = [&](const char* key) {
    auto v = ms_of(field(lat, key, "median"));
    return v ? v : ms_of(field(j, "latency_ns", key));
  };
  l.p50_ms = median_ms("p50");
  l.p99_ms = median_ms("p99");
  l.p999_ms = median_ms("p999");
  l.mean_ms = median_ms("mean");
  if (number_or(field(j, "latency_ns", "count"), 0) == 0) {
    l.p50_ms = l.p99_ms = l.p999_ms = l.mean_ms = std::nullopt;
  }
  l.x_times_mean_r = number(field(j, "little", "x_times_mean_r"));
  l.little_holds =
      field(j, "little", "holds").is_boolean() ? field(j, "little", "holds").get<bool>() : true;
  l.mean_in_system = number(field(j, "mean_in_system"));
  l.server_cpu_pct = number(field(j, "resources", "server", "cpu_pct"));
  if (auto c = number(field(j, "client_max_thread_cpu_demand"))) l.client_cpu_pct = 100 * *c;
  l.cpus_busy_pct = number(field(j, "resources", "cpu_busy_all_pct"));
  l.saturated = text(field(j, "saturated", "resource"));
  l.saturated_detail = text(field(j, "saturated", "detail"));
  for (const auto& [kind, count] : field(j, "errors").items()) {
    (void)kind;
    l.errors += number_or(count, 0);
  }
  l.client_bound = l.saturated == "client";
  return l;
}

std::string level_name(const Level& l) {
  return l.open ? fmt::format("rate {:.0f} req/s", l.x) : fmt::format("N = {}", l.concurrency);
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

json spectrum_chart(const std::vector<std::pair<std::string, const json*>>& runs) {
  json c = chart("spectrum", "Latency by percentile",
                 "HdrHistogram's percentile spectrum: latency (ms) at each percentile, on a "
                 "1/(1-p) axis so the tail (99.9 %, 99.99 %, 99.999 %) gets as much room as the "
                 "median. A curve that bends up early means a heavy tail.",
                 "percentile", "percentile", json::array({axis("latency (ms)")}));
  c["log_toggle"] = true;
  const size_t n = runs.size();
  std::map<double, std::vector<std::optional<double>>> rows;
  for (size_t s = 0; s < n; ++s) {
    for (const json& point : field(*runs[s].second, "spectrum")) {
      auto p = number(field(point, "percentile"));
      if (!p || *p >= 100) continue;
      put(rows, round6(1.0 / (1.0 - *p / 100.0)), n, s, ms_of(field(point, "value_ns")));
    }
    c["series"].push_back(series(runs[s].first, 0, "line"));
  }
  c["data"] = aligned(rows, n);
  return c;
}

// Per-second throughput and p99 of the levels (or the run), one after the other on one time
// axis: seconds since the first measured phase began. Null rows between levels break the lines.
std::optional<json> over_time_chart(const std::vector<std::pair<std::string, const json*>>& runs) {
  json c = chart("over_time", "Throughput and p99, second by second",
                 "Each point is one second of a measured phase (warm-up left out): successful "
                 "responses per second (left axis) and their p99 (right axis). A first second "
                 "unlike the rest means the warm-up was too short; steps or spikes inside a level "
                 "mean the server (or the host) was not steady.",
                 "seconds since the first measured phase began", "linear",
                 json::array({axis("throughput (req/s)"), axis("p99 (ms)")}));
  std::map<double, std::vector<std::optional<double>>> rows;
  bool any = false;
  const double first_epoch = number_or(field(*runs.front().second, "measure_start_epoch_s"), 0);
  double offset = 0;  // without start times: levels laid end to end, 1 s apart
  for (const auto& [name, run] : runs) {
    const json& intervals = field(*run, "intervals");
    if (!intervals.is_array() || intervals.empty()) {
      offset += number_or(field(*run, "duration_s"), 0) + 1;
      continue;
    }
    const double epoch = number_or(field(*run, "measure_start_epoch_s"), 0);
    const double base = epoch > 0 && first_epoch > 0 ? epoch - first_epoch : offset;
    double end = base;
    for (const json& i : intervals) {
      const double start = base + number_or(field(i, "start_s"), 0);
      const double length = number_or(field(i, "length_s"), 0);
      const bool has = number_or(field(i, "responses"), 0) > 0;
      put(rows, round6(start), 2, 0, round6(number_or(field(i, "throughput_rps"), 0)));
      put(rows, round6(start), 2, 1, has ? ms_of(field(i, "p99_ns")) : std::nullopt);
      end = std::max(end, start + length);
      any = true;
    }
    if (runs.size() > 1) {
      c["marks"].push_back(json{{"x", round6(base)}, {"label", name}, {"style", "level"}});
      put(rows, round6(end), 2, 0, std::nullopt);  // a gap before the next level
    }
    offset = end + 1;
  }
  if (!any) return std::nullopt;
  c["series"].push_back(series("throughput (req/s)", 0, "line"));
  c["series"].push_back(series("p99 (ms)", 1, "line"));
  c["data"] = aligned(rows, 2);
  return c;
}

json knee_marks(const json& doc, const std::vector<Level>& levels) {
  json marks = json::array();
  auto index = knee_index(doc, levels.size());
  if (index) {
    const Level& k = levels[*index];
    marks.push_back(json{{"x", k.x}, {"label", "knee: " + level_name(k)}, {"style", "knee"}});
  }
  return marks;
}

std::vector<json> sweep_charts(const json& doc, const std::vector<Level>& levels) {
  std::vector<json> charts;
  const bool open = !levels.empty() && levels.front().open;
  const std::string x_label = open ? "arrival rate (req/s)" : "concurrency N (connections)";
  const json marks = knee_marks(doc, levels);

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
    const json& usl = field(doc, "usl");
    auto sigma = number(field(usl, "sigma"));
    auto kappa = number(field(usl, "kappa"));
    auto lambda = number(field(usl, "lambda_rps"));
    if (sigma && kappa && lambda && !open && levels.size() >= 2) {
      const double lo = levels.front().x, hi = levels.back().x;
      for (int i = 0; i < kUslCurvePoints; ++i) {
        const double n = round6(lo * std::pow(hi / lo, i / double(kUslCurvePoints - 1)));
        put(rows, n, 2, 1, round6(analysis::usl_throughput_rps(n, *sigma, *kappa, *lambda)));
      }
      c["series"].push_back(
          series(fmt::format("USL fit (sigma {:.4f}, kappa {:.6f})", *sigma, *kappa), 0, "dash"));
    }
    c["data"] = aligned(rows, c["series"].size());
    c["marks"] = marks;
    auto kneedle = number(field(doc, "kneedle", "concurrency"));
    if (kneedle && !open) {
      c["marks"].push_back(json{{"x", *kneedle},
                                {"label", fmt::format("Kneedle: {:.0f}", *kneedle)},
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
        open ? "mean number in the system L" : "concurrency N (connections)", "log2",
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
  std::vector<std::pair<std::string, const json*>> runs;
  for (const Level& l : levels) runs.emplace_back(level_name(l), l.j);
  if (!runs.empty()) charts.push_back(spectrum_chart(runs));
  if (!runs.empty()) {
    if (auto c = over_time_chart(runs)) charts.push_back(std::move(*c));
  }
  // CPU per level and the saturated resource.
  {
    std::string at_knee;
    auto index = knee_index(doc, levels.size());
    if (index) {
      const Level& k = levels[*index];
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

core::Status check_document(const json& doc) {
  if (!doc.is_object()) {
    return core::Status::invalid_argument("report: the JSON is not an object; expected knee JSON");
  }
  const json& version = field(doc, "schema_version");
  if (!version.is_number_integer() || version.get<int>() != kSchemaVersion) {
    return core::Status::invalid_argument(fmt::format(
        "report: schema_version {} is not {}; this knee reads knee JSON of schema_version {}",
        version.is_null() ? "missing" : version.dump(), kSchemaVersion, kSchemaVersion));
  }
  const std::string kind = text(field(doc, "kind"));
  if (kind != "run" && kind != "sweep") {
    return core::Status::invalid_argument(
        fmt::format("report: kind '{}': the HTML report draws a run or a sweep", kind));
  }
  if (kind == "sweep" && !field(doc, "levels").is_array()) {
    return core::Status::invalid_argument("report: a sweep without a 'levels' array");
  }
  return core::Status::ok();
}

std::vector<Level> levels_of(const json& doc) {
  std::vector<Level> levels;
  if (text(field(doc, "kind")) == "sweep") {
    for (const json& l : field(doc, "levels")) levels.push_back(level_of(l));
  } else {
    levels.push_back(level_of(doc));
  }
  return levels;
}

// "warm-up may be too short" from the per-second data: a first second with under 80 % of the
// median throughput of the seconds after it, or over twice their median p99. The last second is
// left out (it holds the grace period's responses); needs at least 3 seconds.
std::vector<std::string> warmup_notes(const json& doc, const std::vector<Level>& levels) {
  std::vector<std::string> notes;
  if (number_or(field(doc, "params", "warmup_s"), 0) <= 0) {
    notes.push_back(
        "no warm-up: the first requests include connection set-up and cold caches, and count");
  }
  for (const Level& l : levels) {
    const json& iv = field(*l.j, "intervals");
    if (!iv.is_array() || iv.size() < 4) continue;
    std::vector<double> x, p99;
    for (size_t i = 1; i + 1 < iv.size(); ++i) {
      x.push_back(number_or(field(iv[i], "throughput_rps"), 0));
      p99.push_back(number_or(field(iv[i], "p99_ns"), 0));
    }
    std::sort(x.begin(), x.end());
    std::sort(p99.begin(), p99.end());
    const double x_med = x[x.size() / 2], p99_med = p99[p99.size() / 2];
    const double x0 = number_or(field(iv[0], "throughput_rps"), 0);
    const double p0 = number_or(field(iv[0], "p99_ns"), 0);
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

std::string host_section(const json& host) {
  auto s = [&](const char* k) { return text(field(host, k)); };
  std::string cpus = number(field(host, "logical_cpus"))
                         ? fmt::format("{:.0f}", *number(field(host, "logical_cpus")))
                         : "";
  std::string load = number(field(host, "load_avg_1m"))
                         ? fmt::format("{:.2f}", *number(field(host, "load_avg_1m")))
                         : "";
  std::string clock = number(field(host, "clock_resolution_ns"))
                          ? fmt::format("{:.0f} ns", *number(field(host, "clock_resolution_ns")))
                          : "";
  return "<section class=\"host\">\n<h2>Host</h2>\n" +
         definition_list({{"host", s("hostname")},
                          {"CPU", s("cpu_model")},
                          {"logical CPUs", cpus},
                          {"kernel", s("kernel")},
                          {"OS", s("os")},
                          {"governor", s("governor")},
                          {"turbo", s("turbo")},
                          {"compiler", s("compiler")},
                          {"build", s("build_type")},
                          {"flags", s("cxx_flags")},
                          {"clock resolution", clock},
                          {"load average (1 min)", load}}) +
         "</section>\n";
}

std::string params_list(const json& doc, const std::vector<Level>& levels) {
  const json& p = field(doc, "params");
  const bool sweep = text(field(doc, "kind")) == "sweep";
  const bool open = !levels.empty() && levels.front().open;
  std::string load;
  if (sweep) {
    std::string xs;
    for (const Level& l : levels) xs += (xs.empty() ? "" : ", ") + fmt::format("{:g}", l.x);
    load = fmt::format("{} levels, {}: {}", levels.size(),
                       open ? "open loop, arrival rates (req/s)" : "closed loop, concurrency", xs);
  } else if (!levels.empty()) {
    load =
        open ? fmt::format("open loop, {:.0f} req/s ({} arrivals), up to {} connections",
                           levels.front().x, text(field(p, "arrival")), levels.front().concurrency)
             : fmt::format("closed loop, {} connections", levels.front().concurrency);
  }
  auto seconds = [&](const char* k) {
    auto v = number(field(p, k));
    return v ? fmt::format("{:g} s", *v) : std::string();
  };
  auto count = [&](const char* k) {
    auto v = number(field(p, k));
    return v ? fmt::format("{:.0f}", *v) : std::string();
  };
  return definition_list({{"target", text(field(doc, "target"))},
                          {"request", text(field(p, "method")) + " " + text(field(p, "url"))},
                          {"started", text(field(doc, "started_at"))},
                          {"load", load},
                          {sweep ? "measured per level" : "measured", seconds("duration_s")},
                          {"warm-up", seconds("warmup_s")},
                          {"client threads", count("threads")},
                          {"repeats", count("repeats")},
                          {"timeout", seconds("timeout_s")},
                          {"grace", seconds("grace_s")}});
}

std::string summary_table(const std::vector<Level>& levels, std::optional<size_t> knee) {
  const bool open = !levels.empty() && levels.front().open;
  std::string out = "<table class=\"summary\">\n<thead><tr>";
  std::vector<std::string> head;
  if (open) head = {"rate (req/s)", "achieved (req/s)"};
  head.insert(head.end(), {"concurrency", "requests", "throughput (req/s)", "p50 (ms)", "p99 (ms)",
                           "p99.9 (ms)", open ? "X*meanR (=L?)" : "X*meanR (=N?)", "errors",
                           "server CPU", "client CPU", "saturated"});
  for (const std::string& h : head) out += "<th>" + esc(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < levels.size(); ++i) {
    const Level& l = levels[i];
    const json& j = *l.j;
    const bool with_range = number_or(field(j, "repeats"), 1) > 1;
    const json& r = field(j, "ranges");
    const bool is_knee = knee && *knee == i;
    out += is_knee ? "<tr class=\"knee\">" : "<tr>";
    std::vector<std::string> cells;
    if (open) {
      cells.push_back(fixed(l.x, 0));
      cells.push_back(fixed(number(field(j, "achieved_rate_rps")), 0));
    }
    cells.push_back(std::to_string(l.concurrency));
    cells.push_back(fixed(number(field(j, "requests")), 0));
    cells.push_back(ranged(field(r, "throughput_rps"), l.throughput_rps, 1, 0, with_range));
    cells.push_back(ranged(field(r, "latency_ns", "p50"), std::nullopt, 1e-6, 2, with_range));
    cells.push_back(ranged(field(r, "latency_ns", "p99"), std::nullopt, 1e-6, 2, with_range));
    cells.push_back(ranged(field(r, "latency_ns", "p999"), std::nullopt, 1e-6, 2, with_range));
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

std::vector<std::string> sweep_verdicts(const json& doc, const std::vector<Level>& levels) {
  std::vector<std::string> v;
  v.push_back(text(field(doc, "knee", "summary")));
  auto index = knee_index(doc, levels.size());
  if (!levels.empty()) {
    const size_t at = index ? *index : levels.size() - 1;
    if (at < levels.size() && !levels[at].saturated.empty()) {
      v.push_back(fmt::format("saturated resource {} ({}): {}: {}",
                              index ? "at the knee" : "at the last level", level_name(levels[at]),
                              levels[at].saturated, levels[at].saturated_detail));
    }
  }
  const json& usl = field(doc, "usl");
  if (usl.is_object()) {
    std::string line = fmt::format(
        "USL fit: sigma {:.4f} (contention), kappa {:.6f} (coherency), lambda {:.1f} req/s, R^2 "
        "{}",
        number_or(field(usl, "sigma"), 0), number_or(field(usl, "kappa"), 0),
        number_or(field(usl, "lambda_rps"), 0), fixed(number(field(usl, "r_squared")), 3));
    auto peak_n = number(field(usl, "peak_concurrency"));
    auto peak_x = number(field(usl, "peak_throughput_rps"));
    if (peak_n && peak_x) {
      line += fmt::format("; peak N* = {:.1f} at X(N*) = {:.0f} req/s", *peak_n, *peak_x);
    }
    for (const json& f : field(usl, "flags")) line += "; " + text(f);
    v.push_back(line);
  }
  if (auto s = text(field(doc, "kneedle", "summary")); !s.empty()) v.push_back("Kneedle: " + s);
  auto demand = number(field(doc, "service_demand", "cpu_demand_ns"));
  auto bound = number(field(doc, "service_demand", "cpu_bound_rps"));
  if (demand && bound) {
    double best = 0;
    for (const Level& l : levels) best = std::max(best, l.throughput_rps);
    v.push_back(fmt::format(
        "server CPU per request D = U / X = {:.3f} ms: the CPU alone bounds throughput at "
        "1/D = {:.0f} req/s (measured maximum {:.0f} req/s)",
        *demand / 1e6, *bound, best));
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
void common_verdicts(const json& doc, const std::vector<Level>& levels,
                     std::vector<std::string>& v) {
  std::vector<std::string> bound;
  double worst = 0;
  for (const Level& l : levels) {
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
  for (std::string& n : warmup_notes(doc, levels)) v.push_back(std::move(n));
  double errors = 0;
  for (const Level& l : levels) errors += l.errors;
  if (errors == 0) {
    v.push_back("no errors");
  } else {
    v.push_back(fmt::format("{:.0f} errors in all (by kind and cause in the JSON)", errors));
  }
}

std::vector<std::string> run_verdicts(const json& doc, const Level& l) {
  std::vector<std::string> v;
  v.push_back(fmt::format("{:.1f} req/s; latency p50 {} ms, p99 {} ms, p99.9 {} ms, max {} ms",
                          l.throughput_rps, fixed(l.p50_ms, 3), fixed(l.p99_ms, 3),
                          fixed(l.p999_ms, 3), fixed(ms_of(field(doc, "latency_ns", "max")), 3)));
  if (l.open) {
    v.push_back(fmt::format("open loop: {:.1f} req/s achieved of {:.1f} asked for",
                            number_or(field(doc, "achieved_rate_rps"), 0), l.x));
  }
  if (l.x_times_mean_r) {
    v.push_back(fmt::format("Little's law: X * mean R = {:.2f} against {} {}", *l.x_times_mean_r,
                            l.open ? "a mean in the system of" : "N =",
                            l.open ? fixed(l.mean_in_system, 2) : std::to_string(l.concurrency)) +
                (l.little_holds ? " (holds within 5 %)" : " (BROKEN: off by more than 5 %)"));
  }
  if (!l.saturated.empty()) v.push_back("saturated: " + l.saturated + ": " + l.saturated_detail);
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
        esc(text(c["id"])), esc(text(c["title"])), esc(text(c["caption"])));
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

core::Result<json> chart_data_unchecked(const json& doc) {
  std::vector<Level> levels = levels_of(doc);
  json data{{"kind", text(field(doc, "kind"))}, {"charts", json::array()}};
  if (text(field(doc, "kind")) == "sweep") {
    for (json& c : sweep_charts(doc, levels)) data["charts"].push_back(std::move(c));
  } else {
    std::vector<std::pair<std::string, const json*>> runs{{"run", &doc}};
    data["charts"].push_back(spectrum_chart(runs));
    if (auto c = over_time_chart(runs)) data["charts"].push_back(std::move(*c));
  }
  return data;
}

template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const json::exception& e) {
    return core::Status::invalid_argument(
        fmt::format("report: the JSON has a field of the wrong type: {}", e.what()));
  }
}

}  // namespace

core::Result<json> html_chart_data(const json& doc) {
  if (core::Status s = check_document(doc); !s) return s;
  return guarded([&] { return chart_data_unchecked(doc); });
}

core::Result<std::string> render_html(const json& doc) {
  if (core::Status s = check_document(doc); !s) return s;
  return guarded([&]() -> core::Result<std::string> {
    auto data = chart_data_unchecked(doc);
    if (!data) return data.status();
    const std::vector<Level> levels = levels_of(doc);
    const bool sweep = text(field(doc, "kind")) == "sweep";
    const json& params = field(doc, "params");
    const std::string title =
        fmt::format("knee {}: {} {}", sweep ? "sweep" : "run", text(field(params, "method")),
                    text(field(params, "url")));
    std::string body;
    body += "<header>\n<h1>" + esc(title) + "</h1>\n";
    body += "<p class=\"when\">measured " + esc(text(field(doc, "started_at"))) + " on " +
            esc(text(field(doc, "host", "hostname"))) + "</p>\n";
    body += params_list(doc, levels) + "</header>\n";
    std::vector<std::string> verdicts =
        sweep ? sweep_verdicts(doc, levels) : run_verdicts(doc, levels.front());
    common_verdicts(doc, levels, verdicts);
    body += "<section class=\"verdicts\">\n<h2>Verdicts</h2>\n" + list_items(verdicts, "verdicts") +
            "</section>\n";
    std::vector<std::string> warnings;
    for (const json& w : field(doc, "warnings")) warnings.push_back(text(w));
    for (const json& n : field(doc, "notes")) warnings.push_back(text(n));
    for (const json& w : field(doc, "host", "warnings")) warnings.push_back("host: " + text(w));
    if (!warnings.empty()) {
      body += "<section class=\"warnings\">\n<h2>Warnings</h2>\n" +
              list_items(warnings, "warnings") + "</section>\n";
    }
    const std::optional<size_t> knee = knee_index(doc, levels.size());
    body += std::string("<section class=\"table\">\n<h2>") + (sweep ? "Levels" : "Result") +
            "</h2>\n" + summary_table(levels, knee) + "</section>\n";
    return page(title, body, host_section(field(doc, "host")), *data);
  });
}

core::Result<json> compare_chart_data(const json& a, const json& b, const std::string& label_a,
                                      const std::string& label_b) {
  for (const json* doc : {&a, &b}) {
    if (core::Status s = check_document(*doc); !s) return s;
    if (text(field(*doc, "kind")) != "sweep") {
      return core::Status::invalid_argument("report: compare overlays two sweeps; got a run");
    }
  }
  return guarded([&]() -> core::Result<json> {
    const std::vector<Level> la = levels_of(a), lb = levels_of(b);
    const bool open = !la.empty() && la.front().open;
    if (!lb.empty() && lb.front().open != open) {
      return core::Status::invalid_argument(
          "report: one sweep is closed loop (x: connections), the other open loop (x: arrival "
          "rate); their curves share no axis, so they are not overlaid");
    }
    const std::string x_label = open ? "arrival rate (req/s)" : "concurrency N (connections)";
    json data{{"kind", "compare"}, {"charts", json::array()}};
    struct Figure {
      const char* id;
      const char* title;
      const char* axis;
      std::optional<double> (*get)(const Level&);
    };
    const Figure figures[] = {
        {"throughput", "Throughput: A against B", "throughput (req/s)",
         [](const Level& l) { return std::optional<double>(l.throughput_rps); }},
        {"p99", "p99 latency: A against B", "p99 (ms)", [](const Level& l) { return l.p99_ms; }}};
    for (const Figure& f : figures) {
      json c = chart(f.id, f.title,
                     "The same figure of two sweeps per level (median runs), A solid, B dashed.",
                     x_label, "log2", json::array({axis(f.axis)}));
      if (std::string_view(f.id) == "p99") c["log_toggle"] = true;
      std::map<double, std::vector<std::optional<double>>> rows;
      for (const Level& l : la) put(rows, l.x, 2, 0, f.get(l));
      for (const Level& l : lb) put(rows, l.x, 2, 1, f.get(l));
      c["series"].push_back(series("A: " + label_a, 0, "line"));
      c["series"].push_back(series("B: " + label_b, 0, "dash"));
      c["data"] = aligned(rows, 2);
      data["charts"].push_back(std::move(c));
    }
    return data;
  });
}

core::Result<std::string> render_compare_html(const json& a, const json& b,
                                              const std::string& label_a,
                                              const std::string& label_b) {
  auto data = compare_chart_data(a, b, label_a, label_b);
  if (!data) return data.status();
  return guarded([&]() -> core::Result<std::string> {
    const std::string title = "knee compare: " + label_a + " against " + label_b;
    std::string body = "<header>\n<h1>" + esc(title) + "</h1>\n</header>\n";
    for (const auto& [label, doc] :
         {std::pair{"A: " + label_a, &a}, std::pair{"B: " + label_b, &b}}) {
      const std::vector<Level> levels = levels_of(*doc);
      const std::optional<size_t> knee = knee_index(*doc, levels.size());
      body += "<section class=\"table\">\n<h2>" + esc(label) + "</h2>\n" +
              params_list(*doc, levels) + list_items(sweep_verdicts(*doc, levels), "verdicts") +
              summary_table(levels, knee) + "</section>\n";
    }
    return page(title, body, "", *data);
  });
}

}  // namespace knee::report
