#include "report/probe.h"

#include <fmt/format.h>

namespace knee::report {
namespace {

using core::RequestPhase;

constexpr RequestPhase kPhases[] = {
    RequestPhase::kNameLookup,  RequestPhase::kConnect,      RequestPhase::kAppConnect,
    RequestPhase::kPreTransfer, RequestPhase::kPostTransfer, RequestPhase::kStartTransfer,
    RequestPhase::kTotal,
};

std::string ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

}  // namespace

ProbeDocument probe_document(std::string target, ProbeParams params,
                             const core::RequestPhasesResult& r, std::string started_at) {
  ProbeDocument d;
  d.target = std::move(target);
  d.started_at = std::move(started_at);
  d.address = r.address;
  d.params = std::move(params);
  d.times = "cumulative from each attempt's start, as curl --write-out";
  d.ok = r.ok;
  d.failed = r.failed;
  d.connections = r.connections;
  if (!r.tls_version.empty()) {
    TlsFigures t;
    t.version = r.tls_version;
    t.cipher = r.tls_cipher;
    t.alpn = r.alpn;
    t.resumed = static_cast<uint64_t>(r.tls_resumed);
    const core::PhaseStats& h = r.phases[static_cast<size_t>(RequestPhase::kAppConnect)];
    const auto handshakes = static_cast<uint64_t>(std::max<int64_t>(h.count, 0));
    t.full = handshakes - std::min(t.resumed, handshakes);
    d.tls = t;
  }
  for (const auto& [code, n] : r.status) d.status[std::to_string(code)] = n;
  d.errors = r.errors;
  for (RequestPhase p : kPhases) {
    const core::PhaseStats& s = r.phases[static_cast<size_t>(p)];
    PhaseFigures f;
    f.curl = core::request_phase_curl_name(p);
    f.words = core::request_phase_words(p);
    f.count = s.count;
    if (s.count > 0) {
      f.min_ns = s.min_ns;
      f.median_ns = s.median_ns;
      f.p99_ns = s.p99_ns;
      f.max_ns = s.max_ns;
      f.phase_min_ns = s.phase_min_ns;
      f.phase_median_ns = s.phase_median_ns;
      f.phase_p99_ns = s.phase_p99_ns;
    }
    d.phases[core::request_phase_key(p)] = std::move(f);
  }
  for (const core::RequestAttempt& a : r.attempts) {
    AttemptFigures f;
    f.ok = a.ok;
    f.new_connection = a.new_connection;
    if (a.status_code != 0) f.status = a.status_code;
    f.body_bytes = a.body_bytes;
    for (RequestPhase p : kPhases) {
      const int64_t at = a.at(p);
      f.at_ns[core::request_phase_key(p)] =
          at == core::kNotMeasured ? std::nullopt : std::optional<int64_t>(at);
    }
    if (!a.ok) f.error = a.error_kind + ": " + a.error_cause;
    d.attempts.push_back(std::move(f));
  }
  return d;
}

std::string render_probe_text(const ProbeDocument& d) {
  const int count = d.params.count;
  std::string out =
      fmt::format("knee probe: {} {} ({}), {} attempt{}, {}\n", d.params.method, d.target,
                  d.address, count, count == 1 ? "" : "s",
                  d.params.reuse ? "one keep-alive connection (--reuse)" : "a new connection each");
  out += fmt::format("{:43}{:>27}  {:>9}\n", "", "cumulative ms, like curl -w", "phase");
  out += fmt::format("{:<15}{:<20}{:>6}  {:>9}{:>9}{:>9}  {:>9}\n", "phase", "curl -w", "count",
                     "min", "median", "p99", "median");
  for (RequestPhase p : kPhases) {
    auto it = d.phases.find(core::request_phase_key(p));
    if (it == d.phases.end()) continue;
    const PhaseFigures& s = it->second;
    if (s.count == 0 || !s.min_ns || !s.median_ns || !s.p99_ns || !s.phase_median_ns) {
      out += fmt::format("{:<15}{:<20}{:>6}  {:>9}{:>9}{:>9}  {:>9}{}\n", s.words, s.curl, 0, "-",
                         "-", "-", "-",
                         p == RequestPhase::kAppConnect && !d.tls ? "   (http: no TLS)" : "");
      continue;
    }
    out += fmt::format("{:<15}{:<20}{:>6}  {:>9}{:>9}{:>9}  {:>9}\n", s.words, s.curl, s.count,
                       ms(*s.min_ns), ms(*s.median_ns), ms(*s.p99_ns), ms(*s.phase_median_ns));
  }
  std::string codes;
  for (const auto& [code, n] : d.status) {
    codes += fmt::format("{}{}: {}", codes.empty() ? "" : ", ", code, n);
  }
  out += fmt::format("{} of {} complete{}; {} failed; {} connection{} opened\n", d.ok,
                     d.attempts.size(), codes.empty() ? "" : " (status " + codes + ")", d.failed,
                     d.connections, d.connections == 1 ? "" : "s");
  if (d.tls) {
    out += fmt::format("TLS: {} {}, ALPN {}; {} handshake{} resumed a session\n", d.tls->version,
                       d.tls->cipher, d.tls->alpn.empty() ? "none" : d.tls->alpn, d.tls->resumed,
                       d.tls->resumed == 1 ? "" : "s");
  }
  for (const auto& [cause, n] : d.errors) out += fmt::format("  failed: {} x{}\n", cause, n);
  return out;
}

}  // namespace knee::report
