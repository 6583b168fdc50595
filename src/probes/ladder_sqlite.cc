// The SQLite rungs of the latency ladder: one in-memory table, three reads, their plans.
// Source of the plans' wording: SQLite's EXPLAIN QUERY PLAN documentation (sqlite.org/eqp.html).
#include <fmt/format.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "probes/ladder.h"

namespace knee::probes {
namespace {

using core::Result;
using core::Status;

constexpr int kProbeKeys = 256;  // ids (and their emails) the reads cycle through

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

Status sqlite_error(sqlite3* db, std::string_view operation) {
  return Status::io_error(fmt::format("SQLite {}: {}", operation, sqlite3_errmsg(db)));
}

Result<Stmt> prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return sqlite_error(db, fmt::format("prepare '{}'", sql));
  }
  return Stmt(raw);
}

Status exec(sqlite3* db, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return sqlite_error(db, fmt::format("exec '{}'", sql));
  }
  return Status::success();
}

// 20000 -> "20,000".
std::string with_commas(int v) {
  std::string digits = std::to_string(v);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) {
    digits.insert(static_cast<size_t>(at), ",");
  }
  return digits;
}

std::string email_of(int id) { return fmt::format("user{}@example.com", id); }

// The detail column of EXPLAIN QUERY PLAN for `sql` with `bind` applied, rows joined by "; ".
template <class Bind>
Result<std::string> query_plan(sqlite3* db, const std::string& sql, Bind bind) {
  Result<Stmt> stmt = prepare(db, "EXPLAIN QUERY PLAN " + sql);
  if (!stmt) return stmt.status();
  bind(stmt->get());
  std::string plan;
  int rc = 0;
  while ((rc = sqlite3_step(stmt->get())) == SQLITE_ROW) {
    const unsigned char* detail = sqlite3_column_text(stmt->get(), 3);
    if (!plan.empty()) plan += "; ";
    plan += detail == nullptr ? "" : reinterpret_cast<const char*>(detail);
  }
  if (rc != SQLITE_DONE) return sqlite_error(db, "EXPLAIN QUERY PLAN " + sql);
  return plan;
}

// Times one read: bind the i-th probe key, step to the row, read the name, reset.
template <class Bind>
Result<Rung> time_read(sqlite3* db, const TimingLimits& limits, const std::string& sql, Bind bind,
                       std::string id, std::string name, std::string how) {
  Result<std::string> plan = query_plan(db, sql, [&](sqlite3_stmt* s) { bind(s, 0); });
  if (!plan) return plan.status();
  Result<Stmt> stmt = prepare(db, sql);
  if (!stmt) return stmt.status();
  sqlite3_stmt* s = stmt->get();
  int64_t missing = 0;
  const Samples samples = measure(limits, [&](uint64_t i) {
    bind(s, i);
    if (sqlite3_step(s) == SQLITE_ROW) {
      keep(sqlite3_column_bytes(s, 0));
    } else {
      ++missing;
    }
    sqlite3_reset(s);
  });
  if (missing > 0) {
    return Status::internal(fmt::format("SQLite '{}': {} reads found no row", sql, missing));
  }
  Rung r = summarise(samples, limits.repeats);
  r.group = "sqlite";
  r.id = std::move(id);
  r.name = std::move(name);
  r.plan = std::move(*plan);
  r.method = fmt::format(
      "'{}' as one prepared statement: bind {}, step to the row, read the name, reset; {}; plan: "
      "{}",
      sql, how,
      r.batch == 1 ? "each read timed alone"
                   : fmt::format("timed in batches of {} reads, per-read time = batch time / {}",
                                 r.batch, r.batch),
      r.plan);
  return r;
}

}  // namespace

Result<SqliteLadder> run_sqlite(const LadderOptions& options) {
  if (options.sqlite_rows < 1) {
    return Status::invalid_argument(
        fmt::format("SQLite table of {} rows: need at least 1", options.sqlite_rows));
  }
  sqlite3* raw = nullptr;
  if (sqlite3_open(":memory:", &raw) != SQLITE_OK) {
    const Status st = sqlite_error(raw, "open :memory:");
    sqlite3_close(raw);
    return st;
  }
  const Db db(raw);
  if (Status st = exec(raw, "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT, name TEXT)");
      !st) {
    return st;
  }
  if (Status st = exec(raw, "BEGIN"); !st) return st;
  {
    Result<Stmt> insert = prepare(raw, "INSERT INTO users VALUES (?, ?, ?)");
    if (!insert) return insert.status();
    for (int id = 1; id <= options.sqlite_rows; ++id) {
      const std::string email = email_of(id);
      const std::string name = fmt::format("User {}", id);
      sqlite3_bind_int(insert->get(), 1, id);
      sqlite3_bind_text(insert->get(), 2, email.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert->get(), 3, name.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(insert->get()) != SQLITE_DONE) return sqlite_error(raw, "INSERT INTO users");
      sqlite3_reset(insert->get());
    }
  }
  if (Status st = exec(raw, "COMMIT"); !st) return st;

  // Pseudo-random ids spread over the table, and their emails.
  std::vector<int> ids(kProbeKeys);
  std::vector<std::string> emails(kProbeKeys);
  uint64_t state = 12345;
  for (int k = 0; k < kProbeKeys; ++k) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    ids[static_cast<size_t>(k)] =
        1 + static_cast<int>((state >> 33) % static_cast<uint64_t>(options.sqlite_rows));
    emails[static_cast<size_t>(k)] = email_of(ids[static_cast<size_t>(k)]);
  }
  const auto bind_id = [&](sqlite3_stmt* s, uint64_t i) {
    sqlite3_bind_int(s, 1, ids[i % kProbeKeys]);
  };
  const auto bind_email = [&](sqlite3_stmt* s, uint64_t i) {
    const std::string& e = emails[i % kProbeKeys];
    sqlite3_bind_text(s, 1, e.data(), static_cast<int>(e.size()), SQLITE_STATIC);
  };
  const std::string by_id = "SELECT name FROM users WHERE id = ?";
  const std::string by_email = "SELECT name FROM users WHERE email = ?";
  const std::string rows = with_commas(options.sqlite_rows) + " rows";

  SqliteLadder out;
  out.version = sqlite3_libversion();
  out.rows = options.sqlite_rows;
  Result<Rung> key = time_read(raw, options.timing, by_id, bind_id, "sqlite_primary_key",
                               fmt::format("SQLite read by primary key ({})", rows),
                               "one of 256 pseudo-random ids");
  if (!key) return key.status();
  Result<Rung> scan = time_read(raw, options.timing, by_email, bind_email, "sqlite_scan",
                                fmt::format("SQLite read by unindexed column: scan of {}", rows),
                                "the email of one of 256 pseudo-random rows");
  if (!scan) return scan.status();
  if (Status st = exec(raw, "CREATE INDEX users_email ON users (email)"); !st) return st;
  Result<Rung> index = time_read(raw, options.timing, by_email, bind_email, "sqlite_index",
                                 fmt::format("SQLite read by indexed column ({})", rows),
                                 "the email of one of 256 pseudo-random rows");
  if (!index) return index.status();
  out.scan_over_key = key->median_ns > 0 ? scan->median_ns / key->median_ns : 0;
  out.scan_over_index = index->median_ns > 0 ? scan->median_ns / index->median_ns : 0;
  out.rungs = {std::move(*key), std::move(*scan), std::move(*index)};
  return out;
}

}  // namespace knee::probes
