#include "report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/render.h"

namespace knee::report {

using core::Result;
using core::Status;

namespace {

std::string key_text(double key, bool open) {
  if (!open || key == std::round(key)) return fmt::format("{:.0f}", key);
  return fmt::format("{:.1f}", key);
}

std::string keys_text(const std::vector<LevelKey>& keys, bool open) {
  std::string out;
  for (const LevelKey& k : keys) out += (out.empty() ? "" : ", ") + key_text(k.value, open);
  return out;
}

// "282" or "282 (280-284)" for throughput; latencies in ms with 3 decimals.
std::string figure_text(const std::string& name, const Range& r, int repeats) {
  const bool latency = name != "throughput_rps";
  const double scale = latency ? 1e-6 : 1.0;
  const int decimals = latency ? 3 : 0;
  if (repeats <= 1) return fmt::format("{:.{}f}", r.median * scale, decimals);
  return fmt::format("{:.{}f} ({:.{}f}-{:.{}f})", r.median * scale, decimals, r.min * scale,
                     decimals, r.max * scale, decimals);
}

std::string figure_label(const std::string& name, const std::optional<std::string>& unit) {
  if (name == "throughput_rps") return fmt::format("throughput({})", unit.value_or("req/s"));
  if (name == "p50_ns") return "p50(ms)";
  if (name == "p90_ns") return "p90(ms)";
  if (name == "p99_ns") return "p99(ms)";
  return "p99.9(ms)";
}

std::string side_text(const char* letter, const CompareSideFigures& s) {
  if (s.kind == "external_sweep") {
    return fmt::format(
        "  {} = {}: a sweep of {} ({}), {} repeat{}, started {}\n      command: {}\n", letter,
        s.file, s.protocol.value_or("?"), s.unit.value_or("?"), s.repeats,
        s.repeats == 1 ? "" : "s", s.started_at, s.target);
  }
  return fmt::format(
      "  {} = {}: {}, {} client thread{}, {:.2f} s measured per {}, {} repeat{}, started {}\n"
      "      target: {}{}\n",
      letter, s.file, s.kind, s.threads, s.threads == 1 ? "" : "s", s.duration_s,
      s.kind == "sweep" ? "level" : "run", s.repeats, s.repeats == 1 ? "" : "s", s.started_at,
      s.target, s.protocol ? "\n      protocol: " + *s.protocol : "");
}

CompareLevel compare_level(const LevelFigures& l) {
  CompareLevel c;
  c.key = l.median.level_key();
  c.repeats = std::max(1, l.repeats);
  c.throughput_rps = l.ranges.throughput_rps;
  c.p50_ns = l.ranges.latency_ns.p50;
  c.p90_ns = l.ranges.latency_ns.p90;
  c.p99_ns = l.ranges.latency_ns.p99;
  c.p999_ns = l.ranges.latency_ns.p999;
  return c;
}

CompareSide side_of(const std::string& label, const std::string& kind, const std::string& target,
                    const std::string& started_at, const LoadParams& params) {
  CompareSide side;
  side.label = label;
  side.kind = kind;
  side.target = target;
  side.started_at = started_at;
  side.threads = params.threads;
  side.duration_s = params.duration_s;
  side.repeats = params.repeats;
  side.protocol = protocol_name(params, nullptr);
  side.stages = params.stages.value_or("");
  side.mix = params.mix.value_or("");
  side.io = params.io.value_or("epoll");
  return side;
}

CompareSideFigures side_figures(const CompareSide& s) {
  return CompareSideFigures{s.label,
                            s.kind,
                            s.open ? LoopMode::kOpen : LoopMode::kClosed,
                            s.target,
                            s.started_at,
                            s.threads,
                            s.duration_s,
                            s.repeats,
                            s.protocol,
                            s.unit.empty() ? std::nullopt : std::optional<std::string>(s.unit)};
}

// An external sweep's level: throughput and p99 over its repeats (the tools give no other
// percentile ranges; the others stay 0 and are left out of the comparison).
CompareLevel external_level(const ExternalLevelFigures& l) {
  CompareLevel c;
  c.key = l.level;
  c.repeats = std::max(1, l.repeats);
  c.throughput_rps = l.throughput;
  if (l.latency_p99_ns) c.p99_ns = *l.latency_p99_ns;
  return c;
}

// What differs between the two measurements besides the figures: a comparison of one server
// before and after a change wants the same target, protocol, client and measured time; each
// difference gets one sentence, so a comparison of two servers, or of two set-ups, says so.
std::vector<std::string> condition_notes(const CompareSide& a, const CompareSide& b) {
  std::vector<std::string> notes;
  const bool external = a.kind == "external_sweep";
  // With a mix only the URL's origin is the target (each endpoint names its path): one server
  // sent two workloads, not two servers (regression: a mix against a plain /fast run was called
  // two servers, and two different mixes were compared without a word).
  const auto origin = [](const std::string& url) {
    const size_t scheme = url.find("://");
    return url.substr(0, url.find('/', scheme == std::string::npos ? 0 : scheme + 3));
  };
  const bool other_mix = a.mix != b.mix;
  if (a.target != b.target && !(other_mix && origin(a.target) == origin(b.target))) {
    notes.push_back(fmt::format(
        "a and b measured different {} ({} and {}): each row compares two {}, not one before "
        "and after a change",
        external ? "commands" : "targets", a.target, b.target, external ? "set-ups" : "servers"));
  }
  if (a.protocol != b.protocol) {
    notes.push_back(
        fmt::format("a used {} and b {}: the protocols' own costs are in the difference",
                    a.protocol, b.protocol));
  }
  if (!external && a.io != b.io) {
    notes.push_back(fmt::format(
        "a wrote its requests through {} and b through {} (--io): the client's CPU per request "
        "differs; where either file names the load generator as the saturated resource, so may "
        "the figures",
        a.io, b.io));
  }
  if (!external && a.threads != b.threads) {
    notes.push_back(fmt::format(
        "a ran {} client thread{} and b {}: where either file names the load generator as the "
        "saturated resource, part of the difference is the client's",
        a.threads, a.threads == 1 ? "" : "s", b.threads));
  }
  if (!external &&
      std::abs(a.duration_s - b.duration_s) > 0.05 * std::max(a.duration_s, b.duration_s)) {
    notes.push_back(fmt::format(
        "a measured {:.2f} s per {} and b {:.2f} s: the shorter one's tail percentiles rest on "
        "fewer responses",
        a.duration_s, a.kind == "sweep" ? "level" : "run", b.duration_s));
  }
  if (other_mix) {
    const auto load = [](const CompareSide& s) {
      return s.mix.empty() ? fmt::format("every request to {}", s.target)
                           : fmt::format("the mix '{}'", s.mix);
    };
    notes.push_back(fmt::format(
        "a sent {} and b {}: each row compares two workloads, not one before and after a change",
        load(a), load(b)));
  }
  // A staged run is keyed by the mean rate its stages intended: at the same key, a ramp and a
  // constant rate (or two ramps) offer different loads. Regression (a new user's trial): a
  // staged run and a constant-rate run were compared without a word.
  if (a.stages != b.stages) {
    const auto load = [](const std::string& stages) {
      return stages.empty() ? std::string("at a constant rate") : "in stages " + stages;
    };
    notes.push_back(fmt::format(
        "a ran {} and b {}: a staged run's figures mix the rates it passed through, so each row "
        "compares two different loads; compare runs of the same stages",
        load(a.stages), load(b.stages)));
  }
  return notes;
}

}  // namespace

Result<CompareSide> compare_side(const Document& doc, const std::string& label) {
  if (const auto* run = std::get_if<RunDocument>(&doc)) {
    CompareSide side = side_of(label, "run", run->target, run->started_at, run->params);
    side.open = run->level.mode == LoopMode::kOpen;
    side.levels.push_back(compare_level(run->level));
    return side;
  }
  if (const auto* sweep = std::get_if<SweepDocument>(&doc)) {
    CompareSide side = side_of(label, "sweep", sweep->target, sweep->started_at, sweep->params);
    side.open = sweep->mode() == LoopMode::kOpen;
    for (const LevelFigures& l : sweep->levels) side.levels.push_back(compare_level(l));
    return side;
  }
  if (const auto* ext = std::get_if<ExternalSweepDocument>(&doc)) {
    CompareSide side;
    side.label = label;
    side.kind = "external_sweep";
    side.target = ext->command;
    side.started_at = ext->started_at;
    side.repeats = ext->repeats;
    side.protocol = ext->adapter;
    side.unit = ext->unit;
    for (const ExternalLevelFigures& l : ext->levels) side.levels.push_back(external_level(l));
    return side;
  }
  return wrong_document(label, doc, "knee report a.json b.json",
                        "two results of knee run or knee sweep, or two of knee sweep --exec");
}

std::string_view difference_text(Difference d) {
  switch (d) {
    case Difference::kHigher:
      return "b higher";
    case Difference::kLower:
      return "b lower";
    case Difference::kWithin:
      return "within run-to-run range";
    case Difference::kCannotTell:
      break;
  }
  return "cannot tell (no repeats)";
}

std::string_view difference_name(Difference d) {
  switch (d) {
    case Difference::kHigher:
      return "higher";
    case Difference::kLower:
      return "lower";
    case Difference::kWithin:
      return "within";
    case Difference::kCannotTell:
      break;
  }
  return "cannot_tell";
}

Difference difference_of(std::string_view name) {
  for (Difference d : {Difference::kHigher, Difference::kLower, Difference::kWithin}) {
    if (difference_name(d) == name) return d;
  }
  return Difference::kCannotTell;
}

Difference classify(const Range& a, int a_repeats, const Range& b, int b_repeats) {
  if (a_repeats < 2 || b_repeats < 2) return Difference::kCannotTell;
  if (b.min > a.max) return Difference::kHigher;
  if (b.max < a.min) return Difference::kLower;
  return Difference::kWithin;
}

Result<ComparisonDocument> compare(const CompareSide& a, const CompareSide& b) {
  if (a.open != b.open) {
    return Status::invalid_argument(fmt::format(
        "{} is {} loop and {} is {} loop: their levels (connections against arrival rates) "
        "cannot be matched; compare two closed-loop or two open-loop results",
        a.label, a.open ? "an open" : "a closed", b.label, b.open ? "an open" : "a closed"));
  }
  const bool external = a.kind == "external_sweep";
  if (external != (b.kind == "external_sweep") || (external && a.unit != b.unit)) {
    return Status::invalid_argument(fmt::format(
        "{} is {} and {} is {}: their throughputs are not the same figure; compare two HTTP "
        "results, or two sweeps of the same tool",
        a.label, external ? "a sweep of " + a.protocol : a.kind, b.label,
        b.kind == "external_sweep" ? "a sweep of " + b.protocol : b.kind));
  }
  ComparisonDocument c;
  c.key = a.open ? "rate_rps" : "concurrency";
  c.a = side_figures(a);
  c.b = side_figures(b);
  c.notes = condition_notes(a, b);
  std::map<double, const CompareLevel*> in_a;
  std::map<double, const CompareLevel*> in_b;
  for (const CompareLevel& l : a.levels) in_a.emplace(l.key, &l);
  for (const CompareLevel& l : b.levels) in_b.emplace(l.key, &l);
  for (const auto& [key, la] : in_a) {
    auto it = in_b.find(key);
    if (it == in_b.end()) {
      c.only_in_a.push_back(LevelKey{key});
      continue;
    }
    const CompareLevel& lb = *it->second;
    CompareLevelFigures level;
    (a.open ? level.rate_rps : level.concurrency) = LevelKey{key};
    level.a_repeats = la->repeats;
    level.b_repeats = lb.repeats;
    const Range CompareLevel::*members[] = {&CompareLevel::throughput_rps, &CompareLevel::p50_ns,
                                            &CompareLevel::p90_ns, &CompareLevel::p99_ns,
                                            &CompareLevel::p999_ns};
    for (size_t f = 0; f < std::size(members); ++f) {
      FigureFigures fc;
      fc.a = la->*members[f];
      fc.b = lb.*members[f];
      if (external && fc.a.median == 0 && fc.b.median == 0) continue;  // not measured
      if (fc.a.median != 0) fc.ratio = fc.b.median / fc.a.median;
      fc.difference = std::string(difference_name(classify(fc.a, la->repeats, fc.b, lb.repeats)));
      level.figures[kComparedFigures[f]] = std::move(fc);
    }
    c.levels.push_back(std::move(level));
  }
  for (const auto& [key, lb] : in_b) {
    if (!in_a.contains(key)) c.only_in_b.push_back(LevelKey{key});
  }
  return c;
}

Result<ComparisonDocument> compare(const Document& a, const std::string& label_a, const Document& b,
                                   const std::string& label_b) {
  auto sa = compare_side(a, label_a);
  if (!sa) return sa.status();
  auto sb = compare_side(b, label_b);
  if (!sb) return sb.status();
  return compare(*sa, *sb);
}

std::vector<std::vector<std::string>> compare_rows(const ComparisonDocument& c) {
  const bool open = c.a.mode == LoopMode::kOpen;
  std::vector<std::vector<std::string>> rows;
  rows.push_back({open                           ? "rate(req/s)"
                  : c.a.kind == "external_sweep" ? "level"
                                                 : "concurrency",
                  "figure", "a", "b", "b/a", "verdict"});
  for (const CompareLevelFigures& level : c.levels) {
    const LevelKey key = level.rate_rps ? *level.rate_rps : level.concurrency.value_or(LevelKey{});
    bool first = true;
    for (const char* name : kComparedFigures) {
      auto it = level.figures.find(name);
      if (it == level.figures.end()) continue;
      const FigureFigures& f = it->second;
      rows.push_back({first ? key_text(key.value, open) : "", figure_label(name, c.a.unit),
                      figure_text(name, f.a, level.a_repeats),
                      figure_text(name, f.b, level.b_repeats),
                      f.ratio ? fmt::format("{:.2f}x", *f.ratio) : "-",
                      std::string(difference_text(difference_of(f.difference)))});
      first = false;
    }
  }
  return rows;
}

std::string render_compare_text(const ComparisonDocument& c) {
  const bool open = c.a.mode == LoopMode::kOpen;
  std::string out = "knee report: a against b, level by level\n";
  out += side_text("a", c.a);
  out += side_text("b", c.b);
  out += fmt::format(
      "  levels matched by {}; figures are the median (min-max) over the repeats; a difference "
      "counts when both files have repeats and the two min-max ranges do not overlap\n\n",
      open                           ? "arrival rate"
      : c.a.kind == "external_sweep" ? "level (the N put into {N})"
                                     : "concurrency");
  for (const std::string& note : c.notes) out += fmt::format("  note: {}\n", note);
  if (!c.notes.empty()) out += "\n";
  if (c.levels.empty()) {
    out += "no level is in both files\n";
  } else {
    out += render_table(compare_rows(c), {false, true, false, false, false, true});
  }
  const char* what = open ? "rate" : c.a.kind == "external_sweep" ? "level" : "concurrency";
  if (!c.only_in_a.empty()) {
    out += fmt::format("only in a ({}): {} {}\n", c.a.file, what, keys_text(c.only_in_a, open));
  }
  if (!c.only_in_b.empty()) {
    out += fmt::format("only in b ({}): {} {}\n", c.b.file, what, keys_text(c.only_in_b, open));
  }
  return out;
}

}  // namespace knee::report
