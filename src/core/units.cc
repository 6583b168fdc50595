#include "core/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace knee::core {

Result<Nanos> parse_duration(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return Status::invalid_argument(fmt::format(
        "'{}' is not a duration ({}); use a number with a unit: 500ms, 2s, 1m", text, why));
  };
  if (text.empty()) return fail("empty");
  if (text.front() == '-') return fail("negative");
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) return fail("no number");
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, value);
  if (ec != std::errc() || ptr != text.data() + i) return fail("bad number");
  std::string_view unit = text.substr(i);
  double scale_ns = 0;
  if (unit.empty()) {
    // A bare number is ambiguous (is --cpu 10 ten seconds or ten ms?); only 0 needs no unit.
    if (value != 0) return fail("no unit");
    scale_ns = 1;
  } else if (unit == "s") {
    scale_ns = 1e9;
  } else if (unit == "ms") {
    scale_ns = 1e6;
  } else if (unit == "us") {
    scale_ns = 1e3;
  } else if (unit == "ns") {
    scale_ns = 1;
  } else if (unit == "m") {
    scale_ns = 60e9;
  } else if (unit == "h") {
    scale_ns = 3600e9;
  } else {
    return fail("unknown unit '" + std::string(unit) + "'");
  }
  double ns = value * scale_ns;
  if (!std::isfinite(ns) || ns > 9.2e18) return fail("too large");
  return Nanos(static_cast<int64_t>(std::llround(ns)));
}

Result<std::vector<int64_t>> parse_positive_int_list(std::string_view text, int64_t max_value) {
  auto fail = [&](std::string_view why) {
    return Status::invalid_argument(fmt::format(
        "'{}' is not a list of positive integers ({}); use a form like 1,2,4,8", text, why));
  };
  std::vector<int64_t> out;
  if (text.empty()) return fail("empty");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) return fail("empty element");
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || ptr != item.data() + item.size())
      return fail(fmt::format("'{}' is not an integer", item));
    if (v < 1) return fail(fmt::format("{} is below 1", v));
    if (v > max_value) return fail(fmt::format("{} is above {}", v, max_value));
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<std::vector<int64_t>> parse_increasing_int_list(std::string_view text, int64_t max_value) {
  auto list = parse_positive_int_list(text, max_value);
  if (!list) return list;
  for (size_t i = 1; i < list->size(); ++i) {
    if ((*list)[i] <= (*list)[i - 1]) {
      return Status::invalid_argument(
          fmt::format("'{}' must be strictly increasing, like 1,2,4,8", text));
    }
  }
  return list;
}

Result<std::vector<double>> parse_positive_number_list(std::string_view text) {
  const Status bad = Status::invalid_argument(
      fmt::format("'{}' is not a comma-separated list of numbers > 0, like 416.67,833.33", text));
  std::vector<double> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    double v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || !(v > 0) ||
        !std::isfinite(v)) {
      return bad;
    }
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<int64_t> parse_count(std::string_view text) {
  const Status bad = Status::invalid_argument(fmt::format(
      "'{}' is not a count; give a whole number, optionally with k, M or G (100k, 12M)", text));
  if (text.empty()) return bad;
  double scale = 1;
  switch (text.back()) {
    case 'k':
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'G':
      scale = 1e9;
      break;
    default:
      break;
  }
  const std::string_view number = scale == 1 ? text : text.substr(0, text.size() - 1);
  double v = 0;
  auto [ptr, ec] =
      std::from_chars(number.data(), number.data() + number.size(), v, std::chars_format::fixed);
  if (number.empty() || ec != std::errc() || ptr != number.data() + number.size()) return bad;
  const double n = v * scale;
  // "0.3k" is 300 although 0.3 * 1e3 is not exactly an integer in binary.
  if (!(n >= 0 && n <= 1e15) || std::abs(n - std::round(n)) > 1e-6) return bad;
  return static_cast<int64_t>(std::round(n));
}

Result<std::vector<std::string>> parse_name_list(std::string_view text,
                                                 const std::vector<std::string>& allowed) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string name(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string all;
      for (const std::string& a : allowed) all += (all.empty() ? "" : ",") + a;
      return Status::invalid_argument(fmt::format(
          "'{}': '{}' is not one of {}; give a comma-separated subset", text, name, all));
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return names;
}

std::string format_duration_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

Result<double> parse_wall_time(std::string_view text, double now_epoch_s) {
  const std::string shown(text);
  auto bad = [&]() {
    return Status::invalid_argument(
        fmt::format("'{}' is not a time: give seconds since the epoch (1796212800), a UTC time "
                    "(2026-12-02T12:00:00Z) or +DURATION from now (+30s)",
                    shown));
  };
  double t = 0;
  if (!text.empty() && text.front() == '+') {
    auto d = parse_duration(text.substr(1));
    if (!d) return bad();
    t = now_epoch_s + std::chrono::duration<double>(*d).count();
  } else if (text.find('T') != std::string_view::npos) {
    std::tm tm{};
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    char z = 0;
    int used = 0;
    const int n = std::sscanf(shown.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &year, &month, &day,
                              &hour, &minute, &second, &z, &used);
    int used5 = 0;
    const bool short_form = n != 7 && std::sscanf(shown.c_str(), "%4d-%2d-%2dT%2d:%2d%c%n", &year,
                                                  &month, &day, &hour, &minute, &z, &used5) == 6;
    if (short_form) {
      second = 0;
      used = used5;
    } else if (n != 7) {
      return bad();
    }
    // Digits, dashes, colons, T and Z only (sscanf would take "12:-5" or " 7").
    const bool plain = shown.find_first_not_of("0123456789-:TZ") == std::string::npos &&
                       shown.find("-", 10) == std::string::npos;
    if (!plain || z != 'Z' || static_cast<size_t>(used) != shown.size() || month < 1 ||
        month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
        second < 0 || second > 60) {
      return bad();
    }
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    const std::time_t epoch = timegm(&tm);
    std::tm back{};
    if (epoch == -1 || gmtime_r(&epoch, &back) == nullptr || back.tm_mday != day) return bad();
    t = static_cast<double>(epoch);
  } else {
    // Decimal seconds only (strtod would take " 1e9" and hexadecimal).
    if (shown.empty() || shown.find_first_not_of("0123456789.") != std::string::npos) return bad();
    char* end = nullptr;
    t = std::strtod(shown.c_str(), &end);
    if (end != shown.c_str() + shown.size() || !std::isfinite(t)) return bad();
  }
  if (t < now_epoch_s - 1) {
    return Status::invalid_argument(
        fmt::format("'{}' has passed ({:.0f} s ago): give a time to come", shown, now_epoch_s - t));
  }
  if (t > now_epoch_s + 86400) {
    return Status::invalid_argument(
        fmt::format("'{}' is more than a day away: give a time within 24 h", shown));
  }
  return t;
}

std::string format_utc_date(int64_t unix_ms) {
  const auto day = std::chrono::floor<std::chrono::days>(
      std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(unix_ms)));
  const std::chrono::year_month_day ymd{day};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
}

}  // namespace knee::core
