#include "engine/scenario.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "http/url.h"

namespace knee::engine {

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

Result<Scenario> parse_scenario(std::string_view text, const LoadOptions& base, size_t index) {
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
  auto parsed = http::parse_url(*url);
  if (!parsed) {
    return bad_scenario(text, fmt::format("url={}: {}", *url, parsed.status().message()));
  }
  LoadOptions o = base;  // phases, timeout, grace, headers, body
  o.request.url = *parsed;
  o.seed = base.seed + index;
  o.rate_rps.reset();
  o.max_connections.reset();
  if (r) {
    auto rate = positive_double(*r);
    if (!rate) {
      return bad_scenario(text,
                          fmt::format("r={} is not a number of requests per second above 0", *r));
    }
    o.rate_rps = *rate;
  }
  if (c) {
    auto n = positive_int(*c);
    if (!n) return bad_scenario(text, fmt::format("c={} is not a whole number above 0", *c));
    if (r) {
      o.max_connections = *n;
    } else {
      o.connections = *n;
    }
  }
  if (t) {
    auto n = positive_int(*t);
    if (!n) return bad_scenario(text, fmt::format("t={} is not a whole number above 0", *t));
    o.threads = *n;
  }
  if (m) o.request.method = std::string(*m);
  if (arrival) {
    if (*arrival != "uniform" && *arrival != "poisson") {
      return bad_scenario(text, fmt::format("arrival={} is not uniform or poisson", *arrival));
    }
    if (!r) return bad_scenario(text, "arrival= needs r= (it spaces open-loop arrivals)");
    o.arrival = *arrival == "poisson" ? Arrival::kPoisson : Arrival::kUniform;
  }
  // An error of one of the scenario's own keys (e.g. c= above the file-descriptor limit) is named
  // as the key with the scenario text quoted; a shared option's error stands alone.
  if (Status s = o.validate(); !s) {
    static const std::pair<const char*, const char*> kOwn[] = {
        {"connections", "c"}, {"max_connections", "c"}, {"threads", "t"},
        {"rate_rps", "r"},    {"url", "url"},           {"method", "m"}};
    for (const auto& [field, key] : kOwn) {
      if (s.field() == field) return bad_scenario(text, fmt::format("{}=: {}", key, s.message()));
    }
    if (s.field().empty()) return bad_scenario(text, s.message());
    return s;
  }
  return Scenario{std::string(*name), std::string(*url), std::move(o)};
}

}  // namespace

Result<std::vector<Scenario>> parse_scenarios(const std::vector<std::string>& texts,
                                              const LoadOptions& base) {
  std::vector<Scenario> out;
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto sc = parse_scenario(texts[i], base, i);
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

}  // namespace knee::engine
