#include "report/external.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/knee.h"
#include "analysis/little.h"
#include "analysis/saturation.h"
#include "analysis/usl.h"
#include "report/analyse.h"
#include "report/render.h"

namespace knee::report {
namespace {

// Repeats whose throughput spreads wider than this ratio (max / min) weaken their level (as for
// HTTP sweeps, report/analyse.cc).
constexpr double kRepeatSpreadLimit = 1.25;
constexpr double kBytesPerMib = 1024.0 * 1024.0;
// Host samples below which a run's host figures are too few to judge by.
constexpr int kMinSamples = 4;

std::optional<double> known(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

ExternalResultFigures result_figures(const core::ExternalFigures& f) {
  ExternalResultFigures r;
  if (!f.name.empty()) r.name = f.name;
  r.throughput = known(f.throughput);
  r.bandwidth_bytes_per_s = known(f.bandwidth_bytes_per_s);
  r.latency_mean_ns = known(f.latency_mean_ns);
  r.latency_p50_ns = known(f.latency_p50_ns);
  r.latency_p90_ns = known(f.latency_p90_ns);
  r.latency_p99_ns = known(f.latency_p99_ns);
  r.latency_p999_ns = known(f.latency_p999_ns);
  r.latency_max_ns = known(f.latency_max_ns);
  r.in_flight = known(f.in_flight);
  r.cpu_pct = known(f.cpu_pct);
  r.errors = f.errors;
  return r;
}

ExternalRunFigures run_figures(const core::ExternalRun& run) {
  ExternalRunFigures r;
  r.command = run.command;
  r.wall_s = run.wall_s;
  r.runtime_s = known(run.measured.runtime_s);
  r.tool_cpu_cores = known(run.tool_cpu_cores);
  if (run.measured.threads > 0) r.tool_threads = run.measured.threads;
  r.total = result_figures(run.measured.total);
  for (const core::ExternalFigures& j : run.measured.jobs) r.jobs.push_back(result_figures(j));
  r.notes = run.measured.notes;
  if (run.use) r.resources = resource_figures(*run.use);
  return r;
}

double throughput_of(const core::ExternalRun& r) {
  return core::is_known(r.measured.total.throughput) ? r.measured.total.throughput : 0;
}

size_t median_of(const std::vector<core::ExternalRun>& runs) {
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return throughput_of(runs[a]) < throughput_of(runs[b]);
  });
  return order[(order.size() - 1) / 2];
}

std::optional<Range> range_if_known(const std::vector<core::ExternalRun>& runs,
                                    double core::ExternalFigures::*field) {
  std::vector<double> values;
  for (const core::ExternalRun& r : runs) {
    if (!core::is_known(r.measured.total.*field)) return std::nullopt;
    values.push_back(r.measured.total.*field);
  }
  return range_of(std::move(values));
}

// The latency the knee rule reads: p99, else the mean (pgbench prints no percentiles).
double knee_latency_ns(const ExternalLevelFigures& l) {
  if (l.latency_p99_ns) return l.latency_p99_ns->median;
  if (l.latency_mean_ns) return l.latency_mean_ns->median;
  return NAN;
}

std::string ms_cell(std::optional<double> ns) {
  if (!ns) return "-";
  return *ns < 1e6 ? fmt::format("{:.1f} us", *ns / 1e3) : fmt::format("{:.2f} ms", *ns / 1e6);
}

std::string number_cell(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

// "4123" or "4123 (4010-4290)" with repeats.
std::string throughput_cell(const ExternalLevelFigures& l) {
  const Range& r = l.throughput;
  if (l.repeats < 2) return number_cell(r.median);
  return fmt::format("{} ({}-{})", number_cell(r.median), number_cell(r.min), number_cell(r.max));
}

}  // namespace

std::string level_name_of(const std::string& command_template) {
  const size_t at = command_template.find("{N}");
  if (at == std::string::npos) return "level";
  // The option right before {N}: "--iodepth={N}" or "-c {N}".
  size_t end = at;
  while (end > 0 && (command_template[end - 1] == '=' || command_template[end - 1] == ' ')) --end;
  size_t begin = end;
  while (begin > 0 && command_template[begin - 1] != ' ') --begin;
  std::string word = command_template.substr(begin, end - begin);
  if (!word.starts_with("-")) return "level";
  word.erase(0, word.find_first_not_of('-'));
  if (word == "c") return "clients";
  if (word == "j") return "threads";
  if (word.empty() || word.find_first_of("{}'\"") != std::string::npos) return "level";
  return word;
}

ExternalSweepDocument analyse_external_sweep(
    ExternalSweepSetup setup, const std::vector<std::vector<core::ExternalRun>>& levels,
    const probes::HostContext& host) {
  ExternalSweepDocument d;
  d.command = std::move(setup.command);
  d.adapter = std::move(setup.adapter);
  d.started_at = std::move(setup.started_at);
  d.repeats = setup.repeats;
  d.timeout_s = setup.timeout_s;
  d.device = setup.device;
  d.fs_type = setup.fs_type;
  d.failed = setup.failed;
  d.interrupted = setup.interrupted;
  d.host = host_figures(host);
  // The host's warnings about knee's own build speak of knee as the load generator; here the
  // command is.
  std::erase_if(d.host.warnings,
                [](const std::string& w) { return w.find("load generator") != std::string::npos; });
  const std::string level_name = level_name_of(d.command);
  std::set<std::string> notes;
  std::vector<analysis::LevelPoint> points;
  const core::ResourceUse* previous_use = nullptr;
  for (const std::vector<core::ExternalRun>& runs : levels) {
    if (runs.empty()) continue;
    const core::ExternalRun& run = runs[median_of(runs)];
    if (d.unit.empty()) d.unit = run.measured.unit;
    for (const std::string& f : run.measured.files) {
      if (std::find(d.files.begin(), d.files.end(), f) == d.files.end()) d.files.push_back(f);
    }
    ExternalLevelFigures l;
    l.level = run.level;
    l.median = run_figures(run);
    l.repeats = static_cast<int>(runs.size());
    std::vector<double> xs;
    for (const core::ExternalRun& r : runs) xs.push_back(throughput_of(r));
    l.throughput = range_of(xs);
    l.latency_mean_ns = range_if_known(runs, &core::ExternalFigures::latency_mean_ns);
    l.latency_p99_ns = range_if_known(runs, &core::ExternalFigures::latency_p99_ns);
    if (runs.size() > 1) {
      for (const core::ExternalRun& r : runs) l.runs.push_back(run_figures(r));
    }
    const core::ExternalFigures& t = run.measured.total;
    if (core::is_known(t.in_flight) && core::is_known(t.latency_mean_ns) && t.throughput > 0) {
      l.little =
          little_figures(analysis::check_little(t.in_flight, t.throughput, t.latency_mean_ns));
    }
    const core::ResourceUse use = run.use.value_or(core::ResourceUse{});
    if (d.device && l.median.resources) {
      for (const DiskFigures& disk : l.median.resources->disks) {
        if (disk.device == *d.device) l.disk = disk;
      }
    }
    analysis::ExternalLevelUse side;
    side.tool = d.adapter == "json" ? "the benchmark" : d.adapter;
    side.tool_cpu_cores = run.tool_cpu_cores;
    side.tool_threads = run.measured.threads;
    side.busiest_job_cpu_pct = t.cpu_pct;
    side.in_flight = t.in_flight;
    if (l.little && l.little->x_times_mean_r) side.x_times_mean_r = *l.little->x_times_mean_r;
    side.device = d.device.value_or("");
    side.files_in_memory = setup.files_in_memory;
    const analysis::SaturationVerdict v = analysis::name_external_limit(use, side, previous_use);
    l.saturated = SaturatedFigures{v.resource, v.detail, v.evidence, v.rule, v.warnings};
    if (run.use) previous_use = &*run.use;

    const std::string name = fmt::format("{} {}", level_name, run.level);
    for (const std::string& n : run.measured.notes) notes.insert(n);
    if (l.little && !l.little->holds && l.little->x_times_mean_r) {
      d.warnings.push_back(fmt::format(
          "Little's law at {}: X * mean R = {:.2f} while the tool kept {:g} in flight ({:.0f}% "
          "of it): {}",
          name, *l.little->x_times_mean_r, l.little->n, 100 * l.little->ratio.value_or(NAN),
          l.little->ratio.value_or(1) < 1
              ? "it did not keep them all busy (a rate cap, think time, a synchronous engine, or "
                "time outside the latency it reports)"
              : "the latency it reports misses part of the time in flight, or N is larger than it "
                "says"));
    }
    if (l.repeats > 1 && l.throughput.min > 0 &&
        l.throughput.max > kRepeatSpreadLimit * l.throughput.min) {
      d.warnings.push_back(fmt::format(
          "at {} the {} repeats' throughput spread {:.2f}x ({:.0f}-{:.0f} {}): the level's median "
          "is weak; rerun on a quieter host",
          name, l.repeats, l.throughput.max / l.throughput.min, l.throughput.min, l.throughput.max,
          d.unit));
    }
    if (t.errors > 0) {
      d.warnings.push_back(fmt::format("errors at {}: {} failed operations", name, t.errors));
    }
    if (l.saturated.resource == "client") {
      d.warnings.push_back(fmt::format("at {}: {}", name, l.saturated.detail));
    }
    for (const std::string& w : l.saturated.warnings) {
      d.warnings.push_back(fmt::format("at {}: {}", name, w));
    }
    if (run.use && run.use->intervals < kMinSamples) {
      d.warnings.push_back(fmt::format(
          "at {}: the command ran {:.2f} s, {} host sample{}: too short for its host figures "
          "(and the limit read from them) to mean much; make the run longer than a few "
          "--sample-every periods",
          name, run.wall_s, run.use->intervals, run.use->intervals == 1 ? "" : "s"));
    }
    points.push_back({static_cast<double>(run.level), l.throughput.median, knee_latency_ns(l)});
    d.levels.push_back(std::move(l));
  }
  d.warnings.insert(d.warnings.end(), notes.begin(), notes.end());
  if (setup.files_in_memory) {
    d.warnings.push_back(fmt::format(
        "the files are on {}, in memory: no device is measured, only the kernel's and the "
        "tool's CPU",
        d.fs_type.value_or("a memory filesystem")));
  }

  const analysis::KneeVerdict knee =
      analysis::find_knee(points, 0.10, 1.5, level_name, 0.10, d.unit.empty() ? "ops/s" : d.unit);
  d.knee.rule = knee.rule;
  d.knee.summary = knee.summary;
  d.knee.index = knee.index;
  d.knee.noisy_index = knee.noisy_index;
  for (double g : knee.gain_per_doubling) d.knee.gain_per_doubling.push_back(known(g));
  if (knee.index) {
    d.knee.concurrency = d.levels[*knee.index].level;
    // The knee's own level still gained; what limited the curve shows at the next one.
    const size_t at = *knee.index + 1 < d.levels.size() ? *knee.index + 1 : *knee.index;
    d.knee.saturated_index = at;
    d.knee.saturated = d.levels[at].saturated.resource;
  }
  std::vector<analysis::ThroughputPoint> xs;
  for (const analysis::LevelPoint& p : points) {
    if (p.concurrency > 0 && p.throughput_rps > 0) xs.push_back({p.concurrency, p.throughput_rps});
  }
  if (xs.size() >= 3) {
    if (auto fit = analysis::fit_usl(xs)) {
      d.usl = usl_figures(*fit);
    } else {
      d.usl_error = fit.status().message();
    }
  }
  return d;
}

namespace {

std::vector<std::string> header_of(const ExternalSweepDocument& d) {
  return {level_name_of(d.command),
          d.unit.empty() ? "ops/s" : d.unit,
          "MiB/s",
          "mean",
          "p50",
          "p99",
          "in flight",
          "X*meanR",
          "disk %util",
          "aqu-sz",
          "limit"};
}

std::vector<std::string> row_of(const ExternalLevelFigures& l, bool knee) {
  const ExternalResultFigures& t = l.median.total;
  std::string util = "-", queue = "-";
  if (l.disk) {
    if (l.disk->util_pct) util = fmt::format("{:.0f}%", *l.disk->util_pct);
    if (l.disk->aqu_sz) queue = fmt::format("{:.2f}", *l.disk->aqu_sz);
  }
  return {
      std::to_string(l.level),
      throughput_cell(l),
      t.bandwidth_bytes_per_s ? fmt::format("{:.1f}", *t.bandwidth_bytes_per_s / kBytesPerMib)
                              : "-",
      ms_cell(t.latency_mean_ns),
      ms_cell(t.latency_p50_ns),
      ms_cell(t.latency_p99_ns),
      t.in_flight ? fmt::format("{:g}", *t.in_flight) : "-",
      l.little && l.little->x_times_mean_r ? fmt::format("{:.2f}", *l.little->x_times_mean_r) : "-",
      util,
      queue,
      l.saturated.resource + (knee ? "  <- knee" : "")};
}

}  // namespace

std::string external_live_line(const std::string& level_name, const core::ExternalRun& run) {
  const core::ExternalFigures& t = run.measured.total;
  std::string line = fmt::format("{} {}: {} {}", level_name, run.level, number_cell(t.throughput),
                                 run.measured.unit);
  if (core::is_known(t.latency_mean_ns)) line += ", mean " + ms_cell(t.latency_mean_ns);
  if (core::is_known(t.latency_p99_ns)) line += ", p99 " + ms_cell(t.latency_p99_ns);
  return line + fmt::format(" ({:.1f} s)", run.wall_s);
}

std::string render_external_sweep_text(const ExternalSweepDocument& d) {
  std::string out = fmt::format("{} sweep of `{}`, {} level{}{}\n", d.adapter, d.command,
                                d.levels.size(), d.levels.size() == 1 ? "" : "s",
                                d.repeats > 1 ? fmt::format(", {} repeats each", d.repeats) : "");
  if (!d.files.empty()) {
    std::string files;
    for (const std::string& f : d.files) files += (files.empty() ? "" : ", ") + f;
    out += fmt::format("files {} on {}{}\n", files,
                       d.device ? "device " + *d.device : std::string("no block device"),
                       d.fs_type ? " (" + *d.fs_type + ")" : std::string());
  }
  std::vector<std::vector<std::string>> rows = {header_of(d)};
  for (size_t i = 0; i < d.levels.size(); ++i) {
    rows.push_back(row_of(d.levels[i], d.knee.index && *d.knee.index == i));
  }
  out += render_table(rows);
  for (const ExternalLevelFigures& l : d.levels) {
    if (l.median.jobs.empty()) continue;
    out += fmt::format("  per job at {} {}:", level_name_of(d.command), l.level);
    for (const ExternalResultFigures& j : l.median.jobs) {
      out += fmt::format(" {} {} {}, p99 {};", j.name.value_or("?"),
                         j.throughput ? number_cell(*j.throughput) : "-", d.unit,
                         ms_cell(j.latency_p99_ns));
    }
    out.back() = '\n';
  }
  out += "\n";
  out += fmt::format("knee: {}\n", d.knee.summary);
  out += fmt::format("  rule: {}\n", d.knee.rule);
  if (!d.levels.empty()) {
    const size_t at = d.knee.saturated_index.value_or(d.levels.size() - 1);
    const ExternalLevelFigures& l = d.levels[std::min(at, d.levels.size() - 1)];
    const char* where = !d.knee.index         ? "at the last level"
                        : at != *d.knee.index ? "past the knee"
                                              : "at the knee";
    out += fmt::format("limit {} ({} {}): {}: {}\n", where, level_name_of(d.command), l.level,
                       l.saturated.resource, l.saturated.detail);
    for (const std::string& e : l.saturated.evidence) out += fmt::format("  {}\n", e);
    out += fmt::format("  {}\n", l.saturated.rule);
  }
  out += usl_text(d.usl, d.usl_error, d.unit);
  bool any_little = false, all_hold = true;
  for (const ExternalLevelFigures& l : d.levels) {
    if (!l.little) continue;
    any_little = true;
    all_hold = all_hold && l.little->holds;
  }
  if (any_little) {
    out += fmt::format(
        "Little's law N = X * R (N the tool's own in flight, R its mean latency): {}\n",
        all_hold ? "within 5% at every level" : "does NOT hold at every level; see warnings");
  }
  for (const std::string& w : d.warnings) out += fmt::format("warning: {}\n", w);
  if (d.interrupted) out += "interrupted: the levels above are those measured whole\n";
  if (d.failed) out += fmt::format("stopped: {}\n", *d.failed);
  for (const std::string& w : d.host.warnings) out += fmt::format("host: {}\n", w);
  return out;
}

}  // namespace knee::report
