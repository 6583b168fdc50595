#include "engine/mix.h"

#include <fmt/core.h>

#include <cassert>
#include <charconv>
#include <cmath>
#include <set>

namespace knee::engine {

using core::Result;
using core::Status;

namespace {

Status bad_mix(std::string_view entry, std::string_view why) {
  return Status::invalid_argument(
      fmt::format("--mix entry '{}': {}; use {}", entry, why, kMixForm));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

double ParsedMix::total_weight() const {
  double sum = 0;
  for (const MixText& e : entries) sum += e.weight;
  return sum;
}

Result<ParsedMix> parse_mix(std::string_view text) {
  ParsedMix mix;
  std::set<std::string> names;
  bool some_rates = false;
  bool some_ratios = false;
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view entry = trim(text.substr(from, comma - from));
    from = comma + 1;
    if (entry.empty()) return bad_mix(entry, "empty entry (two commas, or a comma at an end)");
    const size_t eq = entry.rfind('=');
    if (eq == std::string_view::npos) return bad_mix(entry, "no =WEIGHT");
    std::string_view weight = trim(entry.substr(eq + 1));
    const std::string_view request = trim(entry.substr(0, eq));
    MixText e;
    if (weight.size() > 2 && weight.substr(weight.size() - 2) == "/s") {
      weight.remove_suffix(2);
      some_rates = true;
    } else {
      some_ratios = true;
    }
    auto [end, ec] = std::from_chars(weight.data(), weight.data() + weight.size(), e.weight);
    if (ec != std::errc() || end != weight.data() + weight.size() || !(e.weight > 0) ||
        !std::isfinite(e.weight)) {
      return bad_mix(entry, fmt::format("weight '{}' is not a number > 0", weight));
    }
    const size_t space = request.find_first_of(" \t");
    if (space == std::string_view::npos) return bad_mix(entry, "expected METHOD and a /target");
    e.method = std::string(request.substr(0, space));
    std::string_view rest = trim(request.substr(space));
    const size_t body_at = rest.find_first_of(" \t");
    if (body_at != std::string_view::npos) {
      const std::string_view body = trim(rest.substr(body_at));
      rest = rest.substr(0, body_at);
      if (body.size() < 2 || body.front() != '@') {
        return bad_mix(entry, fmt::format("'{}' after the target: a body is @FILE", body));
      }
      e.body_file = std::string(body.substr(1));
    }
    if (rest.empty() || rest.front() != '/') {
      return bad_mix(entry, fmt::format("target '{}' does not start with '/'", rest));
    }
    e.target = std::string(rest);
    e.name = e.method + " " + e.target;
    if (!names.insert(e.name).second) return bad_mix(entry, "this endpoint is listed twice");
    mix.entries.push_back(std::move(e));
    if (mix.entries.size() > kMaxMixEntries) {
      return bad_mix(entry, fmt::format("more than {} entries", kMaxMixEntries));
    }
  }
  if (some_rates && some_ratios) {
    return Status::invalid_argument(fmt::format(
        "--mix '{}': give every weight as a rate (=97.22/s) or every one as a ratio (=1); use {}",
        text, kMixForm));
  }
  mix.rates = some_rates;
  return mix;
}

WeightedRoundRobin::WeightedRoundRobin(std::vector<double> weights)
    : weights_(std::move(weights)), current_(weights_.size(), 0.0) {
  assert(!weights_.empty() && "a round robin needs an endpoint");
  for (double w : weights_) {
    assert(w > 0 && "weights are above 0 (LoadOptions::validate)");
    total_ += w;
  }
}

size_t WeightedRoundRobin::next() {
  size_t best = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    current_[i] += weights_[i];
    if (current_[i] > current_[best]) best = i;
  }
  current_[best] -= total_;
  return best;
}

}  // namespace knee::engine
