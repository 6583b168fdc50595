#include "store/data.h"

#include <gtest/gtest.h>

#include <set>

#include "http/request.h"

namespace knee::store {
namespace {

TEST(DataGenerator, SameSeedGivesTheSameRowsAndAnotherSeedOthers) {
  const DataGenerator a(DataSpec{1000, 3, 10, 7});
  const DataGenerator b(DataSpec{1000, 3, 10, 7});
  const DataGenerator c(DataSpec{1000, 3, 10, 8});
  int differ = 0;
  for (int64_t id = 1; id <= 1000; ++id) {
    const Shipment x = a.shipment(id), y = b.shipment(id), z = c.shipment(id);
    EXPECT_EQ(x.seller_id, y.seller_id);
    EXPECT_EQ(x.zone, y.zone);
    EXPECT_EQ(x.weight_g, y.weight_g);
    EXPECT_EQ(x.created_ms, y.created_ms);
    EXPECT_EQ(a.latest_state(id), b.latest_state(id));
    differ += x.seller_id != z.seller_id || x.weight_g != z.weight_g;
  }
  EXPECT_GT(differ, 900);
}

TEST(DataGenerator, RowsStayInTheirRanges) {
  const DataSpec spec{5000, 30, 100, 1};
  const DataGenerator gen(spec);
  std::set<int64_t> sellers;
  int64_t previous = 0;
  int counts[5] = {};
  for (int64_t id = 1; id <= spec.records; ++id) {
    const Shipment s = gen.shipment(id);
    EXPECT_EQ(s.tracking_no, tracking_number(id));
    EXPECT_GE(s.seller_id, 1);
    EXPECT_LE(s.seller_id, 100);
    sellers.insert(s.seller_id);
    EXPECT_GE(s.created_ms, kDataEpochMs);
    EXPECT_LT(s.created_ms, kDataEpochMs + 30 * kMsPerDay);
    EXPECT_GE(s.created_ms, previous) << "creation times follow the ids";
    previous = s.created_ms;
    EXPECT_GE(s.weight_g, 100);
    EXPECT_LT(s.weight_g, 20100);
    const int n = gen.event_count(id);
    ASSERT_GE(n, 1);
    ASSERT_LE(n, 4);
    ++counts[n];
    for (int k = 1; k <= n; ++k) {
      const Event e = gen.event(s, k);
      EXPECT_EQ(e.step, k);
      EXPECT_EQ(e.state, kEventStates[k - 1]);
      EXPECT_EQ(e.at_ms, s.created_ms + (k - 1) * 3'600'000);
    }
    EXPECT_EQ(gen.latest_state(id).step, n);
  }
  EXPECT_EQ(sellers.size(), 100u);
  for (int n = 1; n <= 4; ++n) EXPECT_GT(counts[n], 1000) << n << " events";
}

TEST(DataGenerator, TheLargestSpecKeepsCreationTimesInItsSpan) {
  // Regression: (id - 1) * span overflowed int64 once records x days passed ~1.07e11.
  const DataSpec spec{kMaxRecords, 3650, 1000, 1};
  ASSERT_TRUE(spec.validate());
  const DataGenerator gen(spec);
  const int64_t end = kDataEpochMs + 3650 * kMsPerDay;
  int64_t previous = 0;
  for (int64_t id : {int64_t{1}, int64_t{2}, kMaxRecords / 2, kMaxRecords - 1, kMaxRecords}) {
    const int64_t t = gen.shipment(id).created_ms;
    EXPECT_GE(t, kDataEpochMs) << id;
    EXPECT_LT(t, end) << id;
    EXPECT_GE(t, previous) << id;
    previous = t;
  }
  EXPECT_GT(gen.shipment(kMaxRecords).created_ms, end - kMsPerDay);
}

TEST(DataGenerator, TrackingNumbersHaveTenDigits) {
  EXPECT_EQ(tracking_number(42), "KN0000000042");
  EXPECT_EQ(tracking_number(12'000'000), "KN0012000000");
}

// The load engine's {shipment} names the shipments this generator made.
TEST(DataGenerator, TrackingNumbersAreWhatShipmentPlaceholdersRender) {
  for (int64_t id : {int64_t{1}, int64_t{42}, int64_t{999'999}, kMaxRecords}) {
    std::string rendered;
    http::append_tracking_number(rendered, static_cast<uint64_t>(id));
    EXPECT_EQ(rendered, tracking_number(id));
  }
}

TEST(DataSpec, OutOfRangeNamesTheField) {
  EXPECT_EQ((DataSpec{0, 30, 1, 1}).validate().field(), "records");
  EXPECT_EQ((DataSpec{kMaxRecords + 1, 30, 1, 1}).validate().field(), "records");
  EXPECT_EQ((DataSpec{10, 0, 1, 1}).validate().field(), "days");
  EXPECT_EQ((DataSpec{10, 30, 11, 1}).validate().field(), "sellers");
  EXPECT_TRUE((DataSpec{10, 30, 10, 1}).validate());
}

}  // namespace
}  // namespace knee::store
