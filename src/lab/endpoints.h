// The lab server's request vocabulary as pure functions: which endpoint a request-target names,
// its query parameters read the way the seeds' Node servers read them (URLSearchParams), the
// ms= value of /slow-async and /slow-sync, JSON string literals as JSON.stringify writes them,
// and the CPU burn that stands in for a handler's computation.
//
// No I/O and no clock except burn_thread_cpu(). Thread-safety: all functions are reentrant; the
// output strings belong to the caller (append-only, so a reused buffer never reallocates once it
// is big enough).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace knee::lab {

// The endpoints of the lab server (seeds 000 and 002).
enum class Route : uint8_t {
  kNone,       // unknown path: 404
  kTracking,   // /tracking?no=ID: wait, CPU share, tracking record
  kFast,       // /fast: small JSON at once
  kSlowAsync,  // /slow-async?ms=N: a timer wait; the loop stays free
  kSlowSync,   // /slow-sync?ms=N: N ms of CPU on the loop thread, blocking it
  kHealth,     // /health: instance, uptime and request counters
  kStall,      // /stall?every=T&for=S&ms=D: answers in D ms, but holds arrivals in stall windows
  kShipment,   // /tracking/{no}: the shipment service's read flow (GET, HEAD)
  kEvents,     // /events: the shipment service's write flow (POST)
  kBilling,    // /billing/run?date=D&method=row|set: the batch flow (POST)
  kMetrics,    // /metrics: Prometheus text exposition (lab/metrics.h)
  kCount,      // the number of routes, not a route
};

// The tracking number of a /tracking/{no} path ("/tracking/KN0000000042" -> "KN0000000042");
// empty for any other path.
std::string_view shipment_of(std::string_view path);

// A request-target split into path and query (without '?', and without any '#fragment').
// Absolute-form targets ("http://host:port/p?q", RFC 9112 §3.2.2) lose scheme and authority;
// an empty path becomes "/".
struct Target {
  std::string_view path;
  std::string_view query;
};
Target split_target(std::string_view target);

// The endpoint a path names (exact match, case-sensitive).
Route route_of(std::string_view path);

// Finds the first parameter called `name` in `query` ("a=1&b=2") decoded as
// application/x-www-form-urlencoded (WHATWG URL: '+' is a space, %XX a byte; a malformed escape
// stays as written). On a match, writes the decoded value into `out` (replacing its contents) and
// returns true; `out` may hold any bytes, including invalid UTF-8. Returns false when absent
// (`out` then holds scratch bytes).
bool find_query_param(std::string_view query, std::string_view name, std::string& out);

// Largest ms= accepted by /slow-async and /slow-sync, in ms.
inline constexpr double kMaxSlowMs = 60000;
// Default when ms= is absent or empty (the seed's `Number(ms || 50)`), in ms.
inline constexpr double kDefaultSlowMs = 50;

// Parses the ms= value: digits with an optional fraction ("20", "0.5"), 0 to kMaxSlowMs.
// Empty text gives kDefaultSlowMs. nullopt for anything else ("abc", "-1", "1e3", "60001").
std::optional<double> parse_ms(std::string_view text);

// How long /stall holds a request that arrives `since_start` after the server started: requests
// arriving in the last `window` of every `period` (counted from server start) are held until that
// window ends; all others are answered after `answer`. A test target for coordinated omission:
// a closed-loop client with one connection sees one slow sample per window, an open-loop client
// sees every request that was due during the window. Requires 0 <= window <= period, period > 0.
core::Nanos stall_delay(core::Nanos since_start, core::Nanos period, core::Nanos window,
                        core::Nanos answer);

// Milliseconds as a duration, rounded to the nearest ns.
core::Nanos ms_to_nanos(double ms);

// Appends `bytes` as a JSON string literal (with quotes), the way JSON.stringify writes a string
// that URLSearchParams decoded as UTF-8: '"', '\\' and control characters are escaped, and each
// maximal invalid UTF-8 subsequence becomes U+FFFD. The result is always valid UTF-8 JSON.
void append_json_string(std::string& out, std::string_view bytes);

// Spins until the calling thread has used `cpu` more CPU time (CLOCK_THREAD_CPUTIME_ID, not wall
// time: time the thread spends preempted does not count). Returns at once for cpu <= 0.
void burn_thread_cpu(core::Nanos cpu);

}  // namespace knee::lab
