// The shipment service as a user runs it: `knee lab data` makes the data set, `knee serve
// --state` serves it, and what it acknowledged survives the server being killed.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sqlite3.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "net/socket.h"
#include "store/data.h"
#include "support/blocking_client.h"
#include "support/postgres.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace knee {
namespace {

using testing::run_process;

using store::tracking_number;

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

TEST(LabBilling, BillsBothWaysTheSameAndSaysWhetherTheSeedsJobFits) {
  testing::TempDir dir("knee-e2e-billing");
  ASSERT_EQ(run_process({KNEE_BINARY, "lab", "data", "--state", dir.path(), "--records", "3k",
                         "--days", "30", "--sellers", "7"})
                .exit_code,
            0);
  auto r = run_process({KNEE_BINARY, "lab", "billing", "--state", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("billing 2026-01-30 on "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shipments created 2026-01-01 .. 2026-01-30 (30 days)"), std::string::npos)
      << r.out;
  // Both rows bill all 3000 shipments of 7 sellers for the same amount.
  std::vector<std::string> rows;
  for (const char* method : {"\nrow ", "\nset "}) {
    const size_t at = r.out.find(method);
    ASSERT_NE(at, std::string::npos) << r.out;
    rows.push_back(r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1));
  }
  for (const std::string& row : rows) {
    EXPECT_NE(row.find(" 3000 "), std::string::npos) << row;
    EXPECT_NE(row.find(" the 4 h window"), std::string::npos) << row;
  }
  auto charged = [](const std::string& row) {
    std::istringstream in(row);
    std::string method, records, sellers, amount;
    in >> method >> records >> sellers >> amount;
    return sellers + " " + amount;
  };
  EXPECT_EQ(charged(rows[0]), charged(rows[1]));
  EXPECT_EQ(charged(rows[0]).substr(0, 2), "7 ");

  auto bad = run_process({KNEE_BINARY, "lab", "billing", "--state", dir.path(), "--method", "x"});
  EXPECT_EQ(bad.exit_code, 2);
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

TEST(ServeDb, LoadsAndServesTheDataSetFromPostgresql) {
  std::string error;
  auto pg = testing::PostgresServer::start(error);
  ASSERT_TRUE(pg) << error;
  const std::string url = pg->create_database("e2e");
  auto made = run_process({KNEE_BINARY, "lab", "data", "--db", url, "--records", "1k", "--days",
                           "1", "--sellers", "3"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.out.find("postgresql://127.0.0.1:"), std::string::npos) << made.out;
  EXPECT_EQ(made.out.find("knee@"), std::string::npos) << "no user or password printed";
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--db", url, "--port", "0"});
  const int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0) << server.first_line();
  auto address = net::resolve("127.0.0.1", port);
  ASSERT_TRUE(address);
  testing::Client client(*address);
  auto r = client.get("/tracking/" + tracking_number(500));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("\"no\":\"KN0000000500\""), std::string::npos) << r->body;
  EXPECT_NE(client.get("/health")->body.find("\"kind\":\"postgresql\""), std::string::npos);
  EXPECT_EQ(server.terminate(), 0);

  auto wrong = run_process({KNEE_BINARY, "lab", "data", "--db", "mysql://x/y"});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("--db: 'mysql://x/y' is not a postgresql:// URL"), std::string::npos)
      << wrong.err;
  auto both = run_process({KNEE_BINARY, "serve", "--db", url, "--state", "/tmp", "--port", "0"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--state and --db: give one"), std::string::npos) << both.err;
}

// An event that got its 201.
struct Acked {
  std::string no;
  int64_t at_ms;
};

// Seed 001's promise, tested the hard way: a 201 means durable. `rounds` times, four writers post
// events to `knee serve STORE_FLAGS`, the server is SIGKILLed at some moment and started again;
// returns every event that got a 201. A process kill keeps the kernel's page cache, so this checks
// that a 201 follows the commit (never comes before it); surviving power loss is what the fsync
// (SQLite's synchronous=FULL, PostgreSQL's synchronous_commit) adds, which no test here can cut.
std::vector<Acked> post_and_kill(const std::vector<std::string>& store_flags, int rounds) {
  std::mutex mutex;
  std::vector<Acked> acked;
  std::atomic<int64_t> next{0};
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::string> argv = {KNEE_BINARY, "serve",          "--port",
                                     "0",         "--commit-batch", round % 2 == 0 ? "1" : "8"};
    argv.insert(argv.end(), store_flags.begin(), store_flags.end());
    testing::BackgroundProcess server(argv);
    const int port = testing::port_of_listening_line(server.first_line());
    EXPECT_GT(port, 0) << server.first_line();
    if (port <= 0) return acked;
    auto address = net::resolve("127.0.0.1", port);
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
    // The first 201 of the round, then a while more, then the kill (at some moment of writing).
    for (int i = 0; i < 2000 && acked_this_round.load() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + 17 * round));
    EXPECT_EQ(kill(server.pid(), SIGKILL), 0);
    for (std::thread& t : writers) t.join();
    EXPECT_EQ(server.terminate(), 128 + SIGKILL);
    EXPECT_GT(acked_this_round.load(), 0) << "round " << round;
  }
  return acked;
}

TEST(ServeState, EveryAcknowledgedEventSurvivesSigkillOnSqlite) {
  testing::TempDir dir("knee-e2e-kill");
  auto made = run_process({KNEE_BINARY, "lab", "data", "--state", dir.path(), "--records", "2k",
                           "--days", "2", "--sellers", "10"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::vector<Acked> acked = post_and_kill({"--state", dir.path()}, 20);

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

TEST(ServeDb, EveryAcknowledgedEventSurvivesSigkillOnPostgresql) {
  std::string error;
  auto pg = testing::PostgresServer::start(error);
  ASSERT_TRUE(pg) << error;
  const std::string url = pg->create_database("kill");
  auto made = run_process({KNEE_BINARY, "lab", "data", "--db", url, "--records", "2k", "--days",
                           "2", "--sellers", "10"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::vector<Acked> acked = post_and_kill({"--db", url}, 10);

  PGconn* c = PQconnectdb(url.c_str());
  ASSERT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
  PGresult* sync = PQexec(c, "SHOW synchronous_commit");
  EXPECT_STREQ(PQgetvalue(sync, 0, 0), "on");
  PQclear(sync);
  size_t missing = 0;
  for (const Acked& e : acked) {
    const std::string at = std::to_string(e.at_ms);
    const char* values[] = {e.no.c_str(), at.c_str()};
    PGresult* r = PQexecParams(
        c, "SELECT count(*) FROM knee.events WHERE tracking_no = $1 AND at_ms = $2::bigint", 2,
        nullptr, values, nullptr, nullptr, 0);
    ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK) << PQerrorMessage(c);
    if (std::string_view(PQgetvalue(r, 0, 0)) != "1") ++missing;
    PQclear(r);
  }
  PQfinish(c);
  EXPECT_EQ(missing, 0u) << "of " << acked.size() << " acknowledged events";
  EXPECT_GT(acked.size(), 50u);
}

}  // namespace
}  // namespace knee
