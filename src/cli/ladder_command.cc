// `knee ladder`: latency numbers measured on this host, rung by rung, with the context that makes
// them true (seed 001, issue 6). Composes probes/ladder.h (the measured rungs: in-process,
// SQLite, disk, loopback) with analysis/network_floor.h (the distance floor of the network,
// computed) and renders them sorted into rungs of magnitude: ns, us, ms, tens of ms. Text by
// default, --json for one JSON object (fields in docs/output.md).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/network_floor.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/load_flags.h"
#include "probes/fs_reader.h"
#include "probes/host_context.h"
#include "probes/ladder.h"
#include "probes/use.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

constexpr const char* kGroups[] = {"inprocess", "sqlite", "disk", "loopback", "network"};

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

// "inprocess,sqlite" -> the set; unknown names are bad input.
Result<std::vector<std::string>> parse_only(const std::string& text) {
  std::vector<std::string> groups;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = text.find(',', at);
    const std::string name =
        text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const bool known = std::find(std::begin(kGroups), std::end(kGroups), name) != std::end(kGroups);
    if (!known) {
      return Status::invalid_argument(
          fmt::format("--only '{}': '{}' is not a group of rungs; give a comma-separated subset of "
                      "inprocess,sqlite,disk,loopback,network",
                      text, name));
    }
    if (std::find(groups.begin(), groups.end(), name) == groups.end()) groups.push_back(name);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return groups;
}

struct NetworkRow {
  analysis::Route route;
  analysis::NetworkFloor floor;
};

// Everything one ladder run produced.
struct Ladder {
  probes::HostContext host;
  probes::ClockInfo clock;
  std::vector<probes::Rung> rungs;  // measured, sorted by median
  std::optional<probes::SqliteLadder> sqlite;
  std::optional<probes::DiskLadder> disk;
  std::vector<NetworkRow> network;
  double fibre_factor = analysis::kDefaultFibreFactor;
  std::vector<std::string> warnings;  // host's, then the disk's
  double duration_s = 0;
  std::string started_at;
};

json rung_json(const probes::Rung& r) {
  json j{{"group", r.group},
         {"id", r.id},
         {"name", r.name},
         {"method", r.method},
         {"rung", kMagnitudeIds[index_of(magnitude_of(r.median_ns))]},
         {"batch", r.batch},
         {"samples", r.samples},
         {"ops", r.ops},
         {"repeats", r.repeats},
         {"median_ns", r.median_ns},
         {"p99_ns", r.p99_ns},
         {"min_ns", r.min_ns},
         {"best_ns", r.best_ns},
         {"ops_per_s", r.ops_per_s}};
  if (!r.plan.empty()) j["plan"] = r.plan;
  return j;
}

json ladder_json(const Ladder& l, const probes::LadderOptions& o,
                 const std::vector<std::string>& only) {
  json rungs = json::array();
  for (const probes::Rung& r : l.rungs) rungs.push_back(rung_json(r));
  json sqlite;
  if (l.sqlite) {
    json plans = json::object();
    for (const probes::Rung& r : l.sqlite->rungs) plans[r.id] = r.plan;
    sqlite = {{"version", l.sqlite->version},
              {"rows", l.sqlite->rows},
              {"plans", plans},
              {"scan_over_key", l.sqlite->scan_over_key},
              {"scan_over_index", l.sqlite->scan_over_index}};
  }
  json disk;
  if (l.disk) {
    const probes::DiskTarget& t = l.disk->target;
    disk = {{"dir", t.dir},
            {"path", t.path},
            {"fs_type", t.fs_type},
            {"mount_point", t.mount_point},
            {"source", t.source},
            {"device", t.device},
            {"device_model", t.device_model},
            {"rotational", t.rotational < 0 ? json() : json(t.rotational)},
            {"memory", t.memory},
            {"block_bytes", l.disk->block_bytes},
            {"warnings", t.warnings}};
  }
  json network;
  if (std::find(only.begin(), only.end(), "network") != only.end()) {
    json routes = json::array();
    for (const NetworkRow& n : l.network) {
      routes.push_back(
          {{"name", n.route.name},
           {"from", {{"lat_deg", n.route.from.lat_deg}, {"lon_deg", n.route.from.lon_deg}}},
           {"to", {{"lat_deg", n.route.to.lat_deg}, {"lon_deg", n.route.to.lon_deg}}},
           {"distance_km", n.floor.distance_km},
           {"vacuum_rtt_ms", n.floor.vacuum_rtt_ms},
           {"fibre_rtt_ms", n.floor.fibre_rtt_ms},
           {"rung", kMagnitudeIds[index_of(magnitude_of(n.floor.fibre_rtt_ms * 1e6))]}});
    }
    network = {{"fibre_factor", l.fibre_factor},
               {"earth_radius_km", analysis::kEarthMeanRadiusKm},
               {"speed_of_light_km_per_s", analysis::kSpeedOfLightKmPerS},
               {"method",
                "computed, not measured: great-circle distance by the haversine formula on the "
                "WGS 84 mean radius; round trip = 2 x distance / speed, in a vacuum (c) and in "
                "fibre (fibre_factor x c)"},
               {"routes", routes}};
  }
  const probes::ClockInfo& c = l.clock;
  return json{{"schema_version", 1},
              {"kind", "ladder"},
              {"started_at", l.started_at},
              {"duration_s", l.duration_s},
              {"only", only},
              {"host", report::host_to_json(l.host)},
              {"clock",
               {{"getres_ns", c.getres_ns},
                {"smallest_step_ns", c.smallest_step_ns},
                {"now_cost_ns", c.now_cost_ns},
                {"target_sample_ns", c.target_sample_ns}}},
              {"params",
               {{"repeats", o.timing.repeats},
                {"max_samples_per_repeat", o.timing.max_samples},
                {"max_time_per_repeat_ms",
                 std::chrono::duration<double, std::milli>(o.timing.max_time).count()},
                {"warmup_ms", std::chrono::duration<double, std::milli>(o.timing.warmup).count()},
                {"disk_repeats", o.disk_timing.repeats},
                {"disk_max_writes_per_repeat", o.disk_timing.max_samples},
                {"disk_max_time_per_repeat_ms",
                 std::chrono::duration<double, std::milli>(o.disk_timing.max_time).count()},
                {"dram_bytes", o.dram_bytes},
                {"cache_bytes", o.cache_bytes},
                {"sqlite_rows", o.sqlite_rows},
                {"dir", o.dir}}},
              {"rungs", rungs},
              {"sqlite", sqlite},
              {"disk", disk},
              {"network", network},
              {"warnings", l.warnings}};
}

std::string header_text(const Ladder& l, const probes::LadderOptions& o) {
  const probes::HostContext& h = l.host;
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
  const probes::ClockInfo& c = l.clock;
  out += wrap(
      fmt::format(
          "  clock: steady_clock (CLOCK_MONOTONIC), clock_getres {} ns, smallest step seen {} ns, "
          "one read costs {:.1f} ns; operations shorter than {} are timed in batches",
          c.getres_ns, c.smallest_step_ns, c.now_cost_ns,
          duration_text(static_cast<double>(c.target_sample_ns))),
      4);
  if (l.disk) {
    const probes::DiskTarget& t = l.disk->target;
    out += wrap(
        fmt::format("  --dir {}: {} on {} (mounted at {}, {}){}", t.dir, t.path, t.fs_type,
                    t.mount_point.empty() ? "?" : t.mount_point,
                    t.source.empty() ? "source unknown" : t.source,
                    t.device.empty()
                        ? std::string()
                        : fmt::format(", device {}{}{}", t.device,
                                      t.device_model.empty() ? "" : " " + t.device_model,
                                      t.rotational < 0    ? ""
                                      : t.rotational == 1 ? ", rotational per the kernel"
                                                          : ", not rotational per the kernel")),
        4);
  }
  out += wrap(
      fmt::format(
          "  method: warm-up {} ms, then {} repeats of up to {} samples or {} ms each (disk: {} "
          "repeats of up to {} writes); median and p99 from an HDR histogram of every sample; best "
          "= "
          "the fastest repeat's mean (Python timeit's figure); ops/s = 1 s / median, one at a time",
          std::chrono::duration_cast<std::chrono::milliseconds>(o.timing.warmup).count(),
          o.timing.repeats, grouped(o.timing.max_samples),
          std::chrono::duration_cast<std::chrono::milliseconds>(o.timing.max_time).count(),
          o.disk_timing.repeats, o.disk_timing.max_samples),
      4);
  return out;
}

std::string ladder_text(const Ladder& l, const probes::LadderOptions& o) {
  std::string out = header_text(l, o);
  // One name column for every rung, left-aligned, so the ladder reads down at a glance.
  size_t width = std::string_view("round-trip floor (computed)").size();
  for (const probes::Rung& r : l.rungs) width = std::max(width, r.name.size());
  for (const NetworkRow& n : l.network) width = std::max(width, n.route.name.size());
  std::vector<const probes::Rung*> numbered;
  for (size_t m = 0; m < 4; ++m) {
    std::string rows;
    for (const probes::Rung& r : l.rungs) {
      if (index_of(magnitude_of(r.median_ns)) != m) continue;
      numbered.push_back(&r);
      rows += fmt::format("  {:>4} {:<{}} {:>9} {:>9} {:>9} {:>9}\n",
                          fmt::format("[{}]", numbered.size()), r.name, width,
                          duration_text(r.median_ns), duration_text(r.p99_ns),
                          duration_text(r.best_ns), rate_text(r.ops_per_s));
    }
    std::string net;
    for (const NetworkRow& n : l.network) {
      if (index_of(magnitude_of(n.floor.fibre_rtt_ms * 1e6)) != m) continue;
      net += fmt::format("  {:>4} {:<{}} {:>9} {:>9} {:>9}\n", "", n.route.name, width,
                         fmt::format("{} km", grouped(std::llround(n.floor.distance_km))),
                         fmt::format("{:.1f} ms", n.floor.vacuum_rtt_ms),
                         fmt::format("{:.1f} ms", n.floor.fibre_rtt_ms));
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
    for (const probes::Rung& r : l.sqlite->rungs) out += fmt::format("  {}: {}\n", r.name, r.plan);
    out += fmt::format(
        "  the scan takes {:.0f}x as long as the primary-key read; the index makes it {:.0f}x "
        "faster (medians)\n",
        l.sqlite->scan_over_key, l.sqlite->scan_over_index);
  }
  if (!l.network.empty()) {
    out += "\n" + wrap(fmt::format("Network floor: computed, not measured. Great-circle distance "
                                   "(haversine, WGS 84 mean "
                                   "radius {:.4f} km); round trip = 2 x distance at c = {:.3f} "
                                   "km/s (vacuum) and at {:.4f} c "
                                   "(fibre). Real round trips are slower: cables do not follow "
                                   "great circles, and routers "
                                   "and queues add time.",
                                   analysis::kEarthMeanRadiusKm, analysis::kSpeedOfLightKmPerS,
                                   l.fibre_factor),
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

class LadderCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("--dir", dir_,
                   "Directory for the durable-write rungs' file (default: current directory); on "
                   "a real disk, not tmpfs")
        ->capture_default_str();
    app.add_flag("--json", json_, "Print one JSON object on stdout instead of the ladder");
    app.add_option("--only", only_,
                   "Comma-separated groups to run: inprocess,sqlite,disk,loopback,network "
                   "(default: all)");
    app.add_option("--route", routes_,
                   "A network-floor route of your own, 'LAT,LON:LAT,LON' in decimal degrees "
                   "(repeatable), added after the seed's city pairs");
    app.add_option("--fibre-factor", fibre_factor_,
                   "Speed of light in fibre as a fraction of c, in (0, 1] (default 2/3)");
  }

  int run() override {
    Result<std::vector<std::string>> only = parse_only(only_);
    if (!only) return report_failure(only.status());
    const auto wants = [&](const char* g) {
      return std::find(only->begin(), only->end(), g) != only->end();
    };
    if (Status st = analysis::check_fibre_factor(fibre_factor_); !st) return report_failure(st);
    std::vector<analysis::Route> routes;
    if (wants("network")) routes = analysis::seed_routes();
    for (const std::string& text : routes_) {
      Result<analysis::Route> r = analysis::parse_route(text);
      if (!r) return report_failure(r.status());
      routes.push_back(std::move(*r));
    }
    if (!routes_.empty() && !wants("network")) {
      return report_failure(Status::invalid_argument(
          "--route: the network group is not in --only; add network to it"));
    }

    const probes::FsReader fs;
    probes::LadderOptions options;
    options.dir = dir_;
    Ladder l;
    l.started_at = now_iso8601();
    const auto start = core::Clock::now();
    l.host = probes::read_host_context(fs);
    l.clock = probes::measure_clock();
    options.timing.target_sample_ns = l.clock.target_sample_ns;
    // The DRAM array is 1 GiB, but at most a quarter of the memory available now (a power of
    // two), so a small VM is not pushed into the OOM killer by a measurement.
    std::vector<std::string> memory_warnings;
    const probes::UseSnapshot mem = probes::take_snapshot(fs, std::nullopt, core::Clock::now());
    if (mem.mem_available_bytes) {
      const int64_t quarter = static_cast<int64_t>(*mem.mem_available_bytes / 4);
      int64_t bytes = options.dram_bytes;
      while (bytes > quarter && bytes > (int64_t{1} << 20)) bytes /= 2;
      if (bytes < options.dram_bytes) {
        memory_warnings.push_back(fmt::format(
            "the DRAM array is {} MiB, not 1 GiB: only {} MiB of memory is available; below "
            "the last-level cache size the 'DRAM' rung measures a cache",
            bytes >> 20, *mem.mem_available_bytes >> 20));
        options.dram_bytes = bytes;
      }
    }
    l.fibre_factor = fibre_factor_;
    const bool progress = !json_ && ::isatty(STDERR_FILENO) == 1;
    const auto say = [&](const char* what) {
      if (progress) fmt::print(stderr, "knee ladder: measuring {}...\n", what);
    };

    // The disk's directory is checked first: a wrong --dir is bad input, found before a minute
    // of measuring.
    if (wants("disk")) {
      if (Result<probes::DiskTarget> t = probes::describe_dir(fs, dir_); !t) {
        return report_failure(t.status());
      }
    }
    if (wants("inprocess")) {
      say("in-process operations");
      Result<std::vector<probes::Rung>> r = probes::run_inprocess(options);
      if (!r) return report_failure(r.status());
      l.rungs.insert(l.rungs.end(), r->begin(), r->end());
    }
    if (wants("sqlite")) {
      say("SQLite reads");
      Result<probes::SqliteLadder> r = probes::run_sqlite(options);
      if (!r) return report_failure(r.status());
      l.rungs.insert(l.rungs.end(), r->rungs.begin(), r->rungs.end());
      l.sqlite = std::move(*r);
    }
    if (wants("disk")) {
      say("durable writes");
      Result<probes::DiskLadder> r = probes::run_disk(fs, options);
      if (!r) return report_failure(r.status());
      l.rungs.insert(l.rungs.end(), r->rungs.begin(), r->rungs.end());
      l.disk = std::move(*r);
    }
    if (wants("loopback")) {
      say("loopback TCP");
      Result<std::vector<probes::Rung>> r = probes::run_loopback(options);
      if (!r) return report_failure(r.status());
      l.rungs.insert(l.rungs.end(), r->begin(), r->end());
    }
    for (analysis::Route& route : routes) {
      const analysis::NetworkFloor floor =
          analysis::network_floor(route.from, route.to, fibre_factor_);
      l.network.push_back({std::move(route), floor});
    }
    std::stable_sort(
        l.rungs.begin(), l.rungs.end(),
        [](const probes::Rung& a, const probes::Rung& b) { return a.median_ns < b.median_ns; });
    std::stable_sort(l.network.begin(), l.network.end(),
                     [](const NetworkRow& a, const NetworkRow& b) {
                       return a.floor.fibre_rtt_ms < b.floor.fibre_rtt_ms;
                     });
    l.warnings = l.host.warnings;
    l.warnings.insert(l.warnings.end(), memory_warnings.begin(), memory_warnings.end());
    if (l.disk) {
      l.warnings.insert(l.warnings.end(), l.disk->target.warnings.begin(),
                        l.disk->target.warnings.end());
    }
    l.duration_s = std::chrono::duration<double>(core::Clock::now() - start).count();

    if (json_) {
      fmt::print("{}\n", ladder_json(l, options, *only).dump(2));
    } else {
      fmt::print("{}", ladder_text(l, options));
    }
    return kExitOk;
  }

 private:
  std::string dir_ = ".";
  bool json_ = false;
  std::string only_ = "inprocess,sqlite,disk,loopback,network";
  std::vector<std::string> routes_;
  double fibre_factor_ = analysis::kDefaultFibreFactor;
};

}  // namespace

std::unique_ptr<Subcommand> make_ladder_command() { return std::make_unique<LadderCommand>(); }

}  // namespace knee::cli
