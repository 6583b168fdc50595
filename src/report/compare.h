// Comparing two saved results (`knee report a.json b.json`): two `knee run --json` or `knee sweep
// --json` files side by side, level by level, with the ratio b/a of each figure and whether the
// difference is larger than the run-to-run noise.
//
// Levels are matched by concurrency N (closed loop) or by target arrival rate (open loop); a
// run file is one level. Figures: throughput (req/s) and latency p50, p90, p99, p99.9 (ns), each
// as the median with its min-max range over the repeats (the `ranges` of docs/output.md).
//
// The verdict per figure (seed 002, principle 4: one run is not a measurement):
//   - both levels measured with repeats (>= 2 each): "different" when the two min-max ranges do
//     not overlap (b's whole range above or below a's), otherwise "within the run-to-run range";
//   - otherwise "cannot tell": without repeats there is no run-to-run range to compare with.
// A non-overlap of two small ranges is the conservative reading of "larger than the noise"; it
// says nothing about significance in the statistical sense.
//
// Pure: documents in, a ComparisonDocument (document.h) out; no I/O. Thread-safety: plain
// values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "report/document.h"

namespace knee::report {

// One level of one file: its key and its figures' ranges.
struct CompareLevel {
  double key = 0;  // concurrency N, or the target rate in req/s (open loop)
  int repeats = 1;
  Range throughput_rps;
  Range p50_ns;
  Range p90_ns;
  Range p99_ns;
  Range p999_ns;
};

// What one file says, reduced to what a comparison needs.
struct CompareSide {
  std::string label;   // the file name as given
  std::string kind;    // "run", "sweep" or "external_sweep"
  bool open = false;   // open loop: levels keyed by rate
  std::string target;  // as recorded
  std::string started_at;
  int threads = 0;  // client threads (params.threads)
  double duration_s = 0;
  int repeats = 1;                   // params.repeats
  std::string protocol;              // report::protocol_name() of the file's params
  std::vector<CompareLevel> levels;  // in the file's order
  std::string unit;                  // an external sweep's throughput unit; "" for req/s
  std::string stages;                // a run's --stages as given; "" for a constant rate
  std::string mix;                   // --mix as recorded (params.mix); "" for one request
  std::string io;                    // how requests were written: "epoll" or "uring" (--io)
};

// The side of a comparison that a run or sweep document gives. Errors (kInvalidArgument, naming
// `label`): any other kind of document ("a.json is a latency ladder; `report a.json b.json` needs
// two run or sweep results").
core::Result<CompareSide> compare_side(const Document& doc, const std::string& label);

enum class Difference {
  kHigher,      // ranges do not overlap, b above a
  kLower,       // ranges do not overlap, b below a
  kWithin,      // ranges overlap: within the run-to-run range
  kCannotTell,  // one side has no repeats
};
// "b higher", "b lower", "within run-to-run range", "cannot tell (no repeats)".
std::string_view difference_text(Difference d);
// "higher", "lower", "within", "cannot_tell" (the JSON values), and back (unknown words:
// kCannotTell).
std::string_view difference_name(Difference d);
Difference difference_of(std::string_view name);

// The verdict for one figure from the two ranges and their repeat counts (rule above).
Difference classify(const Range& a, int a_repeats, const Range& b, int b_repeats);

// The figures compared, in the order they are shown: "throughput_rps", "p50_ns", "p90_ns",
// "p99_ns", "p999_ns".
inline constexpr const char* kComparedFigures[] = {"throughput_rps", "p50_ns", "p90_ns", "p99_ns",
                                                   "p999_ns"};

// Matches the levels of a and b by key: levels in both (by increasing key) with each figure's
// ranges, ratio b/a (empty when a's median is 0) and difference_name(); the keys only one side
// has. Errors (kInvalidArgument): one side closed loop and the other open loop (their levels are
// not comparable).
core::Result<ComparisonDocument> compare(const CompareSide& a, const CompareSide& b);

// The same for two documents read back (`knee report a.json b.json`): each must be a run or a
// sweep (compare_side), with the same loop.
core::Result<ComparisonDocument> compare(const Document& a, const std::string& label_a,
                                         const Document& b, const std::string& label_b);

// The comparison's verdict table, header row first: per level and figure the level (on its first
// row), the figure, a and b as median (min-max), b/a and the verdict. The text and the HTML
// compare print the same rows.
std::vector<std::vector<std::string>> compare_rows(const ComparisonDocument& c);

// The comparison as text: a header per file (target, start, threads, duration, repeats), then
// per level a table of figures: a, b, b/a and the verdict; then the levels only one file has.
std::string render_compare_text(const ComparisonDocument& c);

}  // namespace knee::report
