// The service's data set, generated deterministically from a seed and bulk-loaded into a store
// (`knee lab data`): sellers, shipments spread evenly over a number of days, and each shipment's
// carrier events (1 to 4, in order). The same spec and seed give the same rows on any host, so
// a measurement can be repeated on the same data and a test can compute what the store must
// answer without reading it.
//
// Row i of a table is a pure function of (seed, i): the generator keeps no state, and loading
// may be cut into batches anywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "store/store.h"

namespace knee::store {

// The first shipment is created at 2026-01-01T00:00:00Z, in Unix ms.
inline constexpr int64_t kDataEpochMs = 1'767'225'600'000;
inline constexpr int64_t kMsPerDay = 86'400'000;
// The seed's batch flow: 12 million records over thirty days.
inline constexpr int64_t kSeedRecords = 12'000'000;
inline constexpr int kSeedDays = 30;
// The most shipments `knee lab data` makes (1e9: a 4-byte row count would not do; 60 GB+).
inline constexpr int64_t kMaxRecords = 1'000'000'000;

struct DataSpec {
  int64_t records = 100'000;  // shipments, 1..kMaxRecords (default: small enough for CI)
  int days = 30;              // the span their creation times cover, 1..3650
  int sellers = 100;          // 1..1e6, at most `records`
  uint64_t seed = 1;

  // kInvalidArgument naming the field ("records", "days", "sellers") when out of range.
  core::Status validate() const;
};

struct Seller {
  int64_t id = 0;  // 1..sellers
  std::string name;
  int64_t rate_cents = 0;  // price per shipment before the weight surcharge, 300..799
};

struct Shipment {
  int64_t id = 0;  // 1..records
  std::string tracking_no;
  int64_t seller_id = 0;
  int64_t created_ms = 0;
  std::string zone;
  int64_t weight_g = 0;  // 100..20099
};

// "KN" and the shipment id in 10 digits: "KN0000000042" for id 42.
std::string tracking_number(int64_t shipment_id);

// The states a shipment's events go through, in order (event step k has kEventStates[k - 1]).
inline constexpr const char* kEventStates[] = {"label created", "picked up", "at transit hub",
                                               "out for delivery"};

class DataGenerator {
 public:
  explicit DataGenerator(const DataSpec& spec) : spec_(spec) {}
  const DataSpec& spec() const { return spec_; }

  Seller seller(int64_t id) const;             // id in 1..spec.sellers
  Shipment shipment(int64_t id) const;         // id in 1..spec.records
  int event_count(int64_t shipment_id) const;  // 1..4
  // The k-th event (1-based, k <= event_count) of the shipment: one hour per step after its
  // creation, with the shipment's zone.
  Event event(const Shipment& shipment, int k) const;
  // The shipment's newest event: what latest_state must answer for it.
  TrackingState latest_state(int64_t shipment_id) const;

 private:
  uint64_t hash(int64_t id, uint64_t field) const;
  DataSpec spec_;
};

// How far a load has got, for a progress bar: rows written so far and the rows it will write.
using LoadProgress = std::function<void(int64_t rows_done, int64_t rows_total)>;

struct LoadStats {
  std::string location;  // where it went: the file, or the URL without user and password
  int64_t rows = 0;      // sellers + shipments + events
  double seconds = 0;    // wall time of the whole load, indexes included
};

// Generates `spec`'s data set into the store at `location` (as store::open_store reads it),
// written whole or not at all, in batched transactions of 50,000 shipments with the indexes
// built after the rows:
//   SQLite: into "<path>.tmp" with prepared statements, then switched to WAL, synced and renamed
//   into place; a failure or an interruption removes it.
//   PostgreSQL: with COPY (its bulk path, as pgbench -i) into the schema knee_load, renamed to
//   knee in the transaction that drops the old one; a failure drops knee_load.
// `interrupted` is asked between batches. Refuses to replace an existing data set unless
// `replace`. Errors: kInvalidArgument for a bad spec or an existing data set; kIoError naming the
// file or database and the store's message.
core::Result<LoadStats> load_data(const std::string& location, const DataSpec& spec, bool replace,
                                  const LoadProgress& progress,
                                  const std::function<bool()>& interrupted = {});

}  // namespace knee::store
