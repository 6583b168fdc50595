#include "store/billing.h"

#include <fmt/core.h>

#include <charconv>
#include <chrono>

namespace knee::store {

using core::Status;

std::string_view billing_method_name(BillingMethod m) {
  return m == BillingMethod::kRowAtATime ? "row" : "set";
}

int64_t price_cents(int64_t seller_rate_cents, int64_t weight_g, std::string_view zone) {
  return seller_rate_cents + weight_g / 500 * 25 + (zone >= "50" ? 100 : 0);
}

core::Result<std::pair<int64_t, int64_t>> billing_window(std::string_view date) {
  const Status bad = Status::invalid_argument(
      fmt::format("'{}' is not a date; give YYYY-MM-DD, e.g. 2026-01-30", date));
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') return bad;
  int y = 0;
  unsigned m = 0, d = 0;
  auto digits = [&](std::string_view part, auto& out) {
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && ptr == part.data() + part.size();
  };
  if (!digits(date.substr(0, 4), y) || !digits(date.substr(5, 2), m) ||
      !digits(date.substr(8, 2), d)) {
    return bad;
  }
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{m},
                                        std::chrono::day{d}};
  if (!ymd.ok()) return bad;
  const std::chrono::sys_days day{ymd};
  const int64_t end_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             (day + std::chrono::days{1}).time_since_epoch())
                             .count();
  const int64_t start_ms = end_ms - int64_t{kBillingDays} * 86'400'000;
  return std::pair{start_ms, end_ms};
}

}  // namespace knee::store
