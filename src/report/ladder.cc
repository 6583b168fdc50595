#include "report/ladder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "report/analyse.h"

namespace knee::report {
namespace {

// One computed network floor.
struct NetworkRow {
  analysis::Route route;
  analysis::NetworkFloor floor;
};

// The magnitude a latency in ns belongs to.
enum class Magnitude { kNs, kUs, kMs, kTensOfMs };
constexpr const char* kMagnitudeIds[] = {"ns", "us", "ms", "tens_of_ms"};
constexpr const char* kMagnitudeTitles[] = {
    "nanoseconds (under 1 us)", "microseconds (1 us to 1 ms)", "milliseconds (1 to 10 ms)",
    "tens of milliseconds and more (10 ms and up)"};

Magnitude magnitude_of(double ns) {
  if (ns < 1e3) return Magnitude::kNs;
  if (ns < 1e6) return Magnitude::kUs;
  if (ns < 1e7) return Magnitude::kMs;
  return Magnitude::kTensOfMs;
}

size_t index_of(Magnitude m) { return static_cast<size_t>(m); }

// Three significant digits in the unit that suits the value: "1.93 ns", "812 ns", "4.56 us".
std::string duration_text(double ns) {
  // Thresholds at the rounding points, so 999.7 ns prints "1.00 us", not "1000 ns".
  double v = ns;
  const char* unit = "ns";
  if (ns >= 999.5e3) {
    v = ns / 1e6;
    unit = "ms";
  } else if (ns >= 999.5) {
    v = ns / 1e3;
    unit = "us";
  }
  const int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  return fmt::format("{:.{}f} {}", v, decimals, unit);
}

std::string grouped(int64_t v) {
  std::string digits = std::to_string(v);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) {
    digits.insert(static_cast<size_t>(at), ",");
  }
  return digits;
}

// Operations per second: "8,152", "99.2 k", "526 M".
std::string rate_text(double per_s) {
  if (per_s < 1e4) return grouped(std::llround(per_s));
  const double v = per_s >= 999.5e3 ? per_s / 1e6 : per_s / 1e3;
  const char* suffix = per_s >= 999.5e3 ? "M" : "k";
  const int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  return fmt::format("{:.{}f} {}", v, decimals, suffix);
}

// `text` folded at spaces into lines of at most `width` columns, every line after the first
// starting with `indent` spaces; ends with a newline.
std::string wrap(const std::string& text, size_t indent, size_t width = 100) {
  size_t at = text.find_first_not_of(' ');
  if (at == std::string::npos) return text + "\n";
  std::string out = text.substr(0, at);  // the first line's own indent
  size_t column = at;
  bool line_start = true;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view word(text.data() + at, end - at);
    if (!line_start && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_start = true;
    }
    if (!line_start) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_start = false;
    at = end + 1;
  }
  return out + "\n";
}

RungFigures rung_figures(const probes::Rung& r) {
  RungFigures f;
  f.group = r.group;
  f.id = r.id;
  f.name = r.name;
  f.method = r.method;
  f.rung = kMagnitudeIds[index_of(magnitude_of(r.median_ns))];
  f.batch = r.batch;
  f.samples = r.samples;
  f.ops = r.ops;
  f.repeats = r.repeats;
  f.median_ns = r.median_ns;
  f.p99_ns = r.p99_ns;
  f.min_ns = r.min_ns;
  f.best_ns = r.best_ns;
  f.ops_per_s = r.ops_per_s;
  if (!r.plan.empty()) f.plan = r.plan;
  return f;
}

double ms_of(std::chrono::nanoseconds d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

std::string header_text(const LadderDocument& l) {
  const HostFigures& h = l.host;
  std::string out = "knee ladder: latency of operations on this host, measured one at a time\n";
  out += wrap(fmt::format("  host: {}, {} logical CPUs; governor {}; turbo {}; kernel {}{}",
                          h.cpu_model.empty() ? "unknown CPU" : h.cpu_model, h.logical_cpus,
                          h.governor.empty() ? "not reported (no cpufreq)" : h.governor,
                          h.turbo.empty() ? "unknown" : h.turbo, h.kernel,
                          h.os.empty() ? "" : fmt::format(" ({})", h.os)),
              4);
  out += wrap(fmt::format("  build: {}, {} build, flags '{}'", h.compiler,
                          h.build_type.empty() ? "unnamed" : h.build_type, h.cxx_flags),
              4);
  const LadderClock& c = l.clock;
  out += wrap(
      fmt::format(
          "  clock: steady_clock (CLOCK_MONOTONIC), clock_getres {} ns, smallest step seen {} ns, "
          "one read costs {:.1f} ns; operations shorter than {} are timed in batches",
          c.getres_ns, c.smallest_step_ns, c.now_cost_ns,
          duration_text(static_cast<double>(c.target_sample_ns))),
      4);
  if (l.disk) {
    const LadderDisk& t = *l.disk;
    out += wrap(
        fmt::format("  --dir {}: {} on {} (mounted at {}, {}){}", t.dir, t.path, t.fs_type,
                    t.mount_point.empty() ? "?" : t.mount_point,
                    t.source.empty() ? "source unknown" : t.source,
                    t.device.empty()
                        ? std::string()
                        : fmt::format(", device {}{}{}", t.device,
                                      t.device_model.empty() ? "" : " " + t.device_model,
                                      !t.rotational        ? ""
                                      : *t.rotational == 1 ? ", rotational per the kernel"
                                                           : ", not rotational per the kernel")),
        4);
  }
  out += wrap(
      fmt::format(
          "  method: warm-up {} ms, then {} repeats of up to {} samples or {} ms each (disk: {} "
          "repeats of up to {} writes); median and p99 from an HDR histogram of every sample; best "
          "= "
          "the fastest repeat's mean (Python timeit's figure); ops/s = 1 s / median, one at a time",
          static_cast<int64_t>(l.params.warmup_ms), l.params.repeats,
          grouped(l.params.max_samples_per_repeat),
          static_cast<int64_t>(l.params.max_time_per_repeat_ms), l.params.disk_repeats,
          l.params.disk_max_writes_per_repeat),
      4);
  return out;
}

}  // namespace

std::string render_ladder_text(const LadderDocument& l) {
  std::string out = header_text(l);
  // One name column for every rung, left-aligned, so the ladder reads down at a glance.
  size_t width = std::string_view("round-trip floor (computed)").size();
  static const std::vector<RouteFigures> kNoRoutes;
  const std::vector<RouteFigures>& routes = l.network ? l.network->routes : kNoRoutes;
  for (const RungFigures& r : l.rungs) width = std::max(width, r.name.size());
  for (const RouteFigures& n : routes) width = std::max(width, n.name.size());
  std::vector<const RungFigures*> numbered;
  for (size_t m = 0; m < 4; ++m) {
    std::string rows;
    for (const RungFigures& r : l.rungs) {
      if (index_of(magnitude_of(r.median_ns)) != m) continue;
      numbered.push_back(&r);
      rows += fmt::format("  {:>4} {:<{}} {:>9} {:>9} {:>9} {:>9}\n",
                          fmt::format("[{}]", numbered.size()), r.name, width,
                          duration_text(r.median_ns), duration_text(r.p99_ns),
                          duration_text(r.best_ns), rate_text(r.ops_per_s));
    }
    std::string net;
    for (const RouteFigures& n : routes) {
      if (index_of(magnitude_of(n.fibre_rtt_ms * 1e6)) != m) continue;
      net += fmt::format("  {:>4} {:<{}} {:>9} {:>9} {:>9}\n", "", n.name, width,
                         fmt::format("{} km", grouped(std::llround(n.distance_km))),
                         fmt::format("{:.1f} ms", n.vacuum_rtt_ms),
                         fmt::format("{:.1f} ms", n.fibre_rtt_ms));
    }
    if (rows.empty() && net.empty()) continue;
    out += fmt::format("\n{}\n", kMagnitudeTitles[m]);
    if (!rows.empty()) {
      out += fmt::format("  {:>4} {:<{}} {:>9} {:>9} {:>9} {:>9}\n", "", "operation", width,
                         "median", "p99", "best", "ops/s");
      out += rows;
    }
    if (!net.empty()) {
      out += fmt::format("  {:>4} {:<{}} {:>9} {:>9} {:>9}\n", "", "round-trip floor (computed)",
                         width, "distance", "vacuum", "fibre");
      out += net;
    }
  }
  if (l.sqlite) {
    out += fmt::format("\nSQLite {} plans (EXPLAIN QUERY PLAN), {} rows in memory:\n",
                       l.sqlite->version, grouped(l.sqlite->rows));
    // In the order they were measured: by key, by the unindexed column, by the index.
    for (const char* id : {"sqlite_primary_key", "sqlite_scan", "sqlite_index"}) {
      auto rung = std::find_if(l.rungs.begin(), l.rungs.end(),
                               [&](const RungFigures& r) { return r.id == id; });
      auto plan = l.sqlite->plans.find(id);
      if (rung == l.rungs.end() || plan == l.sqlite->plans.end()) continue;
      out += fmt::format("  {}: {}\n", rung->name, plan->second);
    }
    out += fmt::format(
        "  the scan takes {:.0f}x as long as the primary-key read; the index makes it {:.0f}x "
        "faster (medians)\n",
        l.sqlite->scan_over_key, l.sqlite->scan_over_index);
  }
  if (!routes.empty()) {
    out += "\n" + wrap(fmt::format("Network floor: computed, not measured. Great-circle distance "
                                   "(haversine, WGS 84 mean "
                                   "radius {:.4f} km); round trip = 2 x distance at c = {:.3f} "
                                   "km/s (vacuum) and at {:.4f} c "
                                   "(fibre). Real round trips are slower: cables do not follow "
                                   "great circles, and routers "
                                   "and queues add time.",
                                   l.network->earth_radius_km, l.network->speed_of_light_km_per_s,
                                   l.network->fibre_factor),
                       2);
  }
  if (!numbered.empty()) {
    out += "\nHow each rung was measured:\n";
    for (size_t k = 0; k < numbered.size(); ++k) {
      out += wrap(fmt::format("  [{}] {}: {} ({} samples, {} operations)", k + 1, numbered[k]->name,
                              numbered[k]->method, grouped(numbered[k]->samples),
                              grouped(numbered[k]->ops)),
                  6);
    }
  }
  for (const std::string& w : l.warnings) out += wrap("warning: " + w, 2);
  out += fmt::format("ladder measured in {:.1f} s\n", l.duration_s);
  return out;
}

LadderDocument ladder_document(const probes::LadderRun& run,
                               const std::vector<analysis::Route>& routes, double fibre_factor,
                               std::vector<std::string> only, std::string started_at,
                               double duration_s) {
  LadderDocument d;
  d.started_at = std::move(started_at);
  d.duration_s = duration_s;
  d.only = std::move(only);
  d.host = host_figures(run.host);
  d.clock = LadderClock{run.clock.getres_ns, run.clock.smallest_step_ns, run.clock.now_cost_ns,
                        run.clock.target_sample_ns};
  const probes::LadderOptions& o = run.options;
  d.params = LadderParams{o.timing.repeats,
                          o.timing.max_samples,
                          ms_of(o.timing.max_time),
                          ms_of(o.timing.warmup),
                          o.disk_timing.repeats,
                          o.disk_timing.max_samples,
                          ms_of(o.disk_timing.max_time),
                          o.dram_bytes,
                          o.cache_bytes,
                          o.sqlite_rows,
                          o.dir};
  for (const probes::Rung& r : run.rungs) d.rungs.push_back(rung_figures(r));
  if (run.sqlite) {
    LadderSqlite s{run.sqlite->version,
                   run.sqlite->rows,
                   {},
                   run.sqlite->scan_over_key,
                   run.sqlite->scan_over_index};
    for (const probes::Rung& r : run.sqlite->rungs) s.plans[r.id] = r.plan;
    d.sqlite = std::move(s);
  }
  if (run.disk) {
    const probes::DiskTarget& t = run.disk->target;
    d.disk =
        LadderDisk{t.dir,          t.path,
                   t.fs_type,      t.mount_point,
                   t.source,       t.device,
                   t.device_model, t.rotational < 0 ? std::nullopt : std::optional(t.rotational),
                   t.memory,       run.disk->block_bytes,
                   t.warnings};
  }
  if (std::find(d.only.begin(), d.only.end(), "network") != d.only.end()) {
    std::vector<NetworkRow> network;
    for (const analysis::Route& route : routes) {
      network.push_back({route, analysis::network_floor(route.from, route.to, fibre_factor)});
    }
    std::stable_sort(network.begin(), network.end(), [](const NetworkRow& a, const NetworkRow& b) {
      return a.floor.fibre_rtt_ms < b.floor.fibre_rtt_ms;
    });
    LadderNetwork n;
    n.fibre_factor = fibre_factor;
    n.earth_radius_km = analysis::kEarthMeanRadiusKm;
    n.speed_of_light_km_per_s = analysis::kSpeedOfLightKmPerS;
    n.method =
        "computed, not measured: great-circle distance by the haversine formula on the WGS 84 "
        "mean radius; round trip = 2 x distance / speed, in a vacuum (c) and in fibre "
        "(fibre_factor x c)";
    for (const NetworkRow& r : network) {
      n.routes.push_back(
          RouteFigures{r.route.name, GeoPoint{r.route.from.lat_deg, r.route.from.lon_deg},
                       GeoPoint{r.route.to.lat_deg, r.route.to.lon_deg}, r.floor.distance_km,
                       r.floor.vacuum_rtt_ms, r.floor.fibre_rtt_ms,
                       kMagnitudeIds[index_of(magnitude_of(r.floor.fibre_rtt_ms * 1e6))]});
    }
    d.network = std::move(n);
  }
  d.warnings = run.warnings;
  return d;
}

}  // namespace knee::report
