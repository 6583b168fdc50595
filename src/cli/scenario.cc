#include "cli/scenario.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "http/request.h"
#include "http/url.h"

namespace knee::cli {

using core::Result;
using core::Status;

namespace {

constexpr std::string_view kKeys[] = {"name", "url", "c", "r", "t", "m", "arrival"};

Status bad_scenario(std::string_view text, std::string_view why) {
  return Status::invalid_argument(
      fmt::format("--scenario '{}': {}; use {}", text, why, kScenarioForm));
}

std::vector<std::string_view> split_on_blanks(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// A whole number >= 1, all of `v`.
std::optional<int> positive_int(std::string_view v) {
  int n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < 1) return std::nullopt;
  return n;
}

// A finite number > 0, all of `v`.
std::optional<double> positive_double(std::string_view v) {
  double x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || !(x > 0) || !std::isfinite(x)) {
    return std::nullopt;
  }
  return x;
}

// The flags a scenario sets for itself may not also be given outside the scenarios. Values equal
// to the defaults cannot be told from absence and are harmless.
Status check_no_per_scenario_flags(const LoadFlags& shared) {
  const LoadFlags defaults;
  auto inside = [](std::string_view flag, std::string_view key) {
    return Status::invalid_argument(
        fmt::format("{} with --scenario: set {}= inside each scenario instead; use --scenario {}",
                    flag, key, kScenarioForm));
  };
  if (!shared.url.empty()) {
    return Status::invalid_argument(
        fmt::format("URL '{}' with --scenario: give each target as url= inside its scenario, not "
                    "as the positional URL; use --scenario {}",
                    shared.url, kScenarioForm));
  }
  if (shared.connections_given) return inside("-c/--connections", "c");
  if (shared.threads != defaults.threads) return inside("-t/--threads", "t");
  if (shared.method != defaults.method) return inside("-m/--method", "m");
  if (shared.rate_given) return inside("-r/--rate", "r");
  if (shared.arrival != defaults.arrival) return inside("--arrival", "arrival");
  return Status::ok();
}

Result<Scenario> parse_scenario(std::string_view text, const LoadFlags& shared, size_t index) {
  std::optional<std::string_view> values[std::size(kKeys)];
  for (std::string_view pair : split_on_blanks(text)) {
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      return bad_scenario(text, fmt::format("'{}' is not key=value", pair));
    }
    std::string_view key = pair.substr(0, eq);
    std::string_view value = pair.substr(eq + 1);
    size_t k = 0;
    while (k < std::size(kKeys) && kKeys[k] != key) ++k;
    if (k == std::size(kKeys)) {
      return bad_scenario(
          text, fmt::format("unknown key '{}' (keys: name, url, c, r, t, m, arrival)", key));
    }
    if (values[k]) return bad_scenario(text, fmt::format("key '{}' is given twice", key));
    if (value.empty()) return bad_scenario(text, fmt::format("{}= has no value", key));
    values[k] = value;
  }
  const auto& [name, url, c, r, t, m, arrival] = values;

  if (!name) return bad_scenario(text, "name= is missing");
  if (!url) return bad_scenario(text, "url= is missing");
  if (auto parsed = http::parse_url(*url); !parsed) {
    return bad_scenario(text, fmt::format("url={}: {}", *url, parsed.status().message()));
  }

  LoadFlags f = shared;  // -d, -w, --timeout, --grace, -H, --body, --body-file, --seed
  f.url = std::string(*url);
  f.seed = shared.seed + index;
  if (c) {
    auto n = positive_int(*c);
    if (!n) return bad_scenario(text, fmt::format("c={} is not a whole number above 0", *c));
    f.connections = *n;
    f.connections_given = true;
  }
  if (r) {
    auto rate = positive_double(*r);
    if (!rate) {
      return bad_scenario(text,
                          fmt::format("r={} is not a number of requests per second above 0", *r));
    }
    f.rate = *rate;
    f.rate_given = true;
  }
  if (t) {
    auto n = positive_int(*t);
    if (!n) return bad_scenario(text, fmt::format("t={} is not a whole number above 0", *t));
    f.threads = *n;
  }
  if (m) f.method = std::string(*m);
  if (arrival) {
    if (*arrival != "uniform" && *arrival != "poisson") {
      return bad_scenario(text, fmt::format("arrival={} is not uniform or poisson", *arrival));
    }
    if (!r) return bad_scenario(text, "arrival= needs r= (it spaces open-loop arrivals)");
    f.arrival = std::string(*arrival);
  }

  // An error here names its option field. When the field is one of the scenario's own keys
  // (e.g. c= above the file-descriptor limit), it is named as the key and the scenario text is
  // quoted; a shared flag's error stands alone.
  auto options = f.to_options();
  if (!options) {
    const Status failed = options.status();
    static const std::pair<const char*, const char*> kOwn[] = {
        {"connections", "c"}, {"max_connections", "c"}, {"threads", "t"},
        {"rate_rps", "r"},    {"arrival", "arrival"},   {"url", "url"}};
    for (const auto& [field, key] : kOwn) {
      if (failed.field() == field) {
        return bad_scenario(text, fmt::format("{}=: {}", key, failed.message()));
      }
    }
    return failed;
  }
  if (auto compiled = http::RequestTemplate::compile(options->request); !compiled) {
    return bad_scenario(text, compiled.status().message());
  }
  return Scenario{std::string(*name), std::string(*url), std::move(options).value()};
}

}  // namespace

Result<std::vector<Scenario>> parse_scenarios(const std::vector<std::string>& texts,
                                              const LoadFlags& shared) {
  if (Status s = check_no_per_scenario_flags(shared); !s) return s;
  std::vector<Scenario> out;
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto sc = parse_scenario(texts[i], shared, i);
    if (!sc) return sc.status();
    if (!names.insert(sc->name).second) {
      return bad_scenario(texts[i], fmt::format("name={} is used by an earlier scenario; names "
                                                "must be unique",
                                                sc->name));
    }
    out.push_back(std::move(sc).value());
  }
  return out;
}

}  // namespace knee::cli
