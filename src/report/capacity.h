// `knee capacity` as a document and as text: the bracket-then-bisect search of
// analysis/capacity.h, one row per step as it completes, then the answer and its bracket.
//
// Pure functions. Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "analysis/capacity.h"
#include "report/document.h"

namespace knee::report {

CapacityDocument capacity_document(const analysis::CapacityResult& result, std::string target,
                                   std::vector<std::string> slos, CapacityParams params);
CapacityStepFigures capacity_step(const analysis::CapacityStep& step);

// The search's header (what passes, how many runs per step) and the table's column heads.
std::string capacity_header(const CapacityDocument& doc);
// One step's row: rate, phase, p99 of each run, errors, the lowest achieved rate, the result.
std::string capacity_row(const CapacityStepFigures& step);
// The answer: the capacity and its bracket, whether it was confirmed, and capacity_limit_line.
// Empty when there is no answer (interrupted, or even the start rate failed: the caller says so
// on stderr).
std::string capacity_conclusion(const CapacityDocument& doc);
// Whose limit bounded the answer, from the runs' limits (CapacityLimit, the saturation rule on
// knee's own figures): at the lowest failing rate, knee's client ("measured knee's client, not
// the target": the answer is a floor), the target gone, or the client keeping up (the failure is
// the target's); with no failing rate, the client at its limit at the answer. "" when no run was
// judged (files from before the limit was kept).
std::string capacity_limit_line(const CapacityDocument& doc);
// Header, every row and the conclusion: what `knee capacity` printed.
std::string render_capacity_text(const CapacityDocument& doc);

// Whole req/s without decimals, otherwise one decimal.
std::string rate_text(double rps);

}  // namespace knee::report
