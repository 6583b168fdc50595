// Parsing and formatting of the quantities users type and read: durations ("2s", "500ms"),
// lists of positive integers ("1,2,4,8"), and human-readable durations for tables.
//
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace knee::core {

// Parses a non-negative duration: a decimal number with a unit suffix ns, us, ms, s, m, h:
// "2s", "1.5s", "500ms". Only "0" may omit the unit: a bare "10" is refused rather than guessed.
// Errors (kInvalidArgument): empty text, a negative value, a missing or unknown unit, trailing
// garbage.
Result<Nanos> parse_duration(std::string_view text);

// Parses a wall-clock time into seconds since the Unix epoch: seconds since the epoch
// ("1796212800", "1796212800.5"), an ISO 8601 UTC time ("2026-12-02T12:00:00Z", seconds
// optional, "Z" required), or "+DURATION" after `now_epoch_s` ("+30s"). Errors
// (kInvalidArgument): any other form, an impossible date, a time before now_epoch_s - 1 s (it
// has passed) or more than a day after it.
Result<double> parse_wall_time(std::string_view text, double now_epoch_s);

// Parses "1,2,4,8" into {1,2,4,8}. Every element must be an integer in [1, max_value].
// Errors (kInvalidArgument): empty list or element, non-digits, zero, out of range.
Result<std::vector<int64_t>> parse_positive_int_list(std::string_view text,
                                                     int64_t max_value = 1'000'000);

// Parses "1,2,4,8" as above and requires it strictly increasing (a sweep's levels).
// Errors: as parse_positive_int_list, and "'4,2' must be strictly increasing, like 1,2,4,8".
Result<std::vector<int64_t>> parse_increasing_int_list(std::string_view text, int64_t max_value);

// Parses "416.67,833.33" into finite numbers > 0. Errors (kInvalidArgument): an empty list or
// element, a number that is not > 0 or not finite.
Result<std::vector<double>> parse_positive_number_list(std::string_view text);

// Parses "a,b" into the distinct names it lists (in order), each one of `allowed`. Errors
// (kInvalidArgument): a name not in `allowed` ("'x' is not one of a, b, c").
Result<std::vector<std::string>> parse_name_list(std::string_view text,
                                                 const std::vector<std::string>& allowed);

// Parses a count people type with an SI suffix: "100000", "100k", "12M", "1.5M", "2G" (k = 1e3,
// M = 1e6, G = 1e9; K is taken as k). The value must be a whole number in [0, 1e15].
// Errors (kInvalidArgument): empty text, an unknown suffix, a fraction left over ("1.5"), a
// negative or too large value.
Result<int64_t> parse_count(std::string_view text);

// Formats a duration given in ns for people, choosing ns/us/ms/s: "850 ns", "4.33 ms", "2.00 s".
std::string format_duration_ns(double ns);

// The UTC calendar date of a Unix time in ms, ISO 8601's extended form: "2026-01-30". A time
// before the epoch rounds down to its day (-1 ms is "1969-12-31").
std::string format_utc_date(int64_t unix_ms);

}  // namespace knee::core
