#include "report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/render.h"

namespace knee::report {

using core::Result;
using core::Status;
using nlohmann::json;

namespace {

constexpr int kReadableSchemaVersion = 1;
constexpr int kComparisonSchemaVersion = 1;

const char* const kFigureNames[] = {"throughput_rps", "p50_ns", "p90_ns", "p99_ns", "p999_ns"};

bool is_number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number();
}

// {median, min, max} at `j`, or a single value `fallback` as all three.
std::optional<Range> range_at(const json& ranges, const json& fallback) {
  if (ranges.is_object() && is_number(ranges, "median") && is_number(ranges, "min") &&
      is_number(ranges, "max")) {
    return Range{ranges["median"].get<double>(), ranges["min"].get<double>(),
                 ranges["max"].get<double>()};
  }
  if (fallback.is_number()) {
    double v = fallback.get<double>();
    return Range{v, v, v};
  }
  return std::nullopt;
}

Result<CompareLevel> level_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::invalid_argument(where + " is not an object");
  CompareLevel level;
  const bool open = j.value("mode", "closed") == "open";
  const char* key = open ? "target_rate_rps" : "concurrency";
  if (!is_number(j, key)) {
    return Status::invalid_argument(fmt::format("{} has no number '{}'", where, key));
  }
  level.key = j[key].get<double>();
  const double repeats = is_number(j, "repeats") ? j["repeats"].get<double>() : 1;
  level.repeats = repeats >= 1 && repeats <= 1e6 ? static_cast<int>(repeats) : 1;
  const json none;
  const json& ranges = j.contains("ranges") ? j["ranges"] : none;
  const json& ranges_latency =
      ranges.is_object() && ranges.contains("latency_ns") ? ranges["latency_ns"] : none;
  const json& latency = j.contains("latency_ns") ? j["latency_ns"] : none;
  auto throughput = range_at(
      ranges.is_object() && ranges.contains("throughput_rps") ? ranges["throughput_rps"] : none,
      j.contains("throughput_rps") ? j["throughput_rps"] : none);
  if (!throughput) {
    return Status::invalid_argument(where + " has no throughput_rps");
  }
  level.throughput_rps = *throughput;
  std::pair<const char*, Range*> percentiles[] = {{"p50", &level.p50_ns},
                                                  {"p90", &level.p90_ns},
                                                  {"p99", &level.p99_ns},
                                                  {"p999", &level.p999_ns}};
  for (auto [name, out] : percentiles) {
    auto r = range_at(
        ranges_latency.is_object() && ranges_latency.contains(name) ? ranges_latency[name] : none,
        latency.is_object() && latency.contains(name) ? latency[name] : none);
    if (!r) return Status::invalid_argument(fmt::format("{} has no latency_ns.{}", where, name));
    *out = *r;
  }
  return level;
}

std::string key_text(double key, bool open) {
  if (!open || key == std::round(key)) return fmt::format("{:.0f}", key);
  return fmt::format("{:.1f}", key);
}

std::string keys_text(const std::vector<double>& keys, bool open) {
  std::string out;
  for (double k : keys) out += (out.empty() ? "" : ", ") + key_text(k, open);
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

std::string figure_label(const std::string& name) {
  if (name == "throughput_rps") return "throughput(req/s)";
  if (name == "p50_ns") return "p50(ms)";
  if (name == "p90_ns") return "p90(ms)";
  if (name == "p99_ns") return "p99(ms)";
  return "p99.9(ms)";
}

std::string side_text(const char* letter, const CompareSide& s) {
  return fmt::format(
      "  {} = {}: {}, {} client thread{}, {:.2f} s measured per {}, {} repeat{}, started {}\n"
      "      target: {}\n",
      letter, s.label, s.kind, s.threads, s.threads == 1 ? "" : "s", s.duration_s,
      s.kind == "sweep" ? "level" : "run", s.repeats, s.repeats == 1 ? "" : "s", s.started_at,
      s.target);
}

// A level's key in JSON: a whole number as an integer (concurrency, whole rates).
json key_json(double key) {
  if (key == std::round(key) && std::abs(key) < 9e15) return json(static_cast<int64_t>(key));
  return json(key);
}

json keys_json(const std::vector<double>& keys) {
  json out = json::array();
  for (double k : keys) out.push_back(key_json(k));
  return out;
}

json side_json(const CompareSide& s) {
  return json{{"file", s.label},
              {"kind", s.kind},
              {"mode", s.open ? "open" : "closed"},
              {"target", s.target},
              {"started_at", s.started_at},
              {"threads", s.threads},
              {"duration_s", s.duration_s},
              {"repeats", s.repeats}};
}

json range_json(const Range& r) {
  return json{{"median", r.median}, {"min", r.min}, {"max", r.max}};
}

Result<CompareSide> side_from_json_unchecked(const json& doc, const std::string& label) {
  if (!doc.is_object()) {
    return Status::invalid_argument(fmt::format("{}: not a knee JSON result (an object)", label));
  }
  if (!is_number(doc, "schema_version")) {
    return Status::invalid_argument(fmt::format(
        "{}: no schema_version; give a file written by knee run --json or knee sweep --json",
        label));
  }
  const double version = doc["schema_version"].get<double>();
  if (!(version >= 1 && version <= kReadableSchemaVersion)) {
    return Status::invalid_argument(
        fmt::format("{}: schema_version {} is not one this knee reads (1 to {})", label, version,
                    kReadableSchemaVersion));
  }
  CompareSide side;
  side.label = label;
  side.kind = doc.value("kind", "");
  if (side.kind != "run" && side.kind != "sweep") {
    return Status::invalid_argument(fmt::format(
        "{}: kind '{}' cannot be compared; give knee run or knee sweep results", label, side.kind));
  }
  side.target = doc.value("target", "");
  side.started_at = doc.value("started_at", "");
  const json params = doc.value("params", json::object());
  side.threads = params.value("threads", 0);
  side.duration_s = params.value("duration_s", 0.0);
  side.repeats = params.value("repeats", 1);
  if (side.kind == "run") {
    auto level = level_from_json(doc, label);
    if (!level) return level.status();
    side.open = doc.value("mode", "closed") == "open";
    side.levels.push_back(*level);
    return side;
  }
  if (!doc.contains("levels") || !doc["levels"].is_array()) {
    return Status::invalid_argument(fmt::format("{}: a sweep without 'levels'", label));
  }
  const json& levels = doc["levels"];
  for (size_t i = 0; i < levels.size(); ++i) {
    auto level = level_from_json(levels[i], fmt::format("{}: levels[{}]", label, i));
    if (!level) return level.status();
    if (i == 0) side.open = levels[i].value("mode", "closed") == "open";
    side.levels.push_back(*level);
  }
  return side;
}

}  // namespace

Result<CompareSide> compare_side_from_json(const json& doc, const std::string& label) {
  // A field of the wrong type in a hand-edited or foreign file makes nlohmann::json throw; it is
  // bad input, not a crash.
  try {
    return side_from_json_unchecked(doc, label);
  } catch (const json::exception& e) {
    return Status::invalid_argument(
        fmt::format("{}: a field of the wrong type ({})", label, e.what()));
  }
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

Difference classify(const Range& a, int a_repeats, const Range& b, int b_repeats) {
  if (a_repeats < 2 || b_repeats < 2) return Difference::kCannotTell;
  if (b.min > a.max) return Difference::kHigher;
  if (b.max < a.min) return Difference::kLower;
  return Difference::kWithin;
}

Result<Comparison> compare(CompareSide a, CompareSide b) {
  if (a.open != b.open) {
    return Status::invalid_argument(fmt::format(
        "{} is {} loop and {} is {} loop: their levels (connections against arrival rates) "
        "cannot be matched; compare two closed-loop or two open-loop results",
        a.label, a.open ? "an open" : "a closed", b.label, b.open ? "an open" : "a closed"));
  }
  Comparison c;
  c.key_name = a.open ? "rate_rps" : "concurrency";
  std::map<double, const CompareLevel*> in_a;
  std::map<double, const CompareLevel*> in_b;
  for (const CompareLevel& l : a.levels) in_a.emplace(l.key, &l);
  for (const CompareLevel& l : b.levels) in_b.emplace(l.key, &l);
  for (const auto& [key, la] : in_a) {
    auto it = in_b.find(key);
    if (it == in_b.end()) {
      c.only_in_a.push_back(key);
      continue;
    }
    const CompareLevel& lb = *it->second;
    LevelComparison level;
    level.key = key;
    level.a_repeats = la->repeats;
    level.b_repeats = lb.repeats;
    const Range CompareLevel::*members[] = {&CompareLevel::throughput_rps, &CompareLevel::p50_ns,
                                            &CompareLevel::p90_ns, &CompareLevel::p99_ns,
                                            &CompareLevel::p999_ns};
    for (size_t f = 0; f < std::size(members); ++f) {
      FigureComparison fc;
      fc.name = kFigureNames[f];
      fc.a = la->*members[f];
      fc.b = lb.*members[f];
      if (fc.a.median != 0) fc.ratio = fc.b.median / fc.a.median;
      fc.difference = classify(fc.a, la->repeats, fc.b, lb.repeats);
      level.figures.push_back(std::move(fc));
    }
    c.levels.push_back(std::move(level));
  }
  for (const auto& [key, lb] : in_b) {
    if (!in_a.contains(key)) c.only_in_b.push_back(key);
  }
  a.levels.clear();
  b.levels.clear();
  c.a = std::move(a);
  c.b = std::move(b);
  return c;
}

std::string render_compare_text(const Comparison& c) {
  const bool open = c.a.open;
  std::string out = "knee report: a against b, level by level\n";
  out += side_text("a", c.a);
  out += side_text("b", c.b);
  out += fmt::format(
      "  levels matched by {}; figures are the median (min-max) over the repeats; a difference "
      "counts when both files have repeats and the two min-max ranges do not overlap\n\n",
      open ? "arrival rate" : "concurrency");
  if (c.levels.empty()) {
    out += "no level is in both files\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({open ? "rate(req/s)" : "concurrency", "figure", "a", "b", "b/a", "verdict"});
    for (const LevelComparison& level : c.levels) {
      bool first = true;
      for (const FigureComparison& f : level.figures) {
        rows.push_back({first ? key_text(level.key, open) : "", figure_label(f.name),
                        figure_text(f.name, f.a, level.a_repeats),
                        figure_text(f.name, f.b, level.b_repeats),
                        f.ratio ? fmt::format("{:.2f}x", *f.ratio) : "-",
                        std::string(difference_text(f.difference))});
        first = false;
      }
    }
    out += render_table(rows, {false, true, false, false, false, true});
  }
  const char* what = open ? "rate" : "concurrency";
  if (!c.only_in_a.empty()) {
    out += fmt::format("only in a ({}): {} {}\n", c.a.label, what, keys_text(c.only_in_a, open));
  }
  if (!c.only_in_b.empty()) {
    out += fmt::format("only in b ({}): {} {}\n", c.b.label, what, keys_text(c.only_in_b, open));
  }
  return out;
}

json compare_to_json(const Comparison& c) {
  json levels = json::array();
  for (const LevelComparison& level : c.levels) {
    json figures = json::object();
    for (const FigureComparison& f : level.figures) {
      figures[f.name] = json{{"a", range_json(f.a)},
                             {"b", range_json(f.b)},
                             {"ratio", f.ratio ? json(*f.ratio) : json()},
                             {"difference", difference_name(f.difference)}};
    }
    levels.push_back(json{{c.key_name, key_json(level.key)},
                          {"a_repeats", level.a_repeats},
                          {"b_repeats", level.b_repeats},
                          {"figures", figures}});
  }
  return json{{"schema_version", kComparisonSchemaVersion},
              {"kind", "comparison"},
              {"key", c.key_name},
              {"a", side_json(c.a)},
              {"b", side_json(c.b)},
              {"levels", levels},
              {"only_in_a", keys_json(c.only_in_a)},
              {"only_in_b", keys_json(c.only_in_b)}};
}

}  // namespace knee::report
