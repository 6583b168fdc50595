#include "analysis/network_floor.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <charconv>
#include <cmath>
#include <numbers>

namespace knee::analysis {
namespace {

using core::Status;

// GeoNames (geonames.org) coordinates of each city's populated-place point, as seed 001 lists
// them (latitude, longitude in decimal degrees, 4 decimals).
constexpr std::array<City, 8> kCities = {{
    {"Mumbai", {19.0728, 72.8826}},
    {"Delhi", {28.6519, 77.2315}},
    {"Singapore", {1.2897, 103.8501}},
    {"Frankfurt", {50.1155, 8.6842}},
    {"London", {51.5085, -0.1257}},
    {"New York", {40.7143, -74.0060}},
    {"San Francisco", {37.7749, -122.4194}},
    {"Sydney", {-33.8678, 151.2073}},
}};

// The seed's pairs, by city name, in its order.
constexpr std::array<std::array<std::string_view, 2>, 7> kPairs = {{
    {"Mumbai", "Delhi"},
    {"Mumbai", "Singapore"},
    {"Mumbai", "Frankfurt"},
    {"Mumbai", "London"},
    {"Mumbai", "New York"},
    {"London", "New York"},
    {"San Francisco", "Sydney"},
}};

constexpr const char* kRouteForm =
    "give 'LAT,LON:LAT,LON' in decimal degrees, latitude in [-90, 90] (north positive), "
    "longitude in [-180, 180] (east positive), e.g. '51.5085,-0.1257:40.7143,-74.0060' "
    "(London - New York)";

GeoPoint city(std::string_view name) {
  for (const City& c : kCities) {
    if (c.name == name) return c.where;
  }
  assert(false && "network_floor: a seed pair names an unknown city");
  return {};
}

double radians(double degrees) { return degrees * std::numbers::pi / 180.0; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Status bad_route(std::string_view text, std::string_view what) {
  return Status::invalid_argument(fmt::format("--route '{}': {}; {}", text, what, kRouteForm));
}

// One decimal number, nothing else (spaces around it trimmed). from_chars takes no '+'.
bool parse_degrees(std::string_view s, double& out) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(out);
}

// One end of a route, "LAT,LON"; `which` is "start" or "end" for messages.
core::Result<GeoPoint> parse_end(std::string_view text, std::string_view part,
                                 std::string_view which) {
  const size_t comma = part.find(',');
  if (comma == std::string_view::npos || part.find(',', comma + 1) != std::string_view::npos) {
    return bad_route(text, fmt::format("the {} '{}' needs exactly one ',' between latitude and "
                                       "longitude",
                                       which, trim(part)));
  }
  GeoPoint p;
  const std::string_view lat = part.substr(0, comma);
  const std::string_view lon = part.substr(comma + 1);
  if (!parse_degrees(lat, p.lat_deg)) {
    return bad_route(
        text, fmt::format("the {}'s latitude '{}' is not a decimal number", which, trim(lat)));
  }
  if (!parse_degrees(lon, p.lon_deg)) {
    return bad_route(
        text, fmt::format("the {}'s longitude '{}' is not a decimal number", which, trim(lon)));
  }
  if (p.lat_deg < -90 || p.lat_deg > 90) {
    return bad_route(text,
                     fmt::format("the {}'s latitude {} is outside [-90, 90]", which, trim(lat)));
  }
  if (p.lon_deg < -180 || p.lon_deg > 180) {
    return bad_route(text,
                     fmt::format("the {}'s longitude {} is outside [-180, 180]", which, trim(lon)));
  }
  return p;
}

}  // namespace

std::span<const City> seed_cities() { return kCities; }

std::vector<Route> seed_routes() {
  std::vector<Route> routes;
  routes.reserve(kPairs.size());
  for (const auto& [a, b] : kPairs) {
    routes.push_back(Route{fmt::format("{} - {}", a, b), city(a), city(b)});
  }
  return routes;
}

double great_circle_km(GeoPoint a, GeoPoint b, double radius_km) {
  const double lat1 = radians(a.lat_deg);
  const double lat2 = radians(b.lat_deg);
  const double dlat = lat2 - lat1;
  const double dlon = radians(b.lon_deg - a.lon_deg);
  const double s_lat = std::sin(dlat / 2);
  const double s_lon = std::sin(dlon / 2);
  const double h = s_lat * s_lat + std::cos(lat1) * std::cos(lat2) * s_lon * s_lon;
  // Rounding can push h a hair above 1 for antipodes; asin needs [-1, 1].
  return 2 * radius_km * std::asin(std::sqrt(std::clamp(h, 0.0, 1.0)));
}

double round_trip_ms(double distance_km, double speed_fraction) {
  assert(speed_fraction > 0 && "round_trip_ms: speed_fraction must be > 0");
  return 2 * distance_km / (kSpeedOfLightKmPerS * speed_fraction) * 1000.0;
}

NetworkFloor network_floor(GeoPoint a, GeoPoint b, double fibre_factor) {
  assert(check_fibre_factor(fibre_factor).is_ok());
  NetworkFloor f;
  f.distance_km = great_circle_km(a, b);
  f.vacuum_rtt_ms = round_trip_ms(f.distance_km, 1.0);
  f.fibre_rtt_ms = round_trip_ms(f.distance_km, fibre_factor);
  f.fibre_factor = fibre_factor;
  return f;
}

Status check_fibre_factor(double fibre_factor) {
  if (std::isfinite(fibre_factor) && fibre_factor > 0 && fibre_factor <= 1)
    return Status::success();
  return Status::invalid_argument(
      fmt::format("--fibre-factor {}: must be in (0, 1], the speed of light in fibre as a "
                  "fraction of c; default {:.4f} (2/3)",
                  fibre_factor, kDefaultFibreFactor));
}

core::Result<Route> parse_route(std::string_view text) {
  const std::string_view t = trim(text);
  if (t.empty()) return bad_route(text, "empty");
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos) {
    return bad_route(text, "no ':' between the two ends");
  }
  if (t.find(':', colon + 1) != std::string_view::npos) {
    return bad_route(text, "more than one ':'; a route has exactly two ends");
  }
  auto from = parse_end(text, t.substr(0, colon), "start");
  if (!from) return from.status();
  auto to = parse_end(text, t.substr(colon + 1), "end");
  if (!to) return to.status();
  return Route{std::string(t), *from, *to};
}

}  // namespace knee::analysis
