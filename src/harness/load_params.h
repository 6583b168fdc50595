// The report's record of a load: the parameters the engine ran with, and when it started.
// Thread-safety: pure functions but for the clock now_iso8601 reads.
#pragma once

#include <string>

#include "engine/load.h"
#include "report/document.h"

namespace knee::harness {

// The current time as ISO 8601 UTC, "2026-11-29T17:52:00Z".
std::string now_iso8601();

// The report's record of the load the engine ran with: `url_template` as typed (placeholders
// unexpanded), durations in seconds, the protocol, mix, stages, part, shipments and TLS only
// where they apply.
report::LoadParams load_params(const engine::LoadOptions& o, const std::string& url_template,
                               int repeats);

}  // namespace knee::harness
