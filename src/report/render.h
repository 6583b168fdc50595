// Renderers of the result model (model.h): terminal text and JSON. Pure functions: same model,
// same output, so they are tested against golden files.
//
// JSON of a run: top-level requests (completed responses in the measured phase), duration_s,
// throughput_rps (successful responses/s), concurrency, latency_ns {min, mean, p50, p90, p99,
// p999, max}, errors {kind: count}, plus the fields listed in docs/output.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/model.h"

namespace knee::report {

// A human summary of one run, like wrk's: requests, throughput, latency percentiles, errors by
// kind and cause, and N against X * mean R.
std::string render_run_text(const RunReport& report);
nlohmann::json run_to_json(const RunReport& report);

// The sweep table with the seed's columns (concurrency, requests, throughput, median, p99) and
// X * mean R (Little's N), followed by the knee verdict with its rule, Little's law and warnings.
std::string render_sweep_text(const SweepReport& report);
nlohmann::json sweep_to_json(const SweepReport& report);

// Plain-words notes on how to read a run: coordinated omission in a closed loop with a stall,
// an open-loop rate that was not achieved. Empty when there is nothing to say.
std::vector<std::string> run_notes(const core::RunResult& r);

// Rows of cells as columns two spaces apart, widths from the content, trailing spaces trimmed;
// one line per row. Columns are right-aligned except column c where `left[c]` is true.
std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& left = {});

// Latency summary of one histogram in ns: {min, mean, p50, p90, p99, p999, max}.
nlohmann::json latency_json(const core::Histogram& h);

// The host context as the "host" object of every JSON result (docs/output.md): hostname,
// cpu_model, logical_cpus, kernel, os, governor, turbo, compiler, build_type, cxx_flags,
// clock_resolution_ns, load_avg_1m (null when unreadable), warnings.
nlohmann::json host_to_json(const probes::HostContext& h);

}  // namespace knee::report
