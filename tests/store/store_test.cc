// One store interface, two stores, the same tests: SQLite in a temporary folder, and PostgreSQL
// started by the test itself (support/postgres.h), each test on a database of its own.
#include "store/store.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "store/data.h"
#include "support/postgres.h"
#include "support/temp_dir.h"

namespace knee::store {
namespace {

const DataSpec kSpec{2000, 3, 10, 5};

// The test binary's one PostgreSQL, started on first use and stopped at exit.
testing::PostgresServer* postgres() {
  static std::string error;
  static std::unique_ptr<testing::PostgresServer> server = testing::PostgresServer::start(error);
  if (!server) ADD_FAILURE() << "PostgreSQL did not start: " << error;
  return server.get();
}

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      location_ = dir_.file("knee-lab.db");
    } else {
      ASSERT_NE(postgres(), nullptr);
      static int databases = 0;
      location_ = postgres()->create_database("t" + std::to_string(++databases));
      ASSERT_FALSE(location_.empty());
    }
    auto stats = load_data(location_, kSpec, false, {});
    ASSERT_TRUE(stats) << stats.status().what();
    loaded_ = *stats;
  }
  std::unique_ptr<Store> open() {
    auto s = open_store(location_);
    EXPECT_TRUE(s) << s.status().what();
    return s ? std::move(s).value() : nullptr;
  }
  testing::TempDir dir_{"knee-store"};
  std::string location_;
  LoadStats loaded_;
};

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& param_info) { return param_info.param; });

TEST_P(StoreTest, HoldsEveryGeneratedRow) {
  const DataGenerator gen(kSpec);
  int64_t events = 0;
  for (int64_t id = 1; id <= kSpec.records; ++id) events += gen.event_count(id);
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->kind(), GetParam());
  auto summary = store->summary();
  ASSERT_TRUE(summary) << summary.status().what();
  EXPECT_EQ(summary->sellers, 10);
  EXPECT_EQ(summary->shipments, 2000);
  EXPECT_EQ(summary->events, events);
  EXPECT_EQ(summary->charges, 0);
  EXPECT_EQ(summary->first_created_ms, gen.shipment(1).created_ms);
  EXPECT_EQ(summary->last_created_ms, gen.shipment(2000).created_ms);
  EXPECT_EQ(loaded_.rows, 10 + 2000 + events);
}

TEST_P(StoreTest, LatestStateIsTheShipmentsNewestEvent) {
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

TEST_P(StoreTest, LatestStateSearchesAnIndexAndNeverScans) {
  auto store = open();
  ASSERT_TRUE(store);
  auto plan = store->latest_state_plan();
  ASSERT_TRUE(plan) << plan.status().what();
  if (GetParam() == "sqlite") {
    EXPECT_NE(plan->find("SEARCH events USING INDEX events_by_tracking_no_time (tracking_no=?)"),
              std::string::npos)
        << *plan;
    EXPECT_EQ(plan->find("SCAN"), std::string::npos) << *plan;
    EXPECT_EQ(plan->find("TEMP B-TREE"), std::string::npos) << "ORDER BY from the index: " << *plan;
  } else {
    EXPECT_NE(plan->find("Index Scan Backward using events_by_tracking_no_time on events"),
              std::string::npos)
        << *plan;
    EXPECT_EQ(plan->find("Seq Scan"), std::string::npos) << *plan;
    EXPECT_EQ(plan->find("Sort"), std::string::npos) << "ORDER BY from the index: " << *plan;
  }
}

TEST_P(StoreTest, AppendedEventsAreDurableAndUnknownShipmentsAreNotStored) {
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

TEST_P(StoreTest, AnExistingDataSetIsKeptUnlessReplaced) {
  auto again = load_data(location_, DataSpec{10, 1, 1, 1}, false, {});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(again.status().message().find("--replace"), std::string::npos);
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->summary()->shipments, 2000) << "the old data set is untouched";
  store.reset();
  ASSERT_TRUE(load_data(location_, DataSpec{10, 1, 1, 1}, true, {}));
  EXPECT_EQ(open()->summary()->shipments, 10);
}

TEST_P(StoreTest, AnInterruptedReplaceKeepsTheOldDataSet) {
  int64_t last_done = 0, total = 0;
  auto stats = load_data(
      location_, DataSpec{120'000, 3, 10, 1}, true,
      [&](int64_t done, int64_t all) {
        last_done = done;
        total = all;
      },
      [] { return true; });
  ASSERT_FALSE(stats);
  EXPECT_NE(stats.status().message().find("interrupted"), std::string::npos);
  EXPECT_GT(last_done, 0);
  EXPECT_LT(last_done, total) << "stopped at the first batch";
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->summary()->shipments, 2000);
}

TEST_P(StoreTest, ProgressReachesTheTotal) {
  int64_t last_done = 0, total = -1;
  auto stats =
      load_data(location_, DataSpec{60'000, 3, 10, 1}, true, [&](int64_t done, int64_t all) {
        EXPECT_GE(done, last_done);
        last_done = done;
        total = all;
      });
  ASSERT_TRUE(stats) << stats.status().what();
  EXPECT_EQ(last_done, total);
  EXPECT_EQ(stats->rows, total);
  EXPECT_EQ(open()->summary()->shipments, 60'000);
}

TEST(SqliteLoad, AnInterruptedLoadLeavesNothing) {
  testing::TempDir dir("knee-store");
  auto stats = load_data(dir.file("knee-lab.db"), DataSpec{120'000, 3, 10, 1}, false, {},
                         [] { return true; });
  ASSERT_FALSE(stats);
  // Only the lock file is left (it stays: removing a lock file races with its next user).
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    left.push_back(e.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"knee-lab.db.lock"});
}

// Regression: knee lab data --replace under a running knee serve renamed a new file over the
// served one (events acknowledged after it went to a deleted file), and two loads crossed.
TEST(SqliteLoad, AServedDataSetIsNotReplacedAndTwoLoadsDoNotCross) {
  testing::TempDir dir("knee-store");
  const std::string path = dir.file("knee-lab.db");
  ASSERT_TRUE(load_data(path, DataSpec{100, 1, 2, 1}, false, {}));
  {
    auto served = open_store(path);
    ASSERT_TRUE(served);
    auto replaced = load_data(path, DataSpec{200, 1, 2, 1}, true, {});
    ASSERT_FALSE(replaced);
    EXPECT_EQ(replaced.status().code(), core::Status::Code::kInvalidArgument);
    EXPECT_NE(replaced.status().message().find("is in use"), std::string::npos);
    EXPECT_EQ((*served)->summary()->shipments, 100);
  }
  // While one load writes, another is refused, and so is opening the store.
  bool second_refused = false, open_refused = false;
  ASSERT_TRUE(load_data(path, DataSpec{60'000, 1, 2, 1}, true, [&](int64_t, int64_t) {
    if (second_refused) return;
    second_refused = !load_data(path, DataSpec{10, 1, 2, 1}, true, {});
    auto during = open_store(path);
    open_refused = !during && during.status().message().find("being written") != std::string::npos;
  }));
  EXPECT_TRUE(second_refused);
  EXPECT_TRUE(open_refused);
  EXPECT_EQ(open_store(path).value()->summary()->shipments, 60'000);
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

TEST(PostgresOpen, ADatabaseWithoutADataSetOrNoServerIsNamed) {
  ASSERT_NE(postgres(), nullptr);
  const std::string empty = postgres()->create_database("empty");
  auto none = open_store(empty);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(none.status().message().find("knee lab data --db"), std::string::npos)
      << none.status().message();
  EXPECT_EQ(none.status().message().find("knee@"), std::string::npos) << "no user in messages";
  // A port where nothing listens: connection refused, as an I/O error naming the call.
  auto away = open_store("postgresql://knee@127.0.0.1:1/postgres?connect_timeout=2");
  ASSERT_FALSE(away);
  EXPECT_EQ(away.status().code(), core::Status::Code::kIoError);
  EXPECT_NE(away.status().message().find("postgresql: connect:"), std::string::npos);
}

TEST(PostgresStore, AStoreThatWentAwayFailsAndRecoversWhenItIsBack) {
  ASSERT_NE(postgres(), nullptr);
  const std::string url = postgres()->create_database("away");
  ASSERT_TRUE(load_data(url, DataSpec{100, 1, 2, 1}, false, {}));
  auto store = open_store(url);
  ASSERT_TRUE(store);
  ASSERT_TRUE((*store)->latest_state(tracking_number(1)));
  ASSERT_TRUE(postgres()->stop());
  auto during = (*store)->latest_state(tracking_number(1));
  EXPECT_FALSE(during);
  if (!during) {
    EXPECT_EQ(during.status().code(), core::Status::Code::kIoError);
  }
  ASSERT_TRUE(postgres()->restart());
  auto after = (*store)->latest_state(tracking_number(1));
  ASSERT_TRUE(after) << after.status().what();
  EXPECT_TRUE(after->has_value());
}

}  // namespace
}  // namespace knee::store

namespace knee::store {
namespace {

// What the billing of `date` must write, computed from the generator alone.
BillingRun expected_billing(const DataSpec& spec, std::string_view date) {
  const DataGenerator gen(spec);
  auto window = billing_window(date);
  BillingRun want;
  std::set<int64_t> sellers;
  for (int64_t id = 1; id <= spec.records; ++id) {
    const Shipment s = gen.shipment(id);
    if (s.created_ms < window->first || s.created_ms >= window->second) continue;
    ++want.records;
    sellers.insert(s.seller_id);
    want.amount_cents += price_cents(gen.seller(s.seller_id).rate_cents, s.weight_g, s.zone);
  }
  want.sellers = static_cast<int64_t>(sellers.size());
  return want;
}

TEST_P(StoreTest, BothBillingMethodsChargeWhatTheGeneratorImplies) {
  // kSpec spans 2026-01-01..03; a bill date of 01-02 covers the first two days only.
  for (const char* date : {"2026-01-02", "2026-01-30"}) {
    const BillingRun want = expected_billing(kSpec, date);
    for (BillingMethod method : {BillingMethod::kRowAtATime, BillingMethod::kSetBased}) {
      auto store = open();
      ASSERT_TRUE(store);
      auto run = store->run_billing(date, method);
      ASSERT_TRUE(run) << run.status().what();
      EXPECT_EQ(run->records, want.records) << date << " " << billing_method_name(method);
      EXPECT_EQ(run->sellers, want.sellers) << date << " " << billing_method_name(method);
      EXPECT_EQ(run->amount_cents, want.amount_cents) << date << " " << billing_method_name(method);
      EXPECT_GT(run->seconds, 0);
      // Run again: the date's charges are replaced, not added to.
      const int64_t charges = store->summary()->charges;
      auto again = store->run_billing(date, method);
      ASSERT_TRUE(again) << again.status().what();
      EXPECT_EQ(again->amount_cents, want.amount_cents);
      EXPECT_EQ(store->summary()->charges, charges);
    }
  }
  EXPECT_LT(expected_billing(kSpec, "2026-01-02").records, kSpec.records);
  EXPECT_EQ(expected_billing(kSpec, "2026-01-30").records, kSpec.records);
  EXPECT_LT(expected_billing(kSpec, "2026-01-31").records, kSpec.records) << "01-01 is out";
}

TEST_P(StoreTest, ABadBillDateIsRefused) {
  auto store = open();
  ASSERT_TRUE(store);
  auto bad = store->run_billing("2026-02-30", BillingMethod::kSetBased);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), core::Status::Code::kInvalidArgument);
}

TEST(Billing, WindowIsThirtyDaysEndingWithTheDate) {
  auto w = billing_window("2026-01-30");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->second, kDataEpochMs + 30 * kMsPerDay);
  EXPECT_EQ(w->first, kDataEpochMs);
  for (const char* bad :
       {"2026-1-30", "30/01/2026", "2026-13-01", "2026-02-29", "", "2026-01-3x"}) {
    EXPECT_FALSE(billing_window(bad)) << bad;
  }
  EXPECT_TRUE(billing_window("2028-02-29")) << "a leap day";
}

TEST(Billing, PriceAddsWeightStepsAndTheFarZoneSurcharge) {
  EXPECT_EQ(price_cents(300, 100, "10"), 300);
  EXPECT_EQ(price_cents(300, 500, "10"), 325);
  EXPECT_EQ(price_cents(300, 1499, "49"), 350);
  EXPECT_EQ(price_cents(300, 1500, "50"), 475);
}

}  // namespace
}  // namespace knee::store

namespace knee::store {
namespace {

// A store with a data set large enough that a row-at-a-time billing run lasts a while.
class LongBillingTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(load_data(location_, DataSpec{200'000, 30, 10, 1}, true, {}));
  }
};

INSTANTIATE_TEST_SUITE_P(Stores, LongBillingTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& param_info) { return param_info.param; });

// Regression: a stopping server waited for a billing run however long it took.
TEST_P(LongBillingTest, AnInterruptedBillingRunFailsAndChargesNothing) {
  auto billing = open();
  ASSERT_TRUE(billing);
  std::atomic<bool> done{false};
  core::Result<BillingRun> result = core::Status::internal("not run");
  std::thread job([&] {
    result = billing->run_billing("2026-01-30", BillingMethod::kRowAtATime);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const bool finished_first = done.load();
  billing->interrupt();
  job.join();
  ASSERT_FALSE(finished_first) << "the run ended before the interrupt: give it more records";
  ASSERT_FALSE(result);
  EXPECT_EQ(result.status().code(), core::Status::Code::kIoError);
  EXPECT_EQ(open()->summary()->charges, 0);
}

// Regression: on SQLite the whole billing run held the write lock (BEGIN IMMEDIATE), so events
// appended meanwhile waited for it and failed with SQLITE_BUSY after the busy timeout.
TEST_P(LongBillingTest, EventsAreCommittedWhileABillingRunGoesOn) {
  auto billing = open();
  auto writer = open();
  ASSERT_TRUE(billing && writer);
  std::atomic<bool> done{false};
  std::thread job([&] {
    (void)billing->run_billing("2026-01-30", BillingMethod::kRowAtATime);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const bool started_after_end = done.load();
  std::vector<bool> found;
  const core::Status appended = writer->append_events(
      std::vector<Event>{{tracking_number(3), "delivered", "12", 5, 1'900'000'000'000}}, found);
  const bool billing_still_running = !done.load();
  billing->interrupt();  // the rest of the run proves nothing more (on PostgreSQL, minutes)
  job.join();
  ASSERT_FALSE(started_after_end) << "the run ended too soon for this test: give it more records";
  EXPECT_TRUE(appended) << appended.what();
  EXPECT_TRUE(billing_still_running) << "the commit waited for the billing run to end";
}

}  // namespace
}  // namespace knee::store
