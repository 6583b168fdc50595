// The HTML report: one self-contained page that works offline (uPlot, our script and our style
// are embedded at build time, report/web_assets.h; no src or href names a network address).
//
// The page is rendered from the run or sweep document (document.h), the same value whether it was
// just measured or read back from a file, so `knee run/sweep --html FILE` and `knee report
// FILE.json -o FILE.html` are one code path: a saved result re-renders exactly as first shown.
//
// The page: a header (what was measured, when, with which parameters), verdicts and warnings in
// plain words (knee, saturated resource, USL, Little's law, client-bound, warm-up, errors), a
// summary table in HTML that reads without JavaScript, the host context, and charts drawn by
// web/report.js with uPlot from one <script type="application/json" id="knee-data"> block (every
// '<' in it escaped as \u003c, so no "</script>" can end it early). After drawing, report.js
// writes a self-check into <pre id="knee-selftest">: the charts, each series' label and count of
// non-null points, and the errors caught (window.onerror, console.error); the browser test in
// tests/report reads it.
//
// The knee-data block (html_chart_data()): {"kind": "run"|"sweep"|"compare", "charts": [chart]}
// with chart = {
//   "id", "title", "caption":   strings (the caption says how to read it),
//   "x": {"label", "scale"}:     scale "linear", "log2" or "percentile" (x = 1 / (1 - p/100),
//                                log10; p from 0 to 99.999 %),
//   "axes": [{"label", "scale"}]: one or two y axes (the second on the right), scale "linear" or
//                                "log2",
//   "log_toggle": bool,          a checkbox switches the first y axis to log10,
//   "data": [[x...], [y...]...]: uPlot's aligned columns, x increasing, null where a series has
//                                no point (and between sweep levels on the time axis),
//   "series": [{"label", "axis" (0|1), "style": "points"|"line"|"dash"|"band", "of"}], one per
//                                y column; a "band" series is the thin edge of a range, in the
//                                colour of series "of",
//   "bands" (optional): [{"upper", "lower", "of"}]: the area between two series (indexes into
//                                "series") shaded in the colour of series "of" (min-max of
//                                repeats in a compare),
//   "marks": [{"x", "label", "style"}]: vertical lines, style "knee", "secondary" (Kneedle) or
//                                "level" (where a sweep level starts on the time axis),
//   "point_labels": [{"series", "x", "text"}]: words drawn at a series' point at x (the saturated
//                                resource of a level)
// }.
// Units: latency in ms, throughput in req/s, CPU in % of one core.
//
// Charts of a sweep (ids): "throughput" (measured X against N, the USL curve when fitted, the knee
// marked), "latency" (p50 and p99 against N), "little" (X * mean R against N with the diagonal;
// open loop: against the mean number in the system), "spectrum" (latency against percentile, one
// series per level), "over_time" (per-second throughput and p99, when the JSON has intervals),
// "cpu" (server process, busiest client thread and all CPUs per level, the saturated resource
// named at each level). Of a run: "spectrum" and "over_time". Of a compare: "throughput" and
// "p99" of both sweeps against N, each with the min-max band of its repeats.
//
// An unknown figure reads "-" in the table and gives no point in a chart.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "report/document.h"

namespace knee::report {

// Points of the USL curve on the throughput chart, log-spaced over the measured concurrencies.
inline constexpr int kUslCurvePoints = 60;

// The knee-data block of the page for one run or sweep.
nlohmann::json html_chart_data(const RunDocument& doc);
nlohmann::json html_chart_data(const SweepDocument& doc);

// The whole page for one run or sweep.
std::string render_html(const RunDocument& doc);
std::string render_html(const SweepDocument& doc);

// The page of an external benchmark's sweep (`knee sweep --exec`): throughput, latency and
// Little's law against the level, the table as the text prints it.
nlohmann::json html_chart_data(const ExternalSweepDocument& doc);
std::string render_html(const ExternalSweepDocument& doc);

// The page of any document read back (`knee report FILE.json -o`): a run's or a sweep's. Errors
// (kInvalidArgument, naming `label`): any other kind.
core::Result<std::string> render_html(const Document& doc, const std::string& label);

// Two sweeps overlaid (compare): throughput and p99 against N of each, labelled `label_a` and
// `label_b` (e.g. the file names). Errors (kInvalidArgument): one sweep closed loop, the other
// open loop.
core::Result<nlohmann::json> compare_chart_data(const SweepDocument& a, const SweepDocument& b,
                                                const std::string& label_a,
                                                const std::string& label_b);
core::Result<std::string> render_compare_html(const SweepDocument& a, const SweepDocument& b,
                                              const std::string& label_a,
                                              const std::string& label_b);
// The same for two documents read back. Errors: either is not a sweep, or their modes differ.
core::Result<std::string> render_compare_html(const Document& a, const Document& b,
                                              const std::string& label_a,
                                              const std::string& label_b);

}  // namespace knee::report
