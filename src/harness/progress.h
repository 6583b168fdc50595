// Live progress on the terminal for `knee run`, `knee sweep`, `knee capacity` and `knee lab data`:
// one line on stderr, rewritten in place (carriage return, clear to end of line) about every 250
// ms, with the run or level (i/n), the job's elapsed and remaining time, the current req/s
// (responses over the last second), the p99 of the measured phase so far and its errors. The
// figures come from engine::RunControl::on_progress (engine/live.h); the engine itself never
// prints.
//
// When: only when stderr is a terminal (isatty(2)) and --quiet is not given. In a pipe, a file or
// a CI log there is no progress at all: stdout and stderr carry results and errors only.
// Colour: knee uses none. --no-color (declared in cli/progress.h) and the NO_COLOR environment
// variable (no-color.org) are accepted so scripts can pass them, and keep meaning "no colour" if
// colour is ever added.
//
// The sweep's growing table (report::live_sweep_row): as each level finishes, its row (concurrency,
// requests, throughput, median, p99, errors) is printed on stderr above the progress line, under a
// header, so the table grows row by row. Decision: these live rows are progress, not results. At
// the end the block is erased (cursor up, clear to end of screen) when stdout is the same kind of
// terminal and the block still fits on the screen, and the final report follows on stdout with the
// full table (widths from every row, the knee marked, the analysis), exactly as it prints without a
// terminal. When stdout goes elsewhere (a file, a pipe) the live rows stay on the terminal.
//
// Thread-safety: none; used from the thread that calls engine::run_load (the callback runs
// there).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "core/clock.h"
#include "engine/live.h"

namespace knee::harness {

struct ProgressOptions {
  bool quiet = false;  // --quiet: no progress output, results only
};

class Progress {
 public:
  // Enabled when stderr is a terminal and not options.quiet.
  explicit Progress(const ProgressOptions& options);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }

  // A new run starts: `label` names it ("level 3/7 c=4", "run 2/3"); `planned` is its warm-up
  // plus measured phase; `after` the planned time of the runs still to come after it (0 when
  // unknown or none), for the remaining-time estimate.
  void begin_run(std::string label, core::Nanos planned, core::Nanos after);
  // Redraws the line from a snapshot of the current run (engine::RunControl::on_progress).
  void update(const engine::LiveSnapshot& snapshot);
  // The handler to put in engine::RunControl::on_progress; empty when disabled.
  std::function<void(const engine::LiveSnapshot&)> handler();

  // Draws a bar for work counted in units ("rows"): `label`, the fraction done, done/total and
  // the rate since `started`. For jobs that are not load runs (`knee lab data`).
  void show_count(std::string_view label, int64_t done, int64_t total, std::string_view unit,
                  core::TimePoint started);
  // Prints `line` on stderr above the progress line (a sweep row), counting it for finish().
  void print_line(const std::string& line);
  // print_line() for each line of `text` (lines end with '\n').
  void print_lines(const std::string& text);
  // Erases the progress line (before something else prints to the terminal).
  void clear();
  // Erases the progress line and, when stdout is a terminal too and they fit on the screen, the
  // lines print_line() printed. Called before the final report; the destructor calls it too.
  void finish();

 private:
  void draw(const std::string& text);

  bool enabled_ = false;
  bool drawn_ = false;  // a progress line is on the screen
  int live_lines_ = 0;  // lines print_line() printed since the start
  core::TimePoint job_start_{};
  std::string label_;
  core::Nanos planned_{0};
  core::Nanos after_{0};
  std::deque<std::pair<core::Nanos, uint64_t>> recent_;  // (elapsed, responses), last ~1 s
};

}  // namespace knee::harness
