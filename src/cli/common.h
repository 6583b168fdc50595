// Small helpers shared by the measuring subcommands.
#pragma once

#include <string>

#include "engine/load.h"
#include "report/model.h"

namespace knee::cli {

// The current time as ISO 8601 UTC, "2026-11-29T17:52:00Z".
std::string now_iso8601();

// LoadParams for the report from the options the engine ran with.
report::LoadParams load_params(const engine::LoadOptions& o, const std::string& url_template);

}  // namespace knee::cli
