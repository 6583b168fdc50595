// Request phases: the timeline of single HTTP requests, one at a time, like curl's --write-out
// timers (what `knee probe URL` prints; seed 001, "To measure real network timings yourself").
//
// Each attempt sends one request and waits for the whole response before the next attempt
// starts. Its timeline is recorded as cumulative times from the attempt's start, the semantics
// of curl's --write-out variables (curl manual, "--write-out"; time_posttransfer since curl
// 8.10.0), so `knee probe` and `curl -w` can be compared column by column:
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
// Thread-safety: measure_request_phases() is blocking and uses only the calling thread; results are
// values.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"
#include "core/request_phase.h"
#include "core/status.h"
#include "http/request.h"
#include "net/tls.h"

namespace knee::engine {

using core::kNotMeasured;
using core::kRequestPhaseCount;
using core::PhaseStats;
using core::request_phase_curl_name;
using core::request_phase_key;
using core::request_phase_words;
using core::RequestAttempt;
using core::RequestPhase;
using core::RequestPhasesResult;
using core::summarise_attempts;

struct RequestPhasesOptions {
  http::RequestSpec request;                      // http:// URL, method, headers, body
  int count = 10;                                 // -n: attempts, 1..100,000
  bool reuse = false;                             // --reuse: one keep-alive connection
  core::Nanos timeout = std::chrono::seconds(5);  // per attempt, > 0
  net::TlsOptions tls;                            // https: verification, versions, resumption

  // The first invalid field, or ok: kInvalidArgument with field() "url" (a scheme other than
  // http and https), "count" or "timeout".
  core::Status validate() const;
};

// Requests options.request.url options.count times (semantics above) and summarises the phases.
// Errors: kInvalidArgument (validate(), or TLS files that cannot be read); kUnavailable when the
// first attempt cannot resolve the host, connect or (https) shake hands: "cannot reach URL:
// connect 127.0.0.1:1: Connection refused (ECONNREFUSED)", "cannot reach URL: TLS handshake:
// certificate verify failed: hostname mismatch";
// kIoError when the OS refuses a socket.
core::Result<RequestPhasesResult> measure_request_phases(
    const RequestPhasesOptions& options,
    const core::ClockSource& clock = core::steady_clock_source());

}  // namespace knee::engine
