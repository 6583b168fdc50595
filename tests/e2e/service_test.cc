// The shipment service as a user runs it: `knee lab data` makes the data set, `knee serve
// --state` serves it, and what it acknowledged survives the server being killed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "net/socket.h"
#include "support/blocking_client.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee {
namespace {

using testing::run_process;

std::string tracking_number(int64_t id) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "KN%010lld", static_cast<long long>(id));
  return buf;
}

TEST(LabData, MakesADataSetAndKeepsItUnlessReplaced) {
  testing::TempDir dir("knee-e2e-data");
  auto made = run_process({KNEE_BINARY, "lab", "data", "--state", dir.path(), "--records", "2k",
                           "--days", "2", "--sellers", "10"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.out.find("2000 shipments over 2 days, 10 sellers, seed 1"), std::string::npos)
      << made.out;
  EXPECT_NE(made.out.find("rows/s"), std::string::npos) << made.out;
  EXPECT_EQ(made.err, "") << "no progress bar outside a terminal";

  auto again = run_process(
      {KNEE_BINARY, "lab", "data", "--state", dir.path(), "--records", "10", "--sellers", "1"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("add --replace"), std::string::npos) << again.err;

  auto bad = run_process({KNEE_BINARY, "lab", "data", "--state", dir.path(), "--records", "12x"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--records: '12x' is not a count"), std::string::npos) << bad.err;

  auto replaced = run_process({KNEE_BINARY, "lab", "data", "--state", dir.path(), "--records", "10",
                               "--sellers", "1", "--replace"});
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_NE(replaced.out.find("10 shipments"), std::string::npos);
}

TEST(ServeState, WithoutADataSetItSaysHowToMakeOne) {
  testing::TempDir dir("knee-e2e-data");
  auto r = run_process({KNEE_BINARY, "serve", "--state", dir.path(), "--port", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("knee lab data"), std::string::npos) << r.err;
  auto flag = run_process({KNEE_BINARY, "serve", "--commit-batch", "8", "--port", "0"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_NE(flag.err.find("--commit-batch: only with --state DIR"), std::string::npos) << flag.err;
}

// Seed 001's promise, tested the hard way: a 201 means durable. Twenty times: writers post
// events, the server is SIGKILLed at some moment, restarted; at the end every event that got a
// 201 must be in the store, and the store must pass SQLite's integrity check. A process kill
// keeps the kernel's page cache, so this checks that a 201 follows the commit (never before it);
// surviving power loss is what synchronous=FULL's fsync adds, which no test here can cut.
TEST(ServeState, EveryAcknowledgedEventSurvivesSigkill) {
  testing::TempDir dir("knee-e2e-kill");
  auto made = run_process({KNEE_BINARY, "lab", "data", "--state", dir.path(), "--records", "2k",
                           "--days", "2", "--sellers", "10"});
  ASSERT_EQ(made.exit_code, 0) << made.err;

  struct Acked {
    std::string no;
    int64_t at_ms;
  };
  std::mutex mutex;
  std::vector<Acked> acked;
  std::atomic<int64_t> next{0};
  for (int round = 0; round < 20; ++round) {
    testing::BackgroundProcess server({KNEE_BINARY, "serve", "--state", dir.path(), "--port", "0",
                                       "--commit-batch", round % 2 == 0 ? "1" : "8"});
    const int port = testing::port_of_listening_line(server.first_line());
    ASSERT_GT(port, 0) << server.first_line();
    auto address = net::resolve("127.0.0.1", port);
    ASSERT_TRUE(address);
    std::atomic<int> acked_this_round{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&] {
        testing::Client client(*address);
        while (true) {
          const int64_t n = next.fetch_add(1);
          const Acked e{tracking_number(1 + n % 2000), 2'000'000'000'000 + n};
          const std::string body = nlohmann::json{
              {"no", e.no},
              {"state", "delivered"},
              {"zone", "42"},
              {"step", 9},
              {"atMs", e.at_ms}}.dump();
          auto r = client.post("/events", body);
          if (!r) return;  // killed
          if (r->status != 201) {
            ADD_FAILURE() << r->status << " " << r->body;
            return;
          }
          acked_this_round.fetch_add(1);
          std::lock_guard lock(mutex);
          acked.push_back(e);
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(60 + 17 * round));
    ASSERT_EQ(kill(server.pid(), SIGKILL), 0);
    for (std::thread& t : writers) t.join();
    EXPECT_EQ(server.terminate(), 128 + SIGKILL);
    EXPECT_GT(acked_this_round.load(), 0) << "round " << round;
  }

  sqlite3* db = nullptr;
  ASSERT_EQ(
      sqlite3_open_v2((dir.path() + "/shipments.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
      SQLITE_OK);
  sqlite3_stmt* check = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &check, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(check), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(check, 0)), "ok");
  sqlite3_finalize(check);
  sqlite3_stmt* find = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(db, "SELECT count(*) FROM events WHERE tracking_no = ? AND at_ms = ?", -1,
                         &find, nullptr),
      SQLITE_OK);
  size_t missing = 0;
  for (const Acked& e : acked) {
    sqlite3_bind_text(find, 1, e.no.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(find, 2, e.at_ms);
    ASSERT_EQ(sqlite3_step(find), SQLITE_ROW);
    if (sqlite3_column_int64(find, 0) != 1) ++missing;
    sqlite3_reset(find);
  }
  sqlite3_finalize(find);
  sqlite3_close(db);
  EXPECT_EQ(missing, 0u) << "of " << acked.size() << " acknowledged events";
  EXPECT_GT(acked.size(), 100u);
}

}  // namespace
}  // namespace knee
