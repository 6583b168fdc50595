// Probe: the phases of single HTTP requests, one at a time, like curl's --write-out timers
// (`knee probe URL`; seed 001, "To measure real network timings yourself").
//
// Each attempt sends one request and waits for the whole response before the next attempt
// starts. Its timeline is recorded as cumulative times from the attempt's start, the semantics
// of curl's --write-out variables (curl manual, "--write-out"; time_posttransfer since curl
// 8.10.0), so a knee probe and `curl -w` can be compared column by column:
//
//   phase            curl variable        the time from the attempt's start until
//   kNameLookup      time_namelookup      getaddrinfo() returned (DNS, /etc/hosts, or a literal)
//   kConnect         time_connect         the TCP handshake completed (connect became writable)
//   kAppConnect      time_appconnect      the TLS handshake completed; never: knee has no TLS
//   kPreTransfer     time_pretransfer     the request was about to be written
//   kPostTransfer    time_posttransfer    its last byte was handed to the kernel (send returned)
//   kStartTransfer   time_starttransfer   the first response byte was read
//   kTotal           time_total           the response was complete (RFC 9112 §6.3 framing)
//
// so kNameLookup <= kConnect <= kPreTransfer <= kPostTransfer <= kStartTransfer <= kTotal. The
// duration of one phase is the difference of two neighbours (phase_ns()).
// A new connection is opened for every attempt (its DNS lookup and TCP connect are measured
// each time) unless `reuse`: then attempts share one keep-alive connection, and only an attempt
// that opens a connection (the first, or one after the server closed it) does the lookup and the
// connect; on the others those two phases did not happen (kNotMeasured) and time 0 is when the
// request starts to be written.
//
// I/O: blocking calls and poll(2) on one non-blocking socket, one request at a time; each
// attempt has `timeout` from its start to the response's last byte.
// Failures: an unusable option, and a DNS or connect failure on the first attempt (the target
// cannot be reached at all), are returned as Status. Everything that goes wrong on the wire
// after that (connect refused later, the server closing early, garbage that is not HTTP/1.1, a
// timeout) is a failed attempt with its kind and cause, recorded like the run's errors
// (core/run_stats.h kinds: connect, closed_before_response, eof_mid_response, read, write,
// timeout, parse), never an exception or a crash.
//
// Thread-safety: run_probe() is blocking and uses only the calling thread; results are values.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"
#include "core/status.h"
#include "http/request.h"

namespace knee::engine {

enum class ProbePhase {
  kNameLookup,
  kConnect,
  kAppConnect,
  kPreTransfer,
  kPostTransfer,
  kStartTransfer,
  kTotal,
};
inline constexpr size_t kProbePhaseCount = 7;
inline constexpr int64_t kNotMeasured = -1;  // the phase did not happen in this attempt

// Names for output: "namelookup" (the JSON key, curl's variable without "time_"), the curl
// variable "time_namelookup", and words for people ("DNS lookup").
const char* probe_phase_key(ProbePhase p);
const char* probe_phase_curl_name(ProbePhase p);
const char* probe_phase_words(ProbePhase p);

struct ProbeOptions {
  http::RequestSpec request;                      // http:// URL, method, headers, body
  int count = 10;                                 // -n: attempts, 1..100,000
  bool reuse = false;                             // --reuse: one keep-alive connection
  core::Nanos timeout = std::chrono::seconds(5);  // per attempt, > 0

  // The first invalid field as kInvalidArgument naming the flag, or ok. An https URL gives
  // "https is not supported yet: knee has no TLS; use http://".
  core::Status validate() const;
};

// One attempt: cumulative times from its start in ns (curl semantics above), kNotMeasured for
// phases that did not happen (lookup and connect on a reused connection, TLS always, and every
// phase after a failure).
struct ProbeAttempt {
  std::array<int64_t, kProbePhaseCount> at_ns{};  // indexed by ProbePhase
  bool ok = false;                                // a complete response arrived (any status code)
  bool new_connection = false;  // this attempt opened a connection (lookup + connect)
  int status_code = 0;          // the response's status, 0 when none arrived
  uint64_t body_bytes = 0;      // decoded body bytes received
  std::string error_kind;       // when !ok: "connect", "closed_before_response", ...
  std::string error_cause;      // when !ok: "ECONNREFUSED", "EOF", a parse reason, "timeout"

  int64_t at(ProbePhase p) const { return at_ns[static_cast<size_t>(p)]; }
  // Duration of phase p alone: at(p) minus the time of the latest earlier phase that was
  // measured (0 for the first), in ns; kNotMeasured when p was not.
  int64_t phase_ns(ProbePhase p) const;
};

// Statistics of one phase over the successful attempts that measured it, ns, from
// core::Histogram::for_latency() (3 significant digits; nearest-rank percentiles).
struct ProbePhaseStats {
  int64_t count = 0;  // attempts that measured the phase
  int64_t min_ns = 0;
  int64_t median_ns = 0;
  int64_t p99_ns = 0;
  int64_t max_ns = 0;
  // The same of the phase's own duration (ProbeAttempt::phase_ns).
  int64_t phase_min_ns = 0;
  int64_t phase_median_ns = 0;
  int64_t phase_p99_ns = 0;
};

struct ProbeResult {
  std::string address;                 // the address the first attempt resolved, "127.0.0.1:80"
  std::vector<ProbeAttempt> attempts;  // every attempt, in order; size() == options.count
  int connections = 0;                 // TCP connections opened
  int ok = 0;                          // attempts with a complete response
  int failed = 0;                      // attempts that failed; ok + failed == attempts.size()
  std::map<int, int> status;           // complete responses per status code
  std::map<std::string, int> errors;   // failed attempts per "<kind>: <cause>"
  std::array<ProbePhaseStats, kProbePhaseCount> phases{};  // indexed by ProbePhase
};

// Probes options.request.url options.count times (semantics above) and summarises the phases.
// Errors: kInvalidArgument (validate()); kUnavailable when the first attempt cannot resolve the
// host or connect: "cannot reach URL: connect 127.0.0.1:1: Connection refused (ECONNREFUSED)";
// kIoError when the OS refuses a socket.
core::Result<ProbeResult> run_probe(const ProbeOptions& options,
                                    const core::ClockSource& clock = core::steady_clock_source());

// The phase statistics of `attempts` (exposed for tests): every successful attempt that
// measured a phase counts in it.
std::array<ProbePhaseStats, kProbePhaseCount> summarise_probe(
    const std::vector<ProbeAttempt>& attempts);

}  // namespace knee::engine
