#include "core/request_phase.h"

#include <algorithm>

#include "core/histogram.h"

namespace knee::core {
namespace {

constexpr size_t idx(RequestPhase p) { return static_cast<size_t>(p); }

PhaseStats stats_of(const Histogram& at, const Histogram& phase) {
  PhaseStats s;
  s.count = at.count();
  s.min_ns = at.min();
  s.median_ns = at.value_at_percentile(50);
  s.p99_ns = at.value_at_percentile(99);
  s.max_ns = at.max();
  s.phase_min_ns = phase.min();
  s.phase_median_ns = phase.value_at_percentile(50);
  s.phase_p99_ns = phase.value_at_percentile(99);
  return s;
}

}  // namespace

const char* request_phase_key(RequestPhase p) {
  switch (p) {
    case RequestPhase::kNameLookup:
      return "namelookup";
    case RequestPhase::kConnect:
      return "connect";
    case RequestPhase::kAppConnect:
      return "appconnect";
    case RequestPhase::kPreTransfer:
      return "pretransfer";
    case RequestPhase::kPostTransfer:
      return "posttransfer";
    case RequestPhase::kStartTransfer:
      return "starttransfer";
    case RequestPhase::kTotal:
      return "total";
  }
  return "?";
}

const char* request_phase_curl_name(RequestPhase p) {
  switch (p) {
    case RequestPhase::kNameLookup:
      return "time_namelookup";
    case RequestPhase::kConnect:
      return "time_connect";
    case RequestPhase::kAppConnect:
      return "time_appconnect";
    case RequestPhase::kPreTransfer:
      return "time_pretransfer";
    case RequestPhase::kPostTransfer:
      return "time_posttransfer";
    case RequestPhase::kStartTransfer:
      return "time_starttransfer";
    case RequestPhase::kTotal:
      return "time_total";
  }
  return "?";
}

const char* request_phase_words(RequestPhase p) {
  switch (p) {
    case RequestPhase::kNameLookup:
      return "DNS lookup";
    case RequestPhase::kConnect:
      return "TCP connect";
    case RequestPhase::kAppConnect:
      return "TLS handshake";
    case RequestPhase::kPreTransfer:
      return "ready to send";
    case RequestPhase::kPostTransfer:
      return "request sent";
    case RequestPhase::kStartTransfer:
      return "first byte";
    case RequestPhase::kTotal:
      return "complete";
  }
  return "?";
}

int64_t RequestAttempt::phase_ns(RequestPhase p) const {
  const int64_t end = at(p);
  if (end == kNotMeasured) return kNotMeasured;
  for (size_t i = idx(p); i-- > 0;) {
    if (at_ns[i] != kNotMeasured) return end - at_ns[i];
  }
  return end;
}

std::array<PhaseStats, kRequestPhaseCount> summarise_attempts(
    const std::vector<RequestAttempt>& attempts) {
  std::array<PhaseStats, kRequestPhaseCount> out{};
  Histogram at = Histogram::for_latency();
  Histogram phase = Histogram::for_latency();
  for (size_t i = 0; i < kRequestPhaseCount; ++i) {
    at.reset();
    phase.reset();
    const auto p = static_cast<RequestPhase>(i);
    for (const RequestAttempt& a : attempts) {
      if (!a.ok || a.at(p) == kNotMeasured) continue;
      at.record(std::max<int64_t>(0, a.at(p)));
      phase.record(std::max<int64_t>(0, a.phase_ns(p)));
    }
    out[i] = stats_of(at, phase);
  }
  return out;
}

}  // namespace knee::core
