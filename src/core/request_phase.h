// The timeline of single HTTP requests, one at a time, as curl's --write-out timers report it:
// the phases, one attempt's cumulative times, and their statistics. The measurement itself is
// engine/request_phases.h (`knee probe`); report/probe.h renders these values.
//
// Phase semantics (curl manual, "--write-out"): each time is cumulative from the attempt's start,
//   kNameLookup <= kConnect <= kPreTransfer <= kPostTransfer <= kStartTransfer <= kTotal,
// and one phase's own duration is the difference from the latest earlier phase measured.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace knee::core {

enum class RequestPhase {
  kNameLookup,
  kConnect,
  kAppConnect,
  kPreTransfer,
  kPostTransfer,
  kStartTransfer,
  kTotal,
};
inline constexpr size_t kRequestPhaseCount = 7;
inline constexpr int64_t kNotMeasured = -1;  // the phase did not happen in this attempt

// Names for output: "namelookup" (the JSON key, curl's variable without "time_"), the curl
// variable "time_namelookup", and words for people ("DNS lookup").
const char* request_phase_key(RequestPhase p);
const char* request_phase_curl_name(RequestPhase p);
const char* request_phase_words(RequestPhase p);

// One attempt: cumulative times from its start in ns (curl semantics above), kNotMeasured for
// phases that did not happen (lookup and connect on a reused connection, TLS always, and every
// phase after a failure).
struct RequestAttempt {
  std::array<int64_t, kRequestPhaseCount> at_ns{};  // indexed by RequestPhase
  bool ok = false;                                  // a complete response arrived (any status code)
  bool new_connection = false;  // this attempt opened a connection (lookup + connect)
  int status_code = 0;          // the response's status, 0 when none arrived
  uint64_t body_bytes = 0;      // decoded body bytes received
  std::string error_kind;       // when !ok: "connect", "closed_before_response", ...
  std::string error_cause;      // when !ok: "ECONNREFUSED", "EOF", a parse reason, "timeout"

  int64_t at(RequestPhase p) const { return at_ns[static_cast<size_t>(p)]; }
  // Duration of phase p alone: at(p) minus the time of the latest earlier phase that was
  // measured (0 for the first), in ns; kNotMeasured when p was not.
  int64_t phase_ns(RequestPhase p) const;
};

// Statistics of one phase over the successful attempts that measured it, ns, from
// Histogram::for_latency() (3 significant digits; nearest-rank percentiles).
struct PhaseStats {
  int64_t count = 0;  // attempts that measured the phase
  int64_t min_ns = 0;
  int64_t median_ns = 0;
  int64_t p99_ns = 0;
  int64_t max_ns = 0;
  // The same of the phase's own duration (RequestAttempt::phase_ns).
  int64_t phase_min_ns = 0;
  int64_t phase_median_ns = 0;
  int64_t phase_p99_ns = 0;
};

struct RequestPhasesResult {
  std::string address;                   // the address the first attempt resolved, "127.0.0.1:80"
  std::vector<RequestAttempt> attempts;  // every attempt, in order; size() == options.count
  int connections = 0;                   // TCP connections opened
  int ok = 0;                            // attempts with a complete response
  int failed = 0;                        // attempts that failed; ok + failed == attempts.size()
  std::map<int, int> status;             // complete responses per status code
  std::map<std::string, int> errors;     // failed attempts per "<kind>: <cause>"
  std::array<PhaseStats, kRequestPhaseCount> phases{};  // indexed by RequestPhase
  // https: what the first handshake agreed on ("TLSv1.3", its cipher, ALPN's choice or ""),
  // and how many handshakes resumed a session; empty for http.
  std::string tls_version, tls_cipher, alpn;
  int tls_resumed = 0;
};

// The phase statistics of `attempts` (exposed for tests): every successful attempt that
// measured a phase counts in it.
std::array<PhaseStats, kRequestPhaseCount> summarise_attempts(
    const std::vector<RequestAttempt>& attempts);

}  // namespace knee::core
