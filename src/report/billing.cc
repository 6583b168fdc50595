#include "report/billing.h"

#include <fmt/format.h>

#include "core/units.h"

namespace knee::report {
namespace {

// "41.1 h", "7.3 min", or a shorter time in format_duration_ns's units.
std::string hours_text(double hours) {
  if (hours >= 1) return fmt::format("{:.1f} h", hours);
  if (hours * 60 >= 1) return fmt::format("{:.1f} min", hours * 60);
  return core::format_duration_ns(hours * 3.6e12);
}

// "12M" for a whole number of millions, else the number.
std::string records_text(int64_t records) {
  if (records > 0 && records % 1'000'000 == 0) return fmt::format("{}M", records / 1'000'000);
  return fmt::format("{}", records);
}

}  // namespace

std::string billing_heading(const std::string& date, const std::string& location, int64_t first_ms,
                            int64_t last_ms, const BillingGoal& goal) {
  constexpr int64_t kDayMs = 86'400'000;
  // Whole UTC days, rounded down (std::floor's way, for times before 1970 too).
  auto day_of = [](int64_t ms) { return ms / kDayMs - (ms % kDayMs < 0 ? 1 : 0); };
  const int64_t days = day_of(last_ms) - day_of(first_ms) + 1;
  return fmt::format(
      "billing {} on {}: shipments created {} .. {} ({} days)\n"
      "{:<7} {:>10} {:>8} {:>16} {:>10} {:>12}  the seed's {} records at this rate\n",
      date, location, core::format_utc_date(first_ms), core::format_utc_date(last_ms), days,
      "method", "records", "sellers", "charged", "elapsed", "records/s",
      records_text(goal.records));
}

std::string billing_row(const BillingRow& row, const BillingGoal& goal) {
  const double rate = row.seconds > 0 ? static_cast<double>(row.records) / row.seconds : 0;
  const double hours = rate > 0 ? static_cast<double>(goal.records) / rate / 3600 : 0;
  return fmt::format(
      "{:<7} {:>10} {:>8} {:>16} {:>10} {:>12.0f}  {}\n", row.method, row.records, row.sellers,
      fmt::format("{}.{:02}", row.amount_cents / 100, row.amount_cents % 100),
      core::format_duration_ns(row.seconds * 1e9), rate,
      rate <= 0 ? std::string("no records billed")
                : fmt::format("{}: {} the {:.0f} h window", hours_text(hours),
                              hours <= goal.window_hours ? "fits" : "misses", goal.window_hours));
}

std::string billing_footer() {
  return "a rate measured at one scale: bill 2x and 4x the records too, since a job whose rate "
         "falls as records grow misses what it seems to fit here (docs/service.md)\n";
}

}  // namespace knee::report
