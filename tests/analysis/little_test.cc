#include "analysis/little.h"

#include <gtest/gtest.h>

#include <cmath>

namespace knee::analysis {
namespace {

constexpr double kMs = 1e6;  // ns per ms

TEST(Little, SolversAreConsistent) {
  // 4268 req/s, each 15 ms inside: 64.02 in flight.
  EXPECT_NEAR(little_n(4268, 15 * kMs), 64.02, 1e-9);
  EXPECT_NEAR(little_x(64, 16 * kMs), 4000, 1e-9);
  EXPECT_NEAR(little_r_ns(64, 4000), 16 * kMs, 1e-6);
  EXPECT_NEAR(little_n(1, 1e9), 1.0, 1e-12);  // 1 req/s for 1 s
  EXPECT_NEAR(little_r_ns(little_n(231, 4.33 * kMs), 231), 4.33 * kMs, 1e-6);
}

TEST(Little, SolversGiveNaNForNonPositiveDivisor) {
  EXPECT_TRUE(std::isnan(little_x(8, 0)));
  EXPECT_TRUE(std::isnan(little_x(8, -1)));
  EXPECT_TRUE(std::isnan(little_r_ns(8, 0)));
}

TEST(Little, SeedRowsHold) {
  // Seed 000, "The Relation": X * median R per row (the seed's last column).
  const LittleCheck row32 = check_little(32, 4031, 8.21 * kMs);
  EXPECT_DOUBLE_EQ(row32.n_expected, 32);
  EXPECT_NEAR(row32.n_eff, 33.09451, 1e-5);  // the seed prints 33.10
  EXPECT_NEAR(row32.ratio, 33.09451 / 32, 1e-6);
  EXPECT_TRUE(row32.holds);

  const LittleCheck row64 = check_little(64, 4268, 15.15 * kMs);
  EXPECT_NEAR(row64.n_eff, 64.6602, 1e-4);
  EXPECT_TRUE(row64.holds);
}

TEST(Little, ToleranceDecides) {
  // Seed row 8: 1515 req/s * 5.67 ms = 8.59 -> 7.4% above 8.
  const LittleCheck c = check_little(8, 1515, 5.67 * kMs);
  EXPECT_NEAR(c.ratio, 1.0737563, 1e-6);
  EXPECT_FALSE(c.holds);
  EXPECT_TRUE(check_little(8, 1515, 5.67 * kMs, 0.08).holds);
  // Below expectation counts the same way: half the concurrency reached the server.
  EXPECT_FALSE(check_little(16, 1000, 8 * kMs).holds);
  EXPECT_NEAR(check_little(16, 1000, 8 * kMs).ratio, 0.5, 1e-12);
}

TEST(Little, InvalidConcurrencyNeverHolds) {
  const LittleCheck c = check_little(0, 1000, 1 * kMs);
  EXPECT_TRUE(std::isnan(c.ratio));
  EXPECT_FALSE(c.holds);
  EXPECT_FALSE(check_little(4, NAN, 1 * kMs).holds);
}

}  // namespace
}  // namespace knee::analysis
