// The SQLite store: one connection per Store, WAL with synchronous=FULL, every statement
// prepared once. Also the bulk loader of `knee lab data` (store/data.h).
#include <fcntl.h>
#include <fmt/core.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <tuple>
#include <utility>

#include "store/backends.h"

namespace knee::store {

using core::Result;
using core::Status;

namespace {

// The data set's schema version, kept in knee_meta; open_store refuses any other.
constexpr const char* kSchemaVersion = "1";
// Shipments per transaction while loading: large enough that commits cost nothing, small
// enough that a progress bar moves and an interruption is noticed within a fraction of a second.
constexpr int64_t kLoadBatch = 50'000;

constexpr const char* kSchema = R"sql(
CREATE TABLE knee_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sellers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, rate_cents INTEGER NOT NULL);
CREATE TABLE shipments (id INTEGER PRIMARY KEY, tracking_no TEXT NOT NULL,
                        seller_id INTEGER NOT NULL, created_ms INTEGER NOT NULL,
                        zone TEXT NOT NULL, weight_g INTEGER NOT NULL);
CREATE TABLE events (tracking_no TEXT NOT NULL, at_ms INTEGER NOT NULL, state TEXT NOT NULL,
                     zone TEXT NOT NULL, step INTEGER NOT NULL);
CREATE TABLE charges (seller_id INTEGER NOT NULL, bill_date TEXT NOT NULL,
                      shipments INTEGER NOT NULL, amount_cents INTEGER NOT NULL,
                      PRIMARY KEY (seller_id, bill_date));
)sql";

// Built after the rows are in: one sort per index instead of a B-tree insert per row.
constexpr const char* kIndexes = R"sql(
CREATE UNIQUE INDEX shipments_by_tracking_no ON shipments (tracking_no);
CREATE INDEX shipments_by_created ON shipments (created_ms);
CREATE INDEX events_by_tracking_no_time ON events (tracking_no, at_ms);
)sql";

constexpr const char* kLatestState =
    "SELECT state, zone, step, at_ms FROM events WHERE tracking_no = ?1 "
    "ORDER BY at_ms DESC LIMIT 1";

// A flock on "<database>.lock", held for as long as the object lives: shared by every store
// connection (a serving knee), exclusive by a load, so a load never replaces a data set a server
// has open, and two loads never write the same one. Regression: --replace under a running server
// renamed a new file over the one it served, and events it then acknowledged went to a deleted
// file; two loads at once crossed.
class DataSetLock {
 public:
  // Errors: kInvalidArgument when the lock is held the other way (saying by whom); kIoError when
  // the lock file cannot be made.
  static Result<DataSetLock> take(const std::string& path, bool exclusive) {
    const std::string file = path + ".lock";
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Status::from_errno("open " + file, errno);
    if (::flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd);
      if (err != EWOULDBLOCK) return Status::from_errno("flock " + file, err);
      return Status::invalid_argument(
          exclusive
              ? fmt::format("'{}' is in use (a knee serve has it open, or another knee lab "
                            "data is writing it); stop that first",
                            path)
              : fmt::format("'{}' is being written by knee lab data; wait for it to end", path));
    }
    return DataSetLock(fd);
  }
  DataSetLock(DataSetLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  DataSetLock& operator=(DataSetLock&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~DataSetLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }

 private:
  explicit DataSetLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

struct DbClose {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalize {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbClose>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalize>;

Status db_error(sqlite3* db, std::string_view path, std::string_view what) {
  return Status::io_error(fmt::format("sqlite {}: {}: {}", path, what, sqlite3_errmsg(db)));
}

Result<Db> open_db(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    return Status::io_error(fmt::format("sqlite {}: open: {}", path,
                                        raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Status exec(sqlite3* db, std::string_view path, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    Status s = Status::io_error(
        fmt::format("sqlite {}: {}", path, error != nullptr ? error : sqlite3_errmsg(db)));
    sqlite3_free(error);
    return s;
  }
  return Status::success();
}

Result<Stmt> prepare(sqlite3* db, std::string_view path, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr) != SQLITE_OK) {
    return db_error(db, path, "prepare");
  }
  return Stmt(raw);
}

void bind_text(sqlite3_stmt* s, int i, std::string_view text) {
  sqlite3_bind_text(s, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

// Steps a statement that returns no rows, then resets it for its next use.
bool step_done(sqlite3_stmt* s) {
  const int rc = sqlite3_step(s);
  sqlite3_reset(s);
  return rc == SQLITE_DONE;
}

std::string text_column(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(t),
                                    static_cast<size_t>(sqlite3_column_bytes(s, i)));
}

class SqliteStore final : public Store {
 public:
  static Result<std::unique_ptr<Store>> open(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return Status::invalid_argument(fmt::format(
          "'{}' is not a knee data set (no such file); make one with knee lab data", path));
    }
    auto lock = DataSetLock::take(path, /*exclusive=*/false);
    if (!lock) return lock.status();
    auto db = open_db(path, SQLITE_OPEN_READWRITE);
    if (!db) return db.status();
    auto store = std::unique_ptr<SqliteStore>(
        new SqliteStore(path, std::move(db).value(), std::move(lock).value()));
    if (Status s = store->init(); !s) return s;
    return std::unique_ptr<Store>(std::move(store));
  }

  std::string_view kind() const override { return "sqlite"; }
  const std::string& location() const override { return path_; }

  Result<std::optional<TrackingState>> latest_state(std::string_view tracking_no) override {
    sqlite3_stmt* s = latest_.get();
    bind_text(s, 1, tracking_no);
    const int rc = sqlite3_step(s);
    std::optional<TrackingState> out;
    if (rc == SQLITE_ROW) {
      out = TrackingState{std::string(tracking_no), text_column(s, 0), text_column(s, 1),
                          sqlite3_column_int(s, 2), sqlite3_column_int64(s, 3)};
    }
    sqlite3_reset(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db_.get(), path_, "latest state");
    return out;
  }

  Status append_events(std::span<const Event> events, std::vector<bool>& found) override {
    found.assign(events.size(), false);
    if (!step_done(begin_.get())) return db_error(db_.get(), path_, "begin");
    for (size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      bind_text(exists_.get(), 1, e.tracking_no);
      const int rc = sqlite3_step(exists_.get());
      sqlite3_reset(exists_.get());
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return rollback("look up shipment");
      if (rc == SQLITE_DONE) continue;  // no such shipment
      sqlite3_stmt* ins = insert_event_.get();
      bind_text(ins, 1, e.tracking_no);
      sqlite3_bind_int64(ins, 2, e.at_ms);
      bind_text(ins, 3, e.state);
      bind_text(ins, 4, e.zone);
      sqlite3_bind_int(ins, 5, e.step);
      if (!step_done(ins)) return rollback("insert event");
      found[i] = true;
    }
    if (!step_done(commit_.get())) return rollback("commit");
    return Status::success();
  }

  Result<std::string> latest_state_plan() override {
    auto plan =
        prepare(db_.get(), path_, (std::string("EXPLAIN QUERY PLAN ") + kLatestState).c_str());
    if (!plan) return plan.status();
    std::string out;
    int rc;
    while ((rc = sqlite3_step(plan->get())) == SQLITE_ROW)
      out += text_column(plan->get(), 3) + "\n";
    if (rc != SQLITE_DONE) return db_error(db_.get(), path_, "explain");
    return out;
  }

  Result<DataSummary> summary() override {
    auto q = prepare(db_.get(), path_,
                     "SELECT (SELECT count(*) FROM sellers), (SELECT count(*) FROM shipments), "
                     "(SELECT count(*) FROM events), (SELECT count(*) FROM charges), "
                     "(SELECT coalesce(min(created_ms), 0) FROM shipments), "
                     "(SELECT coalesce(max(created_ms), 0) FROM shipments)");
    if (!q) return q.status();
    if (sqlite3_step(q->get()) != SQLITE_ROW) return db_error(db_.get(), path_, "summary");
    DataSummary d;
    d.sellers = sqlite3_column_int64(q->get(), 0);
    d.shipments = sqlite3_column_int64(q->get(), 1);
    d.events = sqlite3_column_int64(q->get(), 2);
    d.charges = sqlite3_column_int64(q->get(), 3);
    d.first_created_ms = sqlite3_column_int64(q->get(), 4);
    d.last_created_ms = sqlite3_column_int64(q->get(), 5);
    return d;
  }

  Result<BillingRun> run_billing(std::string_view date, BillingMethod method) override {
    auto window = billing_window(date);
    if (!window) return window.status();
    const auto started = std::chrono::steady_clock::now();
    BillingRun run;
    run.date = std::string(date);
    run.method = method;
    std::tie(run.window_start_ms, run.window_end_ms) = *window;
    sqlite3* db = db_.get();
    // The totals are made in a read transaction into a TEMP table (the connection's own
    // database), then copied into charges in a short write transaction: a long job never holds
    // the write lock, so the service's writer goes on committing events meanwhile (WAL readers
    // and the writer do not block each other). Regression: the whole job ran in one BEGIN
    // IMMEDIATE, and events posted during it failed with SQLITE_BUSY after the busy timeout.
    if (Status s = exec(db, path_,
                        "CREATE TEMP TABLE IF NOT EXISTS billing_totals (seller_id INTEGER "
                        "PRIMARY KEY, shipments INTEGER NOT NULL, amount_cents INTEGER NOT NULL); "
                        "DELETE FROM temp.billing_totals; BEGIN DEFERRED");
        !s) {
      return s;
    }
    // ?1 and ?2 the window, ?3 the date, in each statement that names them.
    auto bind_window = [&](sqlite3_stmt* st) {
      sqlite3_bind_int64(st, 1, run.window_start_ms);
      sqlite3_bind_int64(st, 2, run.window_end_ms);
      if (sqlite3_bind_parameter_count(st) >= 3) bind_text(st, 3, run.date);
    };
    if (method == BillingMethod::kSetBased) {
      const std::string sql = fmt::format(
          "INSERT INTO temp.billing_totals (seller_id, shipments, amount_cents) "
          "SELECT s.seller_id, count(*), sum({}) FROM shipments s JOIN sellers r ON r.id = "
          "s.seller_id WHERE s.created_ms >= ?1 AND s.created_ms < ?2 GROUP BY s.seller_id",
          kPriceSql);
      auto insert = prepare(db, path_, sql.c_str());
      if (!insert) return rollback("prepare");
      bind_window(insert->get());
      if (!step_done(insert->get())) return rollback("bill");
    } else if (Status s = bill_row_at_a_time(bind_window); !s) {
      return s;
    }
    if (!step_done(commit_.get())) return rollback("commit");
    if (!step_done(begin_.get())) return db_error(db, path_, "begin");
    auto clear = prepare(db, path_, "DELETE FROM charges WHERE bill_date = ?3");
    auto copy = prepare(db, path_,
                        "INSERT INTO charges (seller_id, bill_date, shipments, amount_cents) "
                        "SELECT seller_id, ?3, shipments, amount_cents FROM temp.billing_totals");
    auto totals = prepare(db, path_,
                          "SELECT count(*), coalesce(sum(shipments), 0), coalesce(sum("
                          "amount_cents), 0) FROM charges WHERE bill_date = ?3");
    if (!clear || !copy || !totals) return rollback("prepare");
    for (sqlite3_stmt* st : {clear->get(), copy->get()}) {
      bind_window(st);
      if (!step_done(st)) return rollback("write charges");
    }
    bind_window(totals->get());
    if (sqlite3_step(totals->get()) != SQLITE_ROW) return rollback("totals");
    run.sellers = sqlite3_column_int64(totals->get(), 0);
    run.records = sqlite3_column_int64(totals->get(), 1);
    run.amount_cents = sqlite3_column_int64(totals->get(), 2);
    sqlite3_reset(totals->get());
    if (!step_done(commit_.get())) return rollback("commit");
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return run;
  }

  void interrupt() override {
    interrupted_.store(true, std::memory_order_relaxed);
    sqlite3_interrupt(db_.get());  // safe from another thread: ends the running statement
  }

 private:
  SqliteStore(std::string path, Db db, DataSetLock lock)
      : path_(std::move(path)), db_(std::move(db)), lock_(std::move(lock)) {}

  // The loop over records: ids in the window, then per id its shipment and seller by key and an
  // upsert of the seller's running total.
  template <typename BindWindow>
  Status bill_row_at_a_time(BindWindow bind_window) {
    sqlite3* db = db_.get();
    auto ids = prepare(db, path_,
                       "SELECT id FROM shipments WHERE created_ms >= ?1 AND created_ms < ?2 "
                       "ORDER BY created_ms");
    auto shipment =
        prepare(db, path_, "SELECT seller_id, weight_g, zone FROM shipments WHERE id = ?1");
    auto seller = prepare(db, path_, "SELECT rate_cents FROM sellers WHERE id = ?1");
    auto add = prepare(db, path_,
                       "INSERT INTO temp.billing_totals (seller_id, shipments, amount_cents) "
                       "VALUES (?1, 1, ?2) ON CONFLICT (seller_id) DO UPDATE SET "
                       "shipments = shipments + 1, amount_cents = amount_cents + "
                       "excluded.amount_cents");
    if (!ids || !shipment || !seller || !add) return rollback("prepare");
    bind_window(ids->get());
    int rc;
    while ((rc = sqlite3_step(ids->get())) == SQLITE_ROW) {
      if (interrupted_.load(std::memory_order_relaxed)) return rollback("interrupted");
      sqlite3_bind_int64(shipment->get(), 1, sqlite3_column_int64(ids->get(), 0));
      if (sqlite3_step(shipment->get()) != SQLITE_ROW) return rollback("read shipment");
      const int64_t seller_id = sqlite3_column_int64(shipment->get(), 0);
      const int64_t weight = sqlite3_column_int64(shipment->get(), 1);
      const std::string zone = text_column(shipment->get(), 2);
      sqlite3_reset(shipment->get());
      sqlite3_bind_int64(seller->get(), 1, seller_id);
      if (sqlite3_step(seller->get()) != SQLITE_ROW) return rollback("read seller");
      const int64_t rate = sqlite3_column_int64(seller->get(), 0);
      sqlite3_reset(seller->get());
      sqlite3_bind_int64(add->get(), 1, seller_id);
      sqlite3_bind_int64(add->get(), 2, price_cents(rate, weight, zone));
      if (!step_done(add->get())) return rollback("add charge");
    }
    if (rc != SQLITE_DONE) return rollback("select shipments");
    return Status::success();
  }

  Status init() {
    sqlite3* db = db_.get();
    sqlite3_busy_timeout(db, 5000);
    auto meta = prepare(db, path_, "SELECT value FROM knee_meta WHERE key = 'schema_version'");
    if (!meta) {
      return Status::invalid_argument(fmt::format(
          "'{}' is not a knee data set (no knee_meta table); make one with knee lab data", path_));
    }
    if (sqlite3_step(meta->get()) != SQLITE_ROW || text_column(meta->get(), 0) != kSchemaVersion) {
      return Status::invalid_argument(fmt::format(
          "'{}' is a knee data set of another schema version; make it again with knee lab data "
          "--replace",
          path_));
    }
    if (Status s = exec(db, path_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"); !s) {
      return s;
    }
    for (auto [stmt, sql] : {std::pair{&latest_, kLatestState},
                             {&exists_, "SELECT 1 FROM shipments WHERE tracking_no = ?1"},
                             {&insert_event_,
                              "INSERT INTO events (tracking_no, at_ms, state, zone, step) "
                              "VALUES (?1, ?2, ?3, ?4, ?5)"},
                             {&begin_, "BEGIN IMMEDIATE"},
                             {&commit_, "COMMIT"},
                             {&rollback_, "ROLLBACK"}}) {
      auto p = prepare(db, path_, sql);
      if (!p) return p.status();
      *stmt = std::move(p).value();
    }
    return Status::success();
  }

  Status rollback(std::string_view what) {
    Status s = db_error(db_.get(), path_, what);
    step_done(rollback_.get());
    return s;
  }

  std::string path_;
  Db db_;
  DataSetLock lock_;  // shared: no load replaces the data set under this connection
  Stmt latest_, exists_, insert_event_, begin_, commit_, rollback_;
  std::atomic<bool> interrupted_{false};  // set by interrupt(), from any thread
};

// Removes a database file and the files SQLite keeps beside it.
void remove_db_files(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::remove((path + suffix).c_str());
  }
}

Status fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::from_errno("open " + path, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? Status::success() : Status::from_errno("fsync " + path, err);
}

// Writes the rows of `spec` into the open database; returns the rows written.
Result<int64_t> write_rows(sqlite3* db, const std::string& path, const DataSpec& spec,
                           int64_t total, const LoadProgress& progress,
                           const std::function<bool()>& interrupted) {
  const DataGenerator gen(spec);
  auto sellers = prepare(db, path, "INSERT INTO sellers VALUES (?1, ?2, ?3)");
  auto shipments = prepare(db, path, "INSERT INTO shipments VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  auto events = prepare(db, path, "INSERT INTO events VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!sellers) return sellers.status();
  if (!shipments) return shipments.status();
  if (!events) return events.status();
  int64_t rows = 0;
  if (Status s = exec(db, path, "BEGIN"); !s) return s;
  for (int64_t id = 1; id <= spec.sellers; ++id, ++rows) {
    const Seller seller = gen.seller(id);
    sqlite3_bind_int64(sellers->get(), 1, seller.id);
    bind_text(sellers->get(), 2, seller.name);
    sqlite3_bind_int64(sellers->get(), 3, seller.rate_cents);
    if (!step_done(sellers->get())) return db_error(db, path, "insert seller");
  }
  for (int64_t id = 1; id <= spec.records; ++id) {
    const Shipment s = gen.shipment(id);
    sqlite3_stmt* sh = shipments->get();
    sqlite3_bind_int64(sh, 1, s.id);
    bind_text(sh, 2, s.tracking_no);
    sqlite3_bind_int64(sh, 3, s.seller_id);
    sqlite3_bind_int64(sh, 4, s.created_ms);
    bind_text(sh, 5, s.zone);
    sqlite3_bind_int64(sh, 6, s.weight_g);
    if (!step_done(sh)) return db_error(db, path, "insert shipment");
    ++rows;
    const int count = gen.event_count(id);
    for (int k = 1; k <= count; ++k, ++rows) {
      const Event e = gen.event(s, k);
      sqlite3_stmt* ev = events->get();
      bind_text(ev, 1, e.tracking_no);
      sqlite3_bind_int64(ev, 2, e.at_ms);
      sqlite3_bind_text(ev, 3, kEventStates[k - 1], -1, SQLITE_STATIC);
      bind_text(ev, 4, e.zone);
      sqlite3_bind_int(ev, 5, e.step);
      if (!step_done(ev)) return db_error(db, path, "insert event");
    }
    if (id % kLoadBatch == 0 || id == spec.records) {
      if (Status st = exec(db, path, "COMMIT"); !st) return st;
      if (progress) progress(rows, total);
      if (interrupted && interrupted()) {
        return Status::io_error(fmt::format("{}: interrupted; nothing was kept", path));
      }
      if (id != spec.records) {
        if (Status st = exec(db, path, "BEGIN"); !st) return st;
      }
    }
  }
  return rows;
}

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite(const std::string& path) {
  return SqliteStore::open(path);
}

Result<LoadStats> load_sqlite(const std::string& path, const DataSpec& spec, bool replace,
                              const LoadProgress& progress,
                              const std::function<bool()>& interrupted) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !replace) {
    return Status::invalid_argument(fmt::format(
        "'{}' already holds a data set; add --replace to make a new one in its place", path));
  }
  auto lock = DataSetLock::take(path, /*exclusive=*/true);  // held until the rename is done
  if (!lock) return lock.status();
  const auto started = std::chrono::steady_clock::now();
  const std::string tmp = path + ".tmp";
  remove_db_files(tmp);
  const int64_t total = total_rows(spec);

  Result<int64_t> rows = [&]() -> Result<int64_t> {
    auto db = open_db(tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!db) return db.status();
    sqlite3* d = db->get();
    // Nothing here needs a journal: the file is not in place until it is complete and synced.
    if (Status s = exec(d, tmp,
                        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                        "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-131072; "
                        "PRAGMA temp_store=MEMORY;");
        !s) {
      return s;
    }
    if (Status s = exec(d, tmp, kSchema); !s) return s;
    auto written = write_rows(d, tmp, spec, total, progress, interrupted);
    if (!written) return written.status();
    if (Status s = exec(d, tmp, kIndexes); !s) return s;
    const std::string meta = fmt::format(
        "INSERT INTO knee_meta VALUES ('schema_version', '{}'), ('records', '{}'), "
        "('days', '{}'), ('sellers', '{}'), ('seed', '{}')",
        kSchemaVersion, spec.records, spec.days, spec.sellers, spec.seed);
    if (Status s = exec(d, tmp, meta.c_str()); !s) return s;
    if (Status s = exec(d, tmp, "PRAGMA journal_mode=WAL;"); !s) return s;
    return written;
  }();
  if (rows) {
    if (Status s = fsync_path(tmp, false); !s) rows = s;
  }
  if (!rows) {
    remove_db_files(tmp);
    return rows.status();
  }
  remove_db_files(path);  // an old WAL beside the new file would be replayed into it
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;  // before fmt::format, which may set it
    Status s = Status::from_errno(fmt::format("rename {} to {}", tmp, path), err);
    remove_db_files(tmp);
    return s;
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (Status s = fsync_path(dir.empty() ? "." : dir, true); !s) return s;
  LoadStats stats;
  stats.location = path;
  stats.rows = *rows;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return stats;
}

}  // namespace knee::store
