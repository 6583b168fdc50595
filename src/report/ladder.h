// The latency ladder as a document and as text (`knee ladder`, seed 001): the measured rungs of
// probes/ladder.h and the computed network floor of analysis/network_floor.h, sorted into rungs
// of magnitude: ns, us, ms, tens of ms, each with the method that makes its number true.
//
// Pure functions. Thread-safety: plain values.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/network_floor.h"
#include "probes/ladder.h"
#include "report/document.h"

namespace knee::report {

// The document of one ladder: `only` the groups that ran (with "network" when the floor is
// computed), `routes` those whose floors it computes (analysis::network_floor, sorted here by the
// fibre floor), `fibre_factor` the fraction of c (must pass analysis::check_fibre_factor).
LadderDocument ladder_document(const probes::LadderRun& run,
                               const std::vector<analysis::Route>& routes, double fibre_factor,
                               std::vector<std::string> only, std::string started_at,
                               double duration_s);

// The ladder as text: the context (host, build, clock, --dir, method), each magnitude's rungs
// with median, p99, best and ops/s, the network floors, SQLite's plans, how each rung was
// measured, and the warnings.
std::string render_ladder_text(const LadderDocument& doc);

}  // namespace knee::report
