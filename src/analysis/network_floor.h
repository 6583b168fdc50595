// Network floor: the shortest round trip physics allows between two places on Earth, the last
// rung of `knee ladder` (seed 001, "The network: distance sets the floor").
//
// No route can beat light: a round trip covers the distance twice, at c in a vacuum and at a
// fraction of c in optical fibre. The floor here uses the great-circle distance, which real
// cables never follow, and adds no routers, queues or handshakes, so every measured round trip
// is above it (Singla et al., "The Internet at the Speed of Light", HotNets 2014: median ping
// about 3.2x the vacuum floor).
//
// Formulas and constants:
//   distance     haversine on a sphere of radius R (spherical Earth; within ~0.5 % of the
//                ellipsoidal geodesic):
//                  h = sin^2((lat2 - lat1) / 2) + cos(lat1) cos(lat2) sin^2((lon2 - lon1) / 2)
//                  d = 2 R asin(sqrt(min(1, h)))
//                R = 6,371.0087714 km, the WGS 84 mean radius R1 = (2a + b) / 3 (NGA,
//                TR8350.2 "Department of Defense World Geodetic System 1984", table 3.5),
//                6,371.0088 km rounded.
//   round trip   vacuum: 2 d / c, c = 299,792.458 km/s (exact, SI definition of the metre; NIST)
//                fibre:  2 d / (c * fibre_factor); fibre_factor defaults to 2/3 (light in
//                silica fibre of refractive index ~1.47-1.5, about 200 km per ms, as the seed).
//
// Command-line semantics (implemented by the caller, `knee ladder`; parse_route() and
// check_fibre_factor() below do the validation so messages are the same everywhere):
//   --fibre-factor F   F in (0, 1]: the speed of light in fibre as a fraction of c; default
//                      2/3 (0.6667). 1 makes the fibre column equal the vacuum one.
//   --route 'LAT,LON:LAT,LON'
//                      a route of your own, in decimal degrees (north and east positive, WGS 84
//                      as GPS and GeoNames give them); "51.5085,-0.1257:40.7143,-74.0060" is
//                      London - New York. Spaces around the numbers are allowed. Repeatable;
//                      each route is computed beside the seed's pairs.
//
// Units: degrees for coordinates, km for distance, ms for round-trip times (double; x 1e6 for
// ns). Pure functions and constant data: no I/O, no clock, no shared mutable state; safe from any
// thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace knee::analysis {

inline constexpr double kEarthMeanRadiusKm = 6371.0087714;  // WGS 84 R1 (see above)
inline constexpr double kSpeedOfLightKmPerS = 299792.458;   // c in a vacuum, exact
inline constexpr double kDefaultFibreFactor = 2.0 / 3.0;    // light in fibre, fraction of c

// A point on the Earth in decimal degrees: lat in [-90, 90] (north positive), lon in
// [-180, 180] (east positive).
struct GeoPoint {
  double lat_deg = 0;
  double lon_deg = 0;
};

// A named place. The seed's cities carry GeoNames coordinates (geonames.org, the populated
// place's point, 4 decimals as the seed prints them).
struct City {
  std::string_view name;  // "London"
  GeoPoint where;
};

// Two places whose floor is computed. `name` is "Mumbai - Delhi" for the seed's pairs and the
// route text as given (trimmed) for --route.
struct Route {
  std::string name;
  GeoPoint from;
  GeoPoint to;
};

// The floor of one route.
struct NetworkFloor {
  double distance_km = 0;    // great-circle distance, km
  double vacuum_rtt_ms = 0;  // 2 d / c, ms
  double fibre_rtt_ms = 0;   // 2 d / (c * fibre_factor), ms
  double fibre_factor = 0;   // the fraction of c used for fibre
};

// The seed's eight cities (Mumbai, Delhi, Singapore, Frankfurt, London, New York, San Francisco,
// Sydney) with GeoNames coordinates. Static data; the span lives for the program.
std::span<const City> seed_cities();

// The seed's seven pairs, in its order: Mumbai - Delhi, Mumbai - Singapore, Mumbai - Frankfurt,
// Mumbai - London, Mumbai - New York, London - New York, San Francisco - Sydney.
std::vector<Route> seed_routes();

// Great-circle distance between a and b in km, by the haversine formula above on radius
// radius_km. Inputs outside the ranges of GeoPoint are still computed (angles wrap); validate
// with parse_route(). 0 for equal points; pi * radius_km for antipodes.
double great_circle_km(GeoPoint a, GeoPoint b, double radius_km = kEarthMeanRadiusKm);

// Round-trip time in ms over distance_km one way, at speed_fraction of c (1 = vacuum):
// 2 * distance_km / (c * speed_fraction) * 1000. speed_fraction must be > 0 (asserts).
double round_trip_ms(double distance_km, double speed_fraction);

// Distance and both floors for one route. fibre_factor must pass check_fibre_factor() (asserts).
NetworkFloor network_floor(GeoPoint a, GeoPoint b, double fibre_factor = kDefaultFibreFactor);

// Ok when fibre_factor is finite and in (0, 1]; else kInvalidArgument naming --fibre-factor,
// the value and the accepted range ("--fibre-factor 1.5: must be in (0, 1], the speed of light
// in fibre as a fraction of c; default 0.6667 (2/3)").
core::Status check_fibre_factor(double fibre_factor);

// Parses 'LAT,LON:LAT,LON' (decimal degrees; optional spaces around each number; a leading '+'
// or '-' allowed) into a Route named by the trimmed text.
// Errors (kInvalidArgument, the message starts "--route '<text>': ", says what is wrong and ends
// with the accepted form and an example): empty text; no ':' or more than one; an end without
// exactly one ','; an empty, non-numeric, NaN or infinite number or trailing characters after
// it; a latitude outside [-90, 90] or a longitude outside [-180, 180] (naming which end and
// which number).
core::Result<Route> parse_route(std::string_view text);

}  // namespace knee::analysis
