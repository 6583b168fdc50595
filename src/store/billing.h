// The batch flow: sellers' end-of-day billing (seed 000). For a bill date, every shipment created
// in the thirty days ending with that date is priced and each seller's total is written to
// charges(seller_id, bill_date, shipments, amount_cents), replacing an earlier run for the date.
//
// Two implementations, for the seed's lesson on performance against scalability:
//   row at a time  selects the ids in the window, then per shipment reads it and its seller by
//                  key, prices it in C++ and adds it to its seller's charge row (an upsert per
//                  shipment): the job as a loop over records;
//   set based      one INSERT ... SELECT ... GROUP BY seller_id that the database plans.
// Both run in one transaction and must write the same charges.
//
// The price (cents) of one shipment: its seller's rate + 25 per whole 500 g of its weight
// (weight_g / 500 * 25, integer division: 499 g adds 0, 500 g adds 25) + 100 for zones "50" and
// above.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace knee::store {

enum class BillingMethod { kRowAtATime, kSetBased };

// "row" or "set".
std::string_view billing_method_name(BillingMethod m);

// The seed's batch window: thirty days of records, billed in four hours.
inline constexpr int kBillingDays = 30;
inline constexpr double kBillingWindowHours = 4;

struct BillingRun {
  std::string date;  // the bill date, "2026-01-30"
  BillingMethod method = BillingMethod::kSetBased;
  int64_t window_start_ms = 0;  // first instant billed (Unix ms, inclusive)
  int64_t window_end_ms = 0;    // end of the bill date (exclusive)
  int64_t records = 0;          // shipments billed
  int64_t sellers = 0;          // charge rows written
  int64_t amount_cents = 0;     // their total
  double seconds = 0;           // wall time of the job, commit included
};

// The price of one shipment in cents (the formula above).
int64_t price_cents(int64_t seller_rate_cents, int64_t weight_g, std::string_view zone);

// The same price as an SQL expression over columns rate_cents, weight_g and zone, valid in
// SQLite and PostgreSQL.
inline constexpr const char* kPriceSql =
    "(rate_cents + (weight_g / 500) * 25 + CASE WHEN zone >= '50' THEN 100 ELSE 0 END)";

// The window of a bill date "YYYY-MM-DD": [midnight UTC of the date - 29 days, midnight UTC of the
// next day), in Unix ms. Errors: kInvalidArgument for anything that is not a real date in that
// form ("2026-02-30", "30/01/2026").
core::Result<std::pair<int64_t, int64_t>> billing_window(std::string_view date);

}  // namespace knee::store
