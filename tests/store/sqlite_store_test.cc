#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "store/data.h"
#include "store/store.h"
#include "support/temp_dir.h"

namespace knee::store {
namespace {

const DataSpec kSpec{2000, 3, 10, 5};

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto stats = load_data(path_, kSpec, false, {});
    ASSERT_TRUE(stats) << stats.status().what();
    loaded_ = *stats;
  }
  std::unique_ptr<Store> open() {
    auto s = open_store(path_);
    EXPECT_TRUE(s) << s.status().what();
    return s ? std::move(s).value() : nullptr;
  }
  testing::TempDir dir_{"knee-store"};
  std::string path_ = dir_.file("knee-lab.db");
  LoadStats loaded_;
};

TEST_F(SqliteStoreTest, HoldsEveryGeneratedRow) {
  const DataGenerator gen(kSpec);
  int64_t events = 0;
  for (int64_t id = 1; id <= kSpec.records; ++id) events += gen.event_count(id);
  auto store = open();
  ASSERT_TRUE(store);
  auto summary = store->summary();
  ASSERT_TRUE(summary) << summary.status().what();
  EXPECT_EQ(summary->sellers, 10);
  EXPECT_EQ(summary->shipments, 2000);
  EXPECT_EQ(summary->events, events);
  EXPECT_EQ(summary->charges, 0);
  EXPECT_EQ(summary->first_created_ms, gen.shipment(1).created_ms);
  EXPECT_EQ(summary->last_created_ms, gen.shipment(2000).created_ms);
  EXPECT_EQ(loaded_.rows, 10 + 2000 + events);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
}

TEST_F(SqliteStoreTest, LatestStateIsTheShipmentsNewestEvent) {
  const DataGenerator gen(kSpec);
  auto store = open();
  ASSERT_TRUE(store);
  for (int64_t id : {1, 2, 777, 1999, 2000}) {
    auto got = store->latest_state(tracking_number(id));
    ASSERT_TRUE(got) << got.status().what();
    ASSERT_TRUE(got->has_value()) << id;
    EXPECT_EQ(**got, gen.latest_state(id));
  }
  auto none = store->latest_state(tracking_number(2001));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

TEST_F(SqliteStoreTest, LatestStateSearchesAnIndexAndNeverScans) {
  auto store = open();
  ASSERT_TRUE(store);
  auto plan = store->latest_state_plan();
  ASSERT_TRUE(plan) << plan.status().what();
  EXPECT_NE(plan->find("SEARCH events USING INDEX events_by_tracking_no_time (tracking_no=?)"),
            std::string::npos)
      << *plan;
  EXPECT_EQ(plan->find("SCAN"), std::string::npos) << *plan;
  EXPECT_EQ(plan->find("TEMP B-TREE"), std::string::npos) << "ORDER BY from the index: " << *plan;
}

TEST_F(SqliteStoreTest, AppendedEventsAreDurableAndUnknownShipmentsAreNotStored) {
  const std::vector<Event> batch = {
      {tracking_number(5), "delivered", "12", 5, 1'800'000'000'000},
      {"KN9999999999", "delivered", "12", 1, 1'800'000'000'000},
      {tracking_number(6), "delivered", "13", 5, 1'800'000'000'001},
  };
  {
    auto store = open();
    ASSERT_TRUE(store);
    std::vector<bool> found;
    ASSERT_TRUE(store->append_events(batch, found));
    EXPECT_EQ(found, (std::vector<bool>{true, false, true}));
  }
  auto reopened = open();  // a new connection reads what the first committed
  ASSERT_TRUE(reopened);
  auto five = reopened->latest_state(tracking_number(5));
  ASSERT_TRUE(five && five->has_value());
  EXPECT_EQ((*five)->state, "delivered");
  EXPECT_EQ((*five)->step, 5);
  auto unknown = reopened->latest_state("KN9999999999");
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->has_value());
  auto summary = reopened->summary();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->events, loaded_.rows - 10 - 2000 + 2);
}

TEST_F(SqliteStoreTest, AnExistingDataSetIsKeptUnlessReplaced) {
  auto again = load_data(path_, DataSpec{10, 1, 1, 1}, false, {});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(again.status().message().find("--replace"), std::string::npos);
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->summary()->shipments, 2000) << "the old data set is untouched";
  store.reset();
  ASSERT_TRUE(load_data(path_, DataSpec{10, 1, 1, 1}, true, {}));
  EXPECT_EQ(open()->summary()->shipments, 10);
}

TEST(SqliteLoad, AnInterruptedLoadLeavesNothing) {
  testing::TempDir dir("knee-store");
  const std::string path = dir.file("knee-lab.db");
  int64_t last_done = 0, total = 0;
  auto stats = load_data(
      path, DataSpec{120'000, 3, 10, 1}, false,
      [&](int64_t done, int64_t all) {
        last_done = done;
        total = all;
      },
      [] { return true; });
  ASSERT_FALSE(stats);
  EXPECT_NE(stats.status().message().find("interrupted"), std::string::npos);
  EXPECT_GT(last_done, 0);
  EXPECT_LT(last_done, total) << "stopped at the first batch";
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SqliteLoad, ProgressReachesTheTotal) {
  testing::TempDir dir("knee-store");
  int64_t last_done = 0, total = -1;
  auto stats = load_data(dir.file("a.db"), DataSpec{60'000, 3, 10, 1}, false,
                         [&](int64_t done, int64_t all) {
                           EXPECT_GE(done, last_done);
                           last_done = done;
                           total = all;
                         });
  ASSERT_TRUE(stats) << stats.status().what();
  EXPECT_EQ(last_done, total);
  EXPECT_EQ(stats->rows, total);
}

TEST(SqliteOpen, WhatIsNotADataSetIsNamed) {
  testing::TempDir dir("knee-store");
  auto missing = open_store(dir.file("none.db"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("knee lab data"), std::string::npos);

  const std::string other = dir.file("other.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto foreign = open_store(other);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(foreign.status().message().find("not a knee data set"), std::string::npos);
}

}  // namespace
}  // namespace knee::store
