#include "report/merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/analyse.h"

namespace knee::report {

namespace {

using core::Status;

// The levels of a run (one) or of a sweep.
std::vector<const LevelFigures*> levels_of(const Document& doc) {
  std::vector<const LevelFigures*> out;
  if (const auto* r = std::get_if<RunDocument>(&doc)) out.push_back(&r->level);
  if (const auto* s = std::get_if<SweepDocument>(&doc)) {
    for (const LevelFigures& l : s->levels) out.push_back(&l);
  }
  return out;
}

const LoadParams& params_of(const Document& doc) {
  if (const auto* r = std::get_if<RunDocument>(&doc)) return r->params;
  return std::get<SweepDocument>(doc).params;
}

Status check_parts(const std::vector<MergePart>& parts) {
  if (parts.empty()) return Status::invalid_argument("merge needs the results of the parts");
  const MergePart& first = parts.front();
  const bool run = std::holds_alternative<RunDocument>(first.doc);
  const auto first_levels = levels_of(first.doc);
  std::set<int> indices;
  for (const MergePart& p : parts) {
    if (!std::holds_alternative<RunDocument>(p.doc) &&
        !std::holds_alternative<SweepDocument>(p.doc)) {
      return wrong_document(p.source, p.doc, "report merge", "runs or sweeps of knee run|sweep");
    }
    if (std::holds_alternative<RunDocument>(p.doc) != run) {
      return Status::invalid_argument(fmt::format("{} is {} and {} is {}: merge parts of one kind",
                                                  first.source, kind_words(first.doc), p.source,
                                                  kind_words(p.doc)));
    }
    const auto levels = levels_of(p.doc);
    // The load as asked for, less what differs between parts by design.
    auto shape = [](LoadParams q) {
      q.part.reset();
      q.threads = 0;
      q.url.clear();
      return q;
    };
    if (params_of(p.doc).url == params_of(first.doc).url &&
        !(shape(params_of(p.doc)) == shape(params_of(first.doc)))) {
      return Status::invalid_argument(fmt::format(
          "{} and {} were run with different settings (duration, warm-up, method, arrivals, "
          "protocol, mix or stages): parts of one load share them",
          p.source, first.source));
    }
    if (params_of(p.doc).url != params_of(first.doc).url) {
      return Status::invalid_argument(fmt::format("{} measured {} but {} measured {}", p.source,
                                                  params_of(p.doc).url, first.source,
                                                  params_of(first.doc).url));
    }
    if (levels.size() != first_levels.size() || levels.empty()) {
      return Status::invalid_argument(fmt::format("{} has {} levels but {} has {}", p.source,
                                                  levels.size(), first.source,
                                                  first_levels.size()));
    }
    for (size_t l = 0; l < levels.size(); ++l) {
      if (levels[l]->mode != first_levels[l]->mode) {
        return Status::invalid_argument(fmt::format("{} is {} and {} is {}", p.source,
                                                    kind_words(p.doc), first.source,
                                                    kind_words(first.doc)));
      }
      if (levels[l]->records.size() != static_cast<size_t>(levels[l]->repeats) ||
          levels[l]->repeats != first_levels[l]->repeats) {
        return Status::invalid_argument(
            levels[l]->records.empty()
                ? fmt::format("{} has no run records (written by a knee before them): measure "
                              "again to merge exactly",
                              p.source)
                : fmt::format("{} level {} has {} repeats but {} has {}", p.source, l + 1,
                              levels[l]->records.size(), first.source,
                              first_levels[l]->records.size()));
      }
    }
    const auto& part = params_of(p.doc).part;
    const auto& first_part = params_of(first.doc).part;
    if (part.has_value() != first_part.has_value() || (part && part->count != first_part->count)) {
      return Status::invalid_argument(fmt::format(
          "{} was {} and {} was {}: merge the parts of one split", p.source,
          part ? fmt::format("part {}/{}", part->index, part->count) : "not run with --part",
          first.source,
          first_part ? fmt::format("part {}/{}", first_part->index, first_part->count)
                     : "not run with --part"));
    }
    if (part && !indices.insert(part->index).second) {
      return Status::invalid_argument(fmt::format("{} is part {}/{} again: each part once",
                                                  p.source, part->index, part->count));
    }
  }
  if (const auto& part = params_of(first.doc).part) {
    std::vector<std::string> missing;
    for (int i = 0; i < part->count; ++i) {
      if (indices.count(i) == 0) missing.push_back(std::to_string(i));
    }
    if (!missing.empty()) {
      return Status::invalid_argument(fmt::format(
          "part {} of {} is missing: a merge of some parts is not the result of the load; give "
          "every part's file",
          fmt::join(missing, ", "), part->count));
    }
  }
  if (parts.size() < 2) {
    return Status::invalid_argument("merge needs at least two results, one per part of the load");
  }
  for (size_t a = 0; a < parts.size(); ++a) {
    for (size_t b = a + 1; b < parts.size(); ++b) {
      if (levels_of(parts[a].doc).front()->records.front() ==
          levels_of(parts[b].doc).front()->records.front()) {
        return Status::invalid_argument(
            fmt::format("{} holds the same measurement as {}: each part once", parts[b].source,
                        parts[a].source));
      }
    }
  }
  return Status::success();
}

// Each part's figures at one level, with the offset of its median repeat's start.
std::vector<PartFigures> part_figures(const std::vector<MergePart>& parts, size_t level,
                                      std::vector<const core::ResourceUse*>& previous_use) {
  const size_t repeats = levels_of(parts.front().doc)[level]->records.size();
  std::vector<PartFigures> out;
  for (size_t p = 0; p < parts.size(); ++p) {
    const LevelFigures& mine = *levels_of(parts[p].doc)[level];
    std::vector<core::RunResult> runs;
    for (const RunRecord& r : mine.records) runs.push_back(r.result);
    const LevelFigures lf = level_figures(runs, previous_use[p]);
    const size_t k = median_index(runs);
    // Starts on one clock where the offsets are known.
    auto start_of = [&](const MergePart& part, size_t repeat) {
      return levels_of(part.doc)[level]->records[repeat].result.measure_start_epoch_s -
             part.clock_offset_s.value_or(0);
    };
    double earliest = start_of(parts[p], k);
    for (const MergePart& other : parts) {
      if (k < repeats) earliest = std::min(earliest, start_of(other, k));
    }
    const core::RunResult& run = runs[k];
    if (run.use) previous_use[p] = &mine.records[k].result.use.value();
    PartFigures f;
    f.part =
        params_of(parts[p].doc).part ? params_of(parts[p].doc).part->index : static_cast<int>(p);
    f.host = mine.records[k].host;
    f.source = parts[p].source;
    f.connections = run.connections;
    if (run.open_loop()) f.rate_rps = run.target_rate_rps;
    f.throughput_rps = run.throughput_rps();
    f.errors = run.stats.total_errors();
    f.client_cpu_cores = run.client_cpu_cores();
    f.client_max_thread_cpu_demand = run.stats.max_thread_cpu_demand;
    f.start_offset_ms = (start_of(parts[p], k) - earliest) * 1e3;
    if (parts[p].clock_offset_s) f.clock_offset_ms = *parts[p].clock_offset_s * 1e3;
    if (lf.saturated) {
      f.saturated = lf.saturated->resource;
      f.detail = lf.saturated->detail;
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(),
            [](const PartFigures& a, const PartFigures& b) { return a.part < b.part; });
  return out;
}

// Parts whose measured phases did not overlap were not one load (a stale file of an earlier run).
Status check_overlap(const std::vector<PartFigures>& parts, double part_duration_s) {
  for (const PartFigures& p : parts) {
    if (p.start_offset_ms > part_duration_s * 1e3) {
      return Status::invalid_argument(fmt::format(
          "{} began its measured phase {:.1f} s after the first part's, past that phase's end: "
          "the parts did not run together (a file of another run?)",
          p.source, p.start_offset_ms / 1e3));
    }
  }
  return Status::success();
}

std::string skew_warning(const std::vector<PartFigures>& parts, double duration_s,
                         const std::string& where) {
  double spread = 0;
  for (const PartFigures& p : parts) spread = std::max(spread, p.start_offset_ms);
  if (spread <= 0.01 * duration_s * 1e3) return "";
  const bool one_clock = !parts.empty() && parts.front().clock_offset_ms.has_value();
  return fmt::format(
      "{}the parts' measured phases began up to {:.1f} ms apart ({}), {:.1f} % of the phase: the "
      "merged throughput is over the span they covered together{}",
      where, spread, one_clock ? "clock offsets corrected" : "by each machine's clock",
      spread / (duration_s * 10),
      one_clock ? "" : "; start separate processes together with --start-at");
}

}  // namespace

core::Result<Document> merge_documents(const std::vector<MergePart>& parts) {
  if (Status s = check_parts(parts); !s) return s;
  const Document& first = parts.front().doc;
  const size_t levels = levels_of(first).size();
  std::vector<std::vector<core::RunResult>> merged(levels);
  for (size_t l = 0; l < levels; ++l) {
    const size_t repeats = levels_of(first)[l]->records.size();
    for (size_t k = 0; k < repeats; ++k) {
      std::vector<core::RunResult> runs;
      for (const MergePart& p : parts) {
        runs.push_back(levels_of(p.doc)[l]->records[k].result);
        runs.back().measure_start_epoch_s -= p.clock_offset_s.value_or(0);  // on one clock
      }
      merged[l].push_back(core::merge_parts(runs));
    }
  }
  LoadParams params = params_of(first);
  params.part.reset();
  params.merged_from.clear();
  std::string started_at;
  for (const MergePart& p : parts) {
    params.merged_from.push_back(p.source);
    const std::string& at = std::holds_alternative<RunDocument>(p.doc)
                                ? std::get<RunDocument>(p.doc).started_at
                                : std::get<SweepDocument>(p.doc).started_at;
    if (started_at.empty() || at < started_at) started_at = at;
  }
  params.threads = 0;
  for (const MergePart& p : parts) params.threads += params_of(p.doc).threads;
  probes::HostContext no_host;
  no_host.hostname = fmt::format("merged from {} parts", parts.size());
  std::vector<const core::ResourceUse*> previous_use(parts.size(), nullptr);
  if (const auto* run = std::get_if<RunDocument>(&first)) {
    RunDocument d = analyse_run(run->target, started_at, params, merged.front(), no_host);
    d.host = run->host;
    d.level.parts = part_figures(parts, 0, previous_use);
    const double phase = levels_of(first).front()->records.front().result.duration_s;
    if (Status s = check_overlap(d.level.parts, phase); !s) return s;
    if (std::string w = skew_warning(d.level.parts, d.level.median.duration_s, ""); !w.empty()) {
      d.level.notes.push_back(w);
    }
    return Document(std::move(d));
  }
  const auto& sweep = std::get<SweepDocument>(first);
  SweepDocument d = analyse_sweep(sweep.target, started_at, params, merged, no_host);
  d.host = sweep.host;
  for (size_t l = 0; l < levels; ++l) {
    d.levels[l].parts = part_figures(parts, l, previous_use);
    const double phase = levels_of(first)[l]->records.front().result.duration_s;
    if (Status s = check_overlap(d.levels[l].parts, phase); !s) return s;
    const std::string w = skew_warning(d.levels[l].parts, d.levels[l].median.duration_s,
                                       fmt::format("level {}: ", l + 1));
    if (!w.empty()) d.warnings.push_back(w);
  }
  return Document(std::move(d));
}

}  // namespace knee::report
