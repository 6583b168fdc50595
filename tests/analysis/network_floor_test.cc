#include "analysis/network_floor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

namespace knee::analysis {
namespace {

// Expected values computed independently once with Python 3.11 (math module), the seed's
// formula: h = sin((lat2-lat1)/2)**2 + cos(lat1)*cos(lat2)*sin((lon2-lon1)/2)**2,
// d = 2 * 6371.0087714 * asin(sqrt(h)); vacuum = 2*d/299792.458*1000 ms; fibre = vacuum * 3/2.
// London - New York cross-checked with the Vincenty formula on the same sphere (5570.2249 km).
struct Expected {
  const char* name;
  double km;
  double vacuum_ms;
  double fibre_ms;
};
constexpr Expected kExpected[] = {
    {"Mumbai - Delhi", 1152.987, 7.6919, 11.5379},
    {"Mumbai - Singapore", 3909.722, 26.0829, 39.1243},
    {"Mumbai - Frankfurt", 6564.318, 43.7924, 65.6886},
    {"Mumbai - London", 7192.170, 47.9810, 71.9715},
    {"Mumbai - New York", 12538.444, 83.6475, 125.4712},
    {"London - New York", 5570.225, 37.1605, 55.7408},
    {"San Francisco - Sydney", 11947.767, 79.7069, 119.5604},
};

void expect_within(double actual, double expected, double rel, const std::string& what) {
  EXPECT_LE(std::abs(actual - expected), rel * expected)
      << what << ": " << actual << " vs " << expected;
}

TEST(NetworkFloor, LondonNewYorkMatchesTheSeed) {
  const auto routes = seed_routes();
  ASSERT_EQ(routes[5].name, "London - New York");
  const NetworkFloor f = network_floor(routes[5].from, routes[5].to);
  // The seed prints 5,570 km, 37 ms in a vacuum and 56 ms in fibre.
  EXPECT_EQ(std::lround(f.distance_km), 5570);
  EXPECT_EQ(std::lround(f.vacuum_rtt_ms), 37);
  EXPECT_EQ(std::lround(f.fibre_rtt_ms), 56);
  EXPECT_DOUBLE_EQ(f.fibre_factor, 2.0 / 3.0);
}

TEST(NetworkFloor, EverySeedPairMatchesAnIndependentHaversineWithinOnePerMille) {
  const auto routes = seed_routes();
  ASSERT_EQ(routes.size(), std::size(kExpected));
  for (size_t i = 0; i < routes.size(); ++i) {
    const Expected& e = kExpected[i];
    EXPECT_EQ(routes[i].name, e.name);
    const NetworkFloor f = network_floor(routes[i].from, routes[i].to);
    expect_within(f.distance_km, e.km, 0.001, std::string(e.name) + " km");
    expect_within(f.vacuum_rtt_ms, e.vacuum_ms, 0.001, std::string(e.name) + " vacuum");
    expect_within(f.fibre_rtt_ms, e.fibre_ms, 0.001, std::string(e.name) + " fibre");
  }
}

TEST(NetworkFloor, SeedCitiesCarryGeoNamesCoordinates) {
  const auto cities = seed_cities();
  ASSERT_EQ(cities.size(), 8u);
  EXPECT_EQ(cities[0].name, "Mumbai");
  EXPECT_DOUBLE_EQ(cities[0].where.lat_deg, 19.0728);
  EXPECT_DOUBLE_EQ(cities[7].where.lon_deg, 151.2073);
}

TEST(NetworkFloor, ZeroDistanceHasZeroFloor) {
  const GeoPoint p{51.5085, -0.1257};
  const NetworkFloor f = network_floor(p, p);
  EXPECT_EQ(f.distance_km, 0.0);
  EXPECT_EQ(f.vacuum_rtt_ms, 0.0);
  EXPECT_EQ(f.fibre_rtt_ms, 0.0);
}

TEST(NetworkFloor, AntipodesAreHalfTheCircumference) {
  const double half = std::numbers::pi * kEarthMeanRadiusKm;  // 20,015.114 km
  EXPECT_NEAR(great_circle_km({0, 0}, {0, 180}), half, 1e-6);
  EXPECT_NEAR(great_circle_km({90, 0}, {-90, 0}), half, 1e-6);
  EXPECT_NEAR(great_circle_km({-33.8678, 151.2073}, {33.8678, -28.7927}), half, 1e-6);
  // 2 * 20,015.114 km / c = 133.5265 ms: the floor for the farthest two places on Earth.
  EXPECT_NEAR(network_floor({0, 0}, {0, 180}).vacuum_rtt_ms, 133.5265, 1e-3);
}

TEST(NetworkFloor, DistanceIsSymmetricAndWrapsTheDateLine) {
  const GeoPoint a{37.7749, -122.4194};
  const GeoPoint b{-33.8678, 151.2073};
  EXPECT_DOUBLE_EQ(great_circle_km(a, b), great_circle_km(b, a));
  // One degree of longitude across the antimeridian is short, not 359 degrees.
  EXPECT_NEAR(great_circle_km({0, 179.5}, {0, -179.5}),
              kEarthMeanRadiusKm * std::numbers::pi / 180.0, 1e-6);
}

TEST(NetworkFloor, FibreFactorScalesTheFibreFloor) {
  const GeoPoint london{51.5085, -0.1257};
  const GeoPoint new_york{40.7143, -74.0060};
  const NetworkFloor same = network_floor(london, new_york, 1.0);
  EXPECT_DOUBLE_EQ(same.fibre_rtt_ms, same.vacuum_rtt_ms);
  const NetworkFloor half = network_floor(london, new_york, 0.5);
  EXPECT_DOUBLE_EQ(half.fibre_rtt_ms, 2 * half.vacuum_rtt_ms);
  // About 10 ms of fibre round trip per 1,000 km, as the seed says.
  EXPECT_NEAR(round_trip_ms(1000, kDefaultFibreFactor), 10.0069, 1e-3);
}

TEST(NetworkFloor, FibreFactorMustBeAFractionOfC) {
  EXPECT_TRUE(check_fibre_factor(2.0 / 3.0).is_ok());
  EXPECT_TRUE(check_fibre_factor(1.0).is_ok());
  for (double bad : {0.0, -0.5, 1.5, std::nan(""), HUGE_VAL}) {
    const core::Status s = check_fibre_factor(bad);
    EXPECT_EQ(s.code(), core::Status::Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("--fibre-factor"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("(0, 1]"), std::string::npos) << s.message();
  }
}

TEST(ParseRoute, ReadsTwoEndsInDecimalDegrees) {
  auto r = parse_route(" 51.5085, -0.1257 : +40.7143,-74.0060 ");
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->name, "51.5085, -0.1257 : +40.7143,-74.0060");
  EXPECT_DOUBLE_EQ(r->from.lat_deg, 51.5085);
  EXPECT_DOUBLE_EQ(r->from.lon_deg, -0.1257);
  EXPECT_DOUBLE_EQ(r->to.lat_deg, 40.7143);
  EXPECT_DOUBLE_EQ(r->to.lon_deg, -74.0060);
  EXPECT_EQ(std::lround(network_floor(r->from, r->to).distance_km), 5570);
}

TEST(ParseRoute, AcceptsTheRangeLimits) {
  auto r = parse_route("-90,-180:90,180");
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_DOUBLE_EQ(r->from.lat_deg, -90);
  EXPECT_DOUBLE_EQ(r->to.lon_deg, 180);
}

TEST(ParseRoute, RejectsBadRoutesNamingTheProblemAndTheForm) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"", "empty"},
      {"   ", "empty"},
      {"51.5,-0.1", "no ':'"},
      {"1,2:3,4:5,6", "more than one ':'"},
      {"51.5:40.7,-74", "exactly one ','"},
      {"51.5,-0.1,3:40.7,-74", "exactly one ','"},
      {"abc,-0.1:40.7,-74", "start's latitude 'abc' is not a decimal number"},
      {"51.5,:40.7,-74", "start's longitude '' is not a decimal number"},
      {"51.5,-0.1:40.7,-74x", "end's longitude '-74x' is not a decimal number"},
      {"51.5,-0.1:nan,-74", "end's latitude 'nan'"},
      {"51.5,-0.1:40.7,inf", "end's longitude 'inf'"},
      {"90.5,0:0,0", "start's latitude 90.5 is outside [-90, 90]"},
      {"0,0:-91,0", "end's latitude -91 is outside [-90, 90]"},
      {"0,180.01:0,0", "start's longitude 180.01 is outside [-180, 180]"},
      {"0,0:0,-200", "end's longitude -200 is outside [-180, 180]"},
  };
  for (const Case& c : cases) {
    auto r = parse_route(c.text);
    ASSERT_FALSE(r) << c.text;
    const core::Status s = r.status();
    EXPECT_EQ(s.code(), core::Status::Code::kInvalidArgument) << c.text;
    EXPECT_EQ(s.message().rfind(std::string("--route '") + c.text + "'", 0), 0u) << s.message();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("LAT,LON:LAT,LON"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace knee::analysis
