// The PostgreSQL store, through libpq: the data set lives in the schema "knee" of the database
// the URL names; statements are prepared once per connection (again after a reconnect).
// Durability is PostgreSQL's: COMMIT returns once the WAL is flushed (synchronous_commit on, the
// default). A connection that broke (the server stopped or restarted) is re-established on the
// next call, so the service answers 503 while the server is away and recovers when it is back.
#include <fmt/core.h>
#include <libpq-fe.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <memory>
#include <mutex>
#include <tuple>

#include "store/backends.h"

namespace knee::store {

using core::Result;
using core::Status;

namespace {

constexpr const char* kSchemaVersion = "1";
constexpr int64_t kLoadBatch = 50'000;  // shipments per transaction while loading

// Created in "knee_load", renamed to "knee" once whole. Tracking numbers compare bytewise
// (COLLATE "C"), whatever the cluster's locale: they are identifiers, and a locale's collation
// would make every index build and lookup slower for nothing.
constexpr const char* kSchema = R"sql(
CREATE TABLE knee_load.knee_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE knee_load.sellers (id BIGINT PRIMARY KEY, name TEXT NOT NULL,
                                rate_cents BIGINT NOT NULL);
CREATE TABLE knee_load.shipments (id BIGINT PRIMARY KEY, tracking_no TEXT COLLATE "C" NOT NULL,
                                  seller_id BIGINT NOT NULL, created_ms BIGINT NOT NULL,
                                  zone TEXT NOT NULL, weight_g BIGINT NOT NULL);
CREATE TABLE knee_load.events (tracking_no TEXT COLLATE "C" NOT NULL, at_ms BIGINT NOT NULL,
                               state TEXT NOT NULL, zone TEXT NOT NULL, step INTEGER NOT NULL);
CREATE TABLE knee_load.charges (seller_id BIGINT NOT NULL, bill_date TEXT NOT NULL,
                                shipments BIGINT NOT NULL, amount_cents BIGINT NOT NULL,
                                PRIMARY KEY (seller_id, bill_date));
)sql";

constexpr const char* kIndexes = R"sql(
CREATE UNIQUE INDEX shipments_by_tracking_no ON knee_load.shipments (tracking_no);
CREATE INDEX shipments_by_created ON knee_load.shipments (created_ms);
CREATE INDEX events_by_tracking_no_time ON knee_load.events (tracking_no, at_ms);
ANALYZE knee_load.sellers, knee_load.shipments, knee_load.events;
)sql";

constexpr const char* kLatestState =
    "SELECT state, zone, step, at_ms FROM knee.events WHERE tracking_no = $1 "
    "ORDER BY at_ms DESC LIMIT 1";
// One round trip per event: stored only when its shipment exists; the row count says which.
constexpr const char* kInsertEvent =
    "INSERT INTO knee.events (tracking_no, at_ms, state, zone, step) "
    "SELECT $1, $2::bigint, $3, $4, $5::integer "
    "WHERE EXISTS (SELECT 1 FROM knee.shipments WHERE tracking_no = $1)";

struct ConnFinish {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct ResultClear {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Conn = std::unique_ptr<PGconn, ConnFinish>;
using PgResult = std::unique_ptr<PGresult, ResultClear>;

// libpq's messages end with a newline; one line reads better after a colon.
std::string message_of(PGconn* c) {
  std::string m = PQerrorMessage(c);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  for (char& ch : m) {
    if (ch == '\n') ch = ' ';
  }
  return m;
}

// "postgresql://HOST:PORT/DB", without user or password, for messages.
std::string describe(PGconn* c) {
  return fmt::format("postgresql://{}:{}/{}", PQhost(c), PQport(c), PQdb(c));
}

// The URL with a connect timeout and TCP keepalives unless it sets its own: a database host
// that does not answer costs a store thread seconds, not the kernel's TCP timeout.
std::string with_timeouts(const std::string& url) {
  std::string out = url;
  for (const char* option :
       {"connect_timeout=3", "keepalives=1", "keepalives_idle=10", "tcp_user_timeout=10000"}) {
    const std::string_view name(option, std::string_view(option).find('='));
    if (out.find(std::string(name) + "=") != std::string::npos) continue;
    out += out.find('?') == std::string::npos ? '?' : '&';
    out += option;
  }
  return out;
}

Result<Conn> connect(const std::string& url) {
  Conn conn(PQconnectdb(with_timeouts(url).c_str()));
  if (conn == nullptr) return Status::io_error("postgresql: out of memory");
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return Status::io_error(fmt::format("postgresql: connect: {}", message_of(conn.get())));
  }
  // The server's NOTICEs ("schema knee_load does not exist, skipping") are not the user's
  // business; libpq would print them on stderr.
  PQsetNoticeProcessor(
      conn.get(), [](void*, const char*) {}, nullptr);
  return conn;
}

Status exec(PGconn* c, const char* sql, const std::string& where) {
  PgResult r(PQexec(c, sql));
  const ExecStatusType st = PQresultStatus(r.get());
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    return Status::io_error(fmt::format("{}: {}", where, message_of(c)));
  }
  return Status::success();
}

class PgStore final : public Store {
 public:
  static Result<std::unique_ptr<Store>> open(const std::string& url) {
    auto conn = connect(url);
    if (!conn) return conn.status();
    auto store = std::unique_ptr<PgStore>(new PgStore(std::move(conn).value()));
    if (Status s = store->check_data_set(); !s) return s;
    if (Status s = store->prepare_all(); !s) return s;
    return std::unique_ptr<Store>(std::move(store));
  }

  std::string_view kind() const override { return "postgresql"; }
  const std::string& location() const override { return where_; }

  Result<std::optional<TrackingState>> latest_state(std::string_view tracking_no) override {
    if (Status s = ensure_connected(); !s) return s;
    const std::string no(tracking_no);
    const char* values[] = {no.c_str()};
    PgResult r(PQexecPrepared(conn_.get(), "latest", 1, values, nullptr, nullptr, 0));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK && PQstatus(conn_.get()) == CONNECTION_BAD) {
      // The server restarted since the last call: libpq learns it only now. A read is safe to
      // repeat once on a new connection.
      if (Status s = ensure_connected(); !s) return s;
      r.reset(PQexecPrepared(conn_.get(), "latest", 1, values, nullptr, nullptr, 0));
    }
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) return failure("latest state");
    std::optional<TrackingState> out;
    if (PQntuples(r.get()) > 0) {
      out = TrackingState{no, PQgetvalue(r.get(), 0, 0), PQgetvalue(r.get(), 0, 1),
                          static_cast<int>(to_int(PQgetvalue(r.get(), 0, 2))),
                          to_int(PQgetvalue(r.get(), 0, 3))};
    }
    return out;
  }

  Status append_events(std::span<const Event> events, std::vector<bool>& found) override {
    found.assign(events.size(), false);
    if (Status s = ensure_connected(); !s) return s;
    if (Status s = exec(conn_.get(), "BEGIN", where_ + ": begin"); !s) {
      // A connection found broken at BEGIN committed nothing: one new connection, once.
      if (PQstatus(conn_.get()) != CONNECTION_BAD) return lost(s);
      if (Status again = ensure_connected(); !again) return again;
      if (Status again = exec(conn_.get(), "BEGIN", where_ + ": begin"); !again) return lost(again);
    }
    for (size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      const std::string at = std::to_string(e.at_ms), step = std::to_string(e.step);
      const char* values[] = {e.tracking_no.c_str(), at.c_str(), e.state.c_str(), e.zone.c_str(),
                              step.c_str()};
      PgResult r(PQexecPrepared(conn_.get(), "insert_event", 5, values, nullptr, nullptr, 0));
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
        Status s = failure("insert event");
        PQclear(PQexec(conn_.get(), "ROLLBACK"));
        return s;
      }
      found[i] = std::string_view(PQcmdTuples(r.get())) == "1";
    }
    if (Status s = exec(conn_.get(), "COMMIT", where_ + ": commit"); !s) return lost(s);
    return Status::success();
  }

  Result<std::string> latest_state_plan() override {
    if (Status s = ensure_connected(); !s) return s;
    PgResult r(PQexec(conn_.get(),
                      "EXPLAIN SELECT state, zone, step, at_ms FROM knee.events WHERE "
                      "tracking_no = 'KN0000000001' ORDER BY at_ms DESC LIMIT 1"));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) return failure("explain");
    std::string out;
    for (int i = 0; i < PQntuples(r.get()); ++i)
      out += std::string(PQgetvalue(r.get(), i, 0)) + "\n";
    return out;
  }

  Result<DataSummary> summary() override {
    if (Status s = ensure_connected(); !s) return s;
    PgResult r(
        PQexec(conn_.get(),
               "SELECT (SELECT count(*) FROM knee.sellers), (SELECT count(*) FROM "
               "knee.shipments), (SELECT count(*) FROM knee.events), (SELECT count(*) "
               "FROM knee.charges), (SELECT coalesce(min(created_ms), 0) FROM "
               "knee.shipments), (SELECT coalesce(max(created_ms), 0) FROM knee.shipments)"));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) return failure("summary");
    DataSummary d;
    d.sellers = to_int(PQgetvalue(r.get(), 0, 0));
    d.shipments = to_int(PQgetvalue(r.get(), 0, 1));
    d.events = to_int(PQgetvalue(r.get(), 0, 2));
    d.charges = to_int(PQgetvalue(r.get(), 0, 3));
    d.first_created_ms = to_int(PQgetvalue(r.get(), 0, 4));
    d.last_created_ms = to_int(PQgetvalue(r.get(), 0, 5));
    return d;
  }

  Result<BillingRun> run_billing(std::string_view date, BillingMethod method) override {
    auto window = billing_window(date);
    if (!window) return window.status();
    if (Status s = ensure_connected(); !s) return s;
    const auto started = std::chrono::steady_clock::now();
    BillingRun run;
    run.date = std::string(date);
    run.method = method;
    std::tie(run.window_start_ms, run.window_end_ms) = *window;
    const std::string from = std::to_string(run.window_start_ms);
    const std::string to = std::to_string(run.window_end_ms);
    const char* params[] = {from.c_str(), to.c_str(), run.date.c_str()};
    PGconn* c = conn_.get();
    if (Status s = exec(c, "BEGIN", where_ + ": begin"); !s) return lost(s);
    auto run_sql = [&](const char* sql, int n, const char* const* values) -> Result<PgResult> {
      PgResult r(PQexecParams(c, sql, n, nullptr, values, nullptr, nullptr, 0));
      const ExecStatusType st = PQresultStatus(r.get());
      if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        Status s = failure("billing");
        PQclear(PQexec(c, "ROLLBACK"));
        return s;
      }
      return r;
    };
    if (auto r = run_sql("DELETE FROM knee.charges WHERE bill_date = $1", 1, params + 2); !r) {
      return r.status();
    }
    if (method == BillingMethod::kSetBased) {
      const std::string sql = fmt::format(
          "INSERT INTO knee.charges (seller_id, bill_date, shipments, amount_cents) "
          "SELECT s.seller_id, $3, count(*), sum({}) FROM knee.shipments s JOIN knee.sellers r "
          "ON r.id = s.seller_id WHERE s.created_ms >= $1::bigint AND s.created_ms < $2::bigint "
          "GROUP BY s.seller_id",
          kPriceSql);
      if (auto r = run_sql(sql.c_str(), 3, params); !r) return r.status();
    } else if (Status s = bill_row_at_a_time(run, params); !s) {
      PQclear(PQexec(c, "ROLLBACK"));
      return s;
    }
    auto totals = run_sql(
        "SELECT count(*), coalesce(sum(shipments), 0), coalesce(sum(amount_cents), 0) FROM "
        "knee.charges WHERE bill_date = $1",
        1, params + 2);
    if (!totals) return totals.status();
    run.sellers = to_int(PQgetvalue(totals->get(), 0, 0));
    run.records = to_int(PQgetvalue(totals->get(), 0, 1));
    run.amount_cents = to_int(PQgetvalue(totals->get(), 0, 2));
    if (Status s = exec(c, "COMMIT", where_ + ": commit"); !s) return lost(s);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return run;
  }

  void interrupt() override {
    interrupted_.store(true, std::memory_order_relaxed);
    std::lock_guard lock(cancel_mutex_);
    char error[256];
    if (cancel_) PQcancel(cancel_.get(), error, sizeof error);  // ends the running query
  }

 private:
  explicit PgStore(Conn conn) : conn_(std::move(conn)), where_(describe(conn_.get())) {
    renew_cancel();
  }

  void renew_cancel() {
    std::lock_guard lock(cancel_mutex_);
    cancel_.reset(PQgetCancel(conn_.get()));
  }

  static int64_t to_int(const char* text) {
    int64_t v = 0;
    std::from_chars(text, text + std::char_traits<char>::length(text), v);
    return v;
  }

  // The loop over records, inside the caller's transaction: the window's ids through a cursor
  // (10,000 at a time), then per id its shipment and seller by key and an upsert of the seller's
  // charge row, each a round trip.
  Status bill_row_at_a_time(const BillingRun& run, const char* const* params) {
    PGconn* c = conn_.get();
    PgResult declared(
        PQexecParams(c,
                     "DECLARE billing_ids NO SCROLL CURSOR FOR SELECT id FROM knee.shipments WHERE "
                     "created_ms >= $1::bigint AND created_ms < $2::bigint ORDER BY created_ms",
                     2, nullptr, params, nullptr, nullptr, 0));
    if (PQresultStatus(declared.get()) != PGRES_COMMAND_OK) return failure("billing cursor");
    for (auto [name, sql, n] : {std::tuple{"bill_shipment",
                                           "SELECT seller_id, weight_g, zone FROM knee.shipments "
                                           "WHERE id = $1::bigint",
                                           1},
                                std::tuple{"bill_seller",
                                           "SELECT rate_cents FROM knee.sellers WHERE id = "
                                           "$1::bigint",
                                           1},
                                std::tuple{"bill_add",
                                           "INSERT INTO knee.charges (seller_id, bill_date, "
                                           "shipments, amount_cents) VALUES ($1::bigint, $2, 1, "
                                           "$3::bigint) ON CONFLICT (seller_id, bill_date) DO "
                                           "UPDATE SET shipments = knee.charges.shipments + 1, "
                                           "amount_cents = knee.charges.amount_cents + "
                                           "excluded.amount_cents",
                                           3}}) {
      if (billing_prepared_)
        break;  // once per connection (a failed PREPARE would end the
                // transaction)
      PgResult r(PQprepare(c, name, sql, n, nullptr));
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return failure("prepare billing");
    }
    billing_prepared_ = true;
    while (true) {
      PgResult batch(PQexec(c, "FETCH 10000 FROM billing_ids"));
      if (PQresultStatus(batch.get()) != PGRES_TUPLES_OK) return failure("fetch");
      const int rows = PQntuples(batch.get());
      if (rows == 0) break;
      for (int i = 0; i < rows; ++i) {
        if (interrupted_.load(std::memory_order_relaxed)) {
          return Status::io_error(where_ + ": billing interrupted");
        }
        const char* id[] = {PQgetvalue(batch.get(), i, 0)};
        PgResult sh(PQexecPrepared(c, "bill_shipment", 1, id, nullptr, nullptr, 0));
        if (PQresultStatus(sh.get()) != PGRES_TUPLES_OK || PQntuples(sh.get()) != 1) {
          return failure("read shipment");
        }
        const char* seller_id[] = {PQgetvalue(sh.get(), 0, 0)};
        PgResult se(PQexecPrepared(c, "bill_seller", 1, seller_id, nullptr, nullptr, 0));
        if (PQresultStatus(se.get()) != PGRES_TUPLES_OK || PQntuples(se.get()) != 1) {
          return failure("read seller");
        }
        const std::string price = std::to_string(price_cents(to_int(PQgetvalue(se.get(), 0, 0)),
                                                             to_int(PQgetvalue(sh.get(), 0, 1)),
                                                             PQgetvalue(sh.get(), 0, 2)));
        const char* values[] = {seller_id[0], run.date.c_str(), price.c_str()};
        PgResult add(PQexecPrepared(c, "bill_add", 3, values, nullptr, nullptr, 0));
        if (PQresultStatus(add.get()) != PGRES_COMMAND_OK) return failure("add charge");
      }
    }
    PQclear(PQexec(c, "CLOSE billing_ids"));
    return Status::success();
  }

  Status check_data_set() {
    PgResult r(
        PQexec(conn_.get(), "SELECT value FROM knee.knee_meta WHERE key = 'schema_version'"));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      return Status::invalid_argument(fmt::format(
          "{} holds no knee data set (no schema knee); make one with knee lab data --db URL",
          where_));
    }
    if (PQntuples(r.get()) != 1 || std::string_view(PQgetvalue(r.get(), 0, 0)) != kSchemaVersion) {
      return Status::invalid_argument(fmt::format(
          "{} holds a knee data set of another schema version; make it again with knee lab data "
          "--replace",
          where_));
    }
    return Status::success();
  }

  Status prepare_all() {
    for (auto [name, sql, n] :
         {std::tuple{"latest", kLatestState, 1}, std::tuple{"insert_event", kInsertEvent, 5}}) {
      PgResult r(PQprepare(conn_.get(), name, sql, n, nullptr));
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return failure("prepare");
    }
    return Status::success();
  }

  // Re-establishes a broken connection (and its prepared statements); kIoError while the
  // server is away.
  Status ensure_connected() {
    if (PQstatus(conn_.get()) == CONNECTION_OK) return Status::success();
    PQreset(conn_.get());
    if (PQstatus(conn_.get()) != CONNECTION_OK) {
      return Status::io_error(fmt::format("{}: unavailable: {}", where_, message_of(conn_.get())));
    }
    billing_prepared_ = false;
    renew_cancel();
    return prepare_all();
  }

  Status failure(std::string_view what) {
    return Status::io_error(fmt::format("{}: {}: {}", where_, what, message_of(conn_.get())));
  }

  // A failed BEGIN or COMMIT: the transaction is gone either way.
  Status lost(Status s) {
    if (PQstatus(conn_.get()) == CONNECTION_OK) PQclear(PQexec(conn_.get(), "ROLLBACK"));
    return s;
  }

  Conn conn_;
  std::string where_;
  bool billing_prepared_ = false;  // the row-at-a-time statements, on this connection
  std::atomic<bool> interrupted_{false};
  std::mutex cancel_mutex_;  // cancel_ is remade after a reconnect, used by interrupt()
  std::unique_ptr<PGcancel, void (*)(PGcancel*)> cancel_{nullptr, PQfreeCancel};
};

// Sends `rows` (COPY text format: tab-separated, newline-terminated) into an open COPY.
Status put_copy(PGconn* c, const std::string& rows, const std::string& where) {
  if (PQputCopyData(c, rows.data(), static_cast<int>(rows.size())) != 1) {
    return Status::io_error(fmt::format("{}: copy: {}", where, message_of(c)));
  }
  return Status::success();
}

Status end_copy(PGconn* c, const std::string& where) {
  if (PQputCopyEnd(c, nullptr) != 1) {
    return Status::io_error(fmt::format("{}: copy end: {}", where, message_of(c)));
  }
  Status s;
  while (PGresult* r = PQgetResult(c)) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK && s) {
      s = Status::io_error(fmt::format("{}: copy: {}", where, message_of(c)));
    }
    PQclear(r);
  }
  return s;
}

Status begin_copy(PGconn* c, const char* sql, const std::string& where) {
  PgResult r(PQexec(c, sql));
  if (PQresultStatus(r.get()) != PGRES_COPY_IN) {
    return Status::io_error(fmt::format("{}: {}: {}", where, sql, message_of(c)));
  }
  return Status::success();
}

// The rows of `spec` into the knee_load schema, one COPY of shipments and one of events per
// batch transaction (COPY is PostgreSQL's bulk path, as pgbench -i uses it).
Result<int64_t> copy_rows(PGconn* c, const std::string& where, const DataSpec& spec, int64_t total,
                          const LoadProgress& progress, const std::function<bool()>& interrupted) {
  const DataGenerator gen(spec);
  std::string buf;
  buf.reserve(1 << 20);
  int64_t rows = 0;
  if (Status s = begin_copy(c, "COPY knee_load.sellers FROM STDIN", where); !s) return s;
  for (int64_t id = 1; id <= spec.sellers; ++id, ++rows) {
    const Seller seller = gen.seller(id);
    fmt::format_to(std::back_inserter(buf), "{}\t{}\t{}\n", seller.id, seller.name,
                   seller.rate_cents);
  }
  if (Status s = put_copy(c, buf, where); !s) return s;
  if (Status s = end_copy(c, where); !s) return s;
  std::string events;
  events.reserve(1 << 20);
  for (int64_t first = 1; first <= spec.records; first += kLoadBatch) {
    const int64_t last = std::min(spec.records, first + kLoadBatch - 1);
    if (Status s = exec(c, "BEGIN", where); !s) return s;
    if (Status s = begin_copy(c, "COPY knee_load.shipments FROM STDIN", where); !s) return s;
    buf.clear();
    events.clear();
    for (int64_t id = first; id <= last; ++id) {
      const Shipment s = gen.shipment(id);
      fmt::format_to(std::back_inserter(buf), "{}\t{}\t{}\t{}\t{}\t{}\n", s.id, s.tracking_no,
                     s.seller_id, s.created_ms, s.zone, s.weight_g);
      ++rows;
      const int count = gen.event_count(id);
      for (int k = 1; k <= count; ++k, ++rows) {
        const Event e = gen.event(s, k);
        fmt::format_to(std::back_inserter(events), "{}\t{}\t{}\t{}\t{}\n", e.tracking_no, e.at_ms,
                       e.state, e.zone, e.step);
      }
      if (buf.size() > (1 << 20)) {
        if (Status st = put_copy(c, buf, where); !st) return st;
        buf.clear();
      }
    }
    if (Status s = put_copy(c, buf, where); !s) return s;
    if (Status s = end_copy(c, where); !s) return s;
    if (Status s = begin_copy(c, "COPY knee_load.events FROM STDIN", where); !s) return s;
    if (Status s = put_copy(c, events, where); !s) return s;
    if (Status s = end_copy(c, where); !s) return s;
    if (Status s = exec(c, "COMMIT", where); !s) return s;
    if (progress) progress(rows, total);
    if (interrupted && interrupted()) {
      return Status::io_error(fmt::format("{}: interrupted; nothing was kept", where));
    }
  }
  return rows;
}

}  // namespace

Result<std::unique_ptr<Store>> open_postgres(const std::string& url) { return PgStore::open(url); }

Result<LoadStats> load_postgres(const std::string& url, const DataSpec& spec, bool replace,
                                const LoadProgress& progress,
                                const std::function<bool()>& interrupted) {
  const auto started = std::chrono::steady_clock::now();
  auto conn = connect(url);
  if (!conn) return conn.status();
  PGconn* c = conn->get();
  const std::string where = describe(c);
  {
    PgResult r(PQexec(c, "SELECT 1 FROM pg_namespace WHERE nspname = 'knee'"));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      return Status::io_error(fmt::format("{}: {}", where, message_of(c)));
    }
    if (PQntuples(r.get()) > 0 && !replace) {
      return Status::invalid_argument(fmt::format(
          "{} already holds a data set (schema knee); add --replace to make a new one in its "
          "place",
          where));
    }
  }
  // Nothing is visible as "knee" until it is whole: the rows go into knee_load, renamed at the end
  // in one transaction with the old schema's drop. An earlier load's leftovers go first.
  auto drop_load = [&] { PQclear(PQexec(c, "DROP SCHEMA IF EXISTS knee_load CASCADE")); };
  drop_load();
  if (Status s = exec(c, "CREATE SCHEMA knee_load", where); !s) return s;
  Result<int64_t> rows = [&]() -> Result<int64_t> {
    if (Status s = exec(c, kSchema, where); !s) return s;
    auto written = copy_rows(c, where, spec, total_rows(spec), progress, interrupted);
    if (!written) return written.status();
    if (Status s = exec(c, kIndexes, where); !s) return s;
    const std::string meta = fmt::format(
        "INSERT INTO knee_load.knee_meta VALUES ('schema_version', '{}'), ('records', '{}'), "
        "('days', '{}'), ('sellers', '{}'), ('seed', '{}')",
        kSchemaVersion, spec.records, spec.days, spec.sellers, spec.seed);
    if (Status s = exec(c, meta.c_str(), where); !s) return s;
    if (Status s = exec(c,
                        "BEGIN; DROP SCHEMA IF EXISTS knee CASCADE; "
                        "ALTER SCHEMA knee_load RENAME TO knee; COMMIT;",
                        where);
        !s) {
      return s;
    }
    return written;
  }();
  if (!rows) {
    // A failure inside a COPY leaves the connection in COPY_IN, where ROLLBACK and DROP would
    // fail too: end the COPY as failed first, and take its results.
    for (int i = 0; i < 8; ++i) {  // bounded: a connection that broke meanwhile answers oddly
      PGresult* r = PQgetResult(c);
      if (r == nullptr) break;
      if (PQresultStatus(r) == PGRES_COPY_IN) PQputCopyEnd(c, "knee lab data: load aborted");
      PQclear(r);
    }
    PQclear(PQexec(c, "ROLLBACK"));
    drop_load();
    return rows.status();
  }
  LoadStats stats;
  stats.location = where;
  stats.rows = *rows;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return stats;
}

}  // namespace knee::store
