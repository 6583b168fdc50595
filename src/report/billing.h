// `knee lab billing`'s table: the batch flow (store/billing.h) run each way, one row per method
// printed as it finishes (a row-at-a-time run over millions of records takes minutes), with the
// rate it reached and whether the seed's job (seed 000: 12M records in a 4-hour window) would fit
// at that rate. Text only; the rows are what store::BillingRun measured.
#pragma once

#include <cstdint>
#include <string>

namespace knee::report {

// One method's run of the batch.
struct BillingRow {
  std::string method;        // "row" or "set" (store::billing_method_name)
  int64_t records = 0;       // shipments billed
  int64_t sellers = 0;       // charge rows written
  int64_t amount_cents = 0;  // their total
  double seconds = 0;        // wall time of the job, commit included
};

// The job a row's rate is judged against.
struct BillingGoal {
  int64_t records = 0;      // records the job bills (the seed's 12M, store::kSeedRecords)
  double window_hours = 0;  // the time it has (the seed's 4 h, store::kBillingWindowHours)
};

// "billing DATE on LOCATION: shipments created FIRST .. LAST (DAYS days)" and the column header,
// two lines. date: the bill date as given, YYYY-MM-DD; first_ms and last_ms: Unix ms within the
// first and the last day billed (UTC), from which FIRST, LAST and DAYS (both ends counted) come.
std::string billing_heading(const std::string& date, const std::string& location, int64_t first_ms,
                            int64_t last_ms, const BillingGoal& goal);

// One row: method, records, sellers, amount charged, elapsed, records/s, and the time the goal's
// records take at that rate with "fits" or "misses" the window ("no records billed" at rate 0).
std::string billing_row(const BillingRow& row, const BillingGoal& goal);

// The closing line: a rate at one scale is not a rate at every scale.
std::string billing_footer();

}  // namespace knee::report
