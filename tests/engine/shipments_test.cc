// {shipment}'s ids (engine/shipments.h): always in 1..count, repeatable from the seed, uniform
// when asked, and Zipf-distributed with the law's frequencies when asked.
#include "engine/shipments.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace knee::engine {
namespace {

std::vector<uint64_t> draws(const ShipmentDraw& d, uint64_t seed, int n) {
  ShipmentPicker p(d, seed);
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(p.next());
  return out;
}

// Counts of ids 1..count over n draws.
std::vector<double> histogram(const ShipmentDraw& d, int n) {
  std::vector<double> h(static_cast<size_t>(d.count) + 1, 0);
  for (uint64_t id : draws(d, 11, n)) {
    EXPECT_GE(id, 1u);
    EXPECT_LE(id, static_cast<uint64_t>(d.count));
    if (id >= 1 && id <= static_cast<uint64_t>(d.count)) ++h[id];
  }
  return h;
}

TEST(ShipmentPicker, IsRepeatableFromItsSeed) {
  for (std::optional<double> zipf : {std::optional<double>(), std::optional<double>(0.9)}) {
    const ShipmentDraw d{1000, zipf};
    EXPECT_EQ(draws(d, 5, 1000), draws(d, 5, 1000));
    EXPECT_NE(draws(d, 5, 1000), draws(d, 6, 1000));
  }
}

TEST(ShipmentPicker, UniformCoversEveryIdEvenly) {
  const ShipmentDraw d{50, std::nullopt};
  const std::vector<double> h = histogram(d, 200'000);
  for (size_t id = 1; id <= 50; ++id) EXPECT_NEAR(h[id], 4000, 4000 * 0.08) << id;  // sd 1.6 %
}

// P(k) = k^-s / H(N, s): the observed share of the first ids, and of the whole tail, within a
// few standard errors of the law's, for exponents below, at and above 1.
TEST(ShipmentPicker, ZipfMatchesTheLawsFrequencies) {
  const int n = 400'000;
  for (double s : {0.5, 0.99, 1.0, 1.5}) {
    const ShipmentDraw d{1000, s};
    const std::vector<double> h = histogram(d, n);
    double harmonic = 0;
    for (int k = 1; k <= 1000; ++k) harmonic += std::pow(k, -s);
    for (int k : {1, 2, 3, 10, 100}) {
      const double p = std::pow(k, -s) / harmonic;
      const double expected = p * n;
      const double sd = std::sqrt(n * p * (1 - p));
      EXPECT_NEAR(h[static_cast<size_t>(k)], expected, 5 * sd + 2) << "s " << s << " id " << k;
    }
    double tail = 0, tail_p = 0;
    for (int k = 501; k <= 1000; ++k) {
      tail += h[static_cast<size_t>(k)];
      tail_p += std::pow(k, -s) / harmonic;
    }
    EXPECT_NEAR(tail, tail_p * n, 5 * std::sqrt(n * tail_p) + 2) << "s " << s;
  }
}

TEST(ShipmentPicker, OneIdIsAlwaysThatId) {
  for (std::optional<double> zipf : {std::optional<double>(), std::optional<double>(1.2)}) {
    for (uint64_t id : draws({1, zipf}, 3, 100)) EXPECT_EQ(id, 1u);
  }
}

TEST(ShipmentDraw, RefusesCountsAndExponentsOutOfRange) {
  EXPECT_EQ(ShipmentDraw({0, std::nullopt}).validate().field(), "shipments");
  EXPECT_EQ(ShipmentDraw({10'000'000'000, std::nullopt}).validate().field(), "shipments");
  EXPECT_EQ(ShipmentDraw({10, 0.0}).validate().field(), "zipf");
  EXPECT_EQ(ShipmentDraw({10, -1.0}).validate().field(), "zipf");
  EXPECT_EQ(ShipmentDraw({10, 11.0}).validate().field(), "zipf");
  EXPECT_TRUE(ShipmentDraw({12'000'000, 1.0}).validate());
}

}  // namespace
}  // namespace knee::engine
