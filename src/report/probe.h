// `knee probe URL` as a document and as text: the phases of single requests (core/request_phase.h)
// with min, median and p99 per phase, cumulative like curl's --write-out timers.
//
// Pure functions. Thread-safety: plain values.
#pragma once

#include <string>

#include "core/request_phase.h"
#include "report/document.h"

namespace knee::report {

// target: the normalised URL; params: as asked (method, count, reuse, timeout).
ProbeDocument probe_document(std::string target, ProbeParams params,
                             const core::RequestPhasesResult& result, std::string started_at);

// The phase table (cumulative ms, like curl -w, and each phase's own median), the attempts'
// outcome and the failures by cause.
std::string render_probe_text(const ProbeDocument& doc);

}  // namespace knee::report
