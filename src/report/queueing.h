// `knee model little|mm1|mmc|usl` as documents and as text: the queueing calculator of seed 000
// ("The Relation", "The Cost of Approaching Saturation"), extended. The numbers come from
// analysis/ (little.h, queueing.h, usl.h, kneedle.h); here they become documents, text, and the
// (N, X) points are read from a CSV or a saved sweep.
//
// Errors are kInvalidArgument naming the flag they came from, so the command line can print
// them as they are. Pure functions apart from nothing: no I/O (the caller reads files).
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/usl.h"
#include "core/status.h"
#include "report/document.h"

namespace knee::report {

inline constexpr const char* kLittleSource =
    "J. D. C. Little, \"A Proof for the Queuing Formula: L = lambda W\", Operations Research "
    "9(3), 1961";
inline constexpr const char* kMm1Source =
    "M/M/1: Gross, Shortle, Thompson, Harris, \"Fundamentals of Queueing Theory\", 4th ed., "
    "section 2.2";
inline constexpr const char* kMmcSource =
    "M/M/c: Gross, Shortle, Thompson, Harris, \"Fundamentals of Queueing Theory\", 4th ed., "
    "section 2.3 (Erlang C by the recursion on Erlang B)";
inline constexpr const char* kUslSource =
    "N. J. Gunther, \"Guerrilla Capacity Planning\" (2007); B. Schwartz, \"Practical Scalability "
    "Analysis with the Universal Scalability Law\" (2015); fit by GSL multifit_nlinear "
    "(Levenberg-Marquardt)";
inline constexpr const char* kKneedleSource =
    "Satopaa, Albrecht, Irwin, Raghavan, \"Finding a 'Kneedle' in a Haystack\", ICDCS "
    "Workshops 2011";

// Little's law with exactly two of n, x_rps and r_ns given; solves the third. Errors
// (invalid_field "n", "x", "r"): not exactly two given, a negative or non-finite value, R or X
// of 0 where the law divides by it.
core::Result<LittleDocument> little_document(std::optional<double> n, std::optional<double> x_rps,
                                             std::optional<double> r_ns);
std::string render_little_text(const LittleDocument& d);

// The (N, X) points of `text` read from `label`: a knee sweep document when it starts with '{'
// (closed loop only: "b.json is an open-loop sweep; `model usl` needs a closed-loop sweep or a
// CSV of concurrency,throughput"), else a CSV of 'N,X' lines, the header line
// 'concurrency,throughput' first optional. Errors name `flag`, the file and the line.
core::Result<std::vector<analysis::ThroughputPoint>> read_points(const std::string& flag,
                                                                 const std::string& label,
                                                                 const std::string& text);

// The level with the largest median throughput (the first of equals); nullptr when no level has
// a throughput above 0 (or a finite one).
const LevelFigures* highest_throughput_level(const SweepDocument& sweep);

// The sweep document in `text` read from `label`. Errors: not JSON, not knee's, or another kind
// of document ("b.json is a run; `COMMAND` needs NEEDS"), or a sweep without levels.
core::Result<SweepDocument> read_sweep(const std::string& label, const std::string& text,
                                       std::string_view command, std::string_view needs);

// mu from a saved sweep (its largest throughput), with where it came from. Errors: not a sweep,
// no level with a throughput above 0.
core::Result<std::pair<double, MuSource>> mu_from_sweep(const std::string& label,
                                                        const std::string& text);

// The seed's utilisation table for mu and the headroom of each peak rate. Errors (from
// analysis/queueing.h): mu or a peak not > 0.
core::Result<Mm1Document> mm1_document(double mu_rps, MuSource source,
                                       const std::vector<double>& peaks_rps);
std::string render_mm1_text(const Mm1Document& d);

// M/M/c for c servers of mu each at arrival rate lambda. Errors: the queue is not stable.
core::Result<MmcDocument> mmc_document(int servers, double mu_rps, double lambda_rps);
std::string render_mmc_text(const MmcDocument& d);

// The USL fitted to `points` read from `from` (a file name, for the text), with Kneedle as a
// secondary knee. Errors: those of analysis::fit_usl.
core::Result<UslDocument> usl_document(const std::vector<analysis::ThroughputPoint>& points,
                                       std::string from);
std::string render_usl_text(const UslDocument& d);

}  // namespace knee::report
