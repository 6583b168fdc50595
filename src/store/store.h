// The shipment tracking and billing service's store (seed 000's system): shipments, their
// carriers' state events, sellers and their charges, behind one interface that SQLite (embedded,
// a database file in the lab's state folder) and PostgreSQL (through libpq, the schema knee of a
// database) implement; both pass the same tests (tests/store/store_test.cc).
//
// Schema (docs/service.md): sellers(id, name, rate_cents), shipments(id, tracking_no UNIQUE,
// seller_id, created_ms, zone, weight_g) indexed by created_ms, events(tracking_no, at_ms,
// state, zone, step) indexed by (tracking_no, at_ms), charges(seller_id, bill_date, shipments,
// amount_cents). Times are Unix epoch milliseconds (UTC).
//
// A Store is one connection: use it from one thread at a time (each store thread of the lab
// server opens its own); only interrupt() may be called from another. Calls block on the database,
// so the lab's event loops never make them. Errors are values: kIoError naming the database and the
// store's own message for a store that failed or went away; kInvalidArgument for a location that is
// not a store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "store/billing.h"

namespace knee::store {

// A shipment's latest state: its newest event (the read flow's answer).
struct TrackingState {
  std::string tracking_no;
  std::string state;  // "label created", "picked up", "at transit hub", ...
  std::string zone;   // the delivery zone, two digits
  int step = 0;       // 1 for the first event of the shipment
  int64_t at_ms = 0;  // when the carrier reported it, Unix ms

  bool operator==(const TrackingState&) const = default;
};

// One carrier state event (the write flow's record).
struct Event {
  std::string tracking_no;
  std::string state;
  std::string zone;
  int step = 0;
  int64_t at_ms = 0;

  bool operator==(const Event&) const = default;
};

// What a data set holds.
struct DataSummary {
  int64_t sellers = 0;
  int64_t shipments = 0;
  int64_t events = 0;
  int64_t charges = 0;
  int64_t first_created_ms = 0;  // the oldest shipment's creation, 0 when there is none
  int64_t last_created_ms = 0;

  bool operator==(const DataSummary&) const = default;
};

class Store {
 public:
  virtual ~Store() = default;

  // "sqlite" or "postgresql".
  virtual std::string_view kind() const = 0;
  // Where it is: the database file, or the connection URL without its password.
  virtual const std::string& location() const = 0;

  // The shipment's newest event; nullopt when no event has that tracking number.
  virtual core::Result<std::optional<TrackingState>> latest_state(std::string_view tracking_no) = 0;

  // Appends `events` in one transaction, durable when this returns ok (SQLite WAL with
  // synchronous=FULL: fsync before commit returns). found[i] says whether events[i]'s tracking
  // number names a shipment; events of unknown shipments are not stored, the others are.
  // Errors: kIoError, and then nothing of the batch is stored.
  virtual core::Status append_events(std::span<const Event> events, std::vector<bool>& found) = 0;

  // The store's own plan for latest_state's query, one line per plan line (SQLite: EXPLAIN
  // QUERY PLAN's details; PostgreSQL: EXPLAIN's text), so a test can check that it searches an
  // index and never scans a table.
  virtual core::Result<std::string> latest_state_plan() = 0;

  // Counts of what the data set holds.
  virtual core::Result<DataSummary> summary() = 0;

  // The batch flow for `date` ("YYYY-MM-DD") by `method` (store/billing.h), in one transaction
  // that replaces the date's earlier charges. Errors: kInvalidArgument for a bad date; kIoError,
  // and then the date's charges are as they were.
  virtual core::Result<BillingRun> run_billing(std::string_view date, BillingMethod method) = 0;

  // Asks a billing run going on another thread to stop: it returns kIoError soon, having
  // changed no charges. The one member safe to call from any thread (SQLite: sqlite3_interrupt;
  // PostgreSQL: PQcancel, and a flag its loop checks), for a server that is stopping.
  virtual void interrupt() = 0;
};

// Whether `location` names PostgreSQL: a postgresql:// or postgres:// URL (libpq's URI forms);
// anything else is an SQLite file path.
bool is_postgres_url(std::string_view location);

// Opens the store at `location`: a postgresql:// (or postgres://) URL in libpq's form, whose
// database holds the schema knee that load_data made; otherwise the path of an SQLite database
// file that load_data created. Errors: kInvalidArgument naming the file or database when it
// holds no knee data set (with how to make one: knee lab data); kIoError when SQLite cannot open
// the file or PostgreSQL cannot be reached (libpq's reason).
core::Result<std::unique_ptr<Store>> open_store(const std::string& location);

}  // namespace knee::store
