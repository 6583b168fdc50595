#include "harness/progress.h"

#include <fmt/core.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace knee::harness {

namespace {

// "9.6s", "42s", "1m05s", "1h02m".
std::string time_text(core::Nanos d) {
  const double s = std::max(0.0, std::chrono::duration<double>(d).count());
  if (s < 10) return fmt::format("{:.1f}s", s);
  if (s < 60) return fmt::format("{:.0f}s", std::floor(s));
  const auto whole = static_cast<int64_t>(s);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, whole % 3600 / 60);
}

// Columns of the terminal on stderr (80 when unknown).
size_t terminal_columns() {
  winsize w{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 80;
}

size_t terminal_rows() {
  winsize w{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_row > 0) return w.ws_row;
  return 24;
}

}  // namespace

Progress::Progress(const ProgressOptions& options)
    : enabled_(!options.quiet && isatty(STDERR_FILENO) == 1),
      job_start_(core::steady_clock_source().now()) {}

Progress::~Progress() { finish(); }

void Progress::begin_run(std::string label, core::Nanos planned, core::Nanos after) {
  label_ = std::move(label);
  planned_ = planned;
  after_ = after;
  recent_.clear();
  if (enabled_) draw(fmt::format("{}  starting", label_));
}

std::function<void(const engine::LiveSnapshot&)> Progress::handler() {
  if (!enabled_) return {};
  return [this](const engine::LiveSnapshot& s) { update(s); };
}

void Progress::update(const engine::LiveSnapshot& s) {
  if (!enabled_) return;
  recent_.emplace_back(s.elapsed, s.responses);
  while (recent_.size() > 2 && s.elapsed - recent_[1].first >= std::chrono::seconds(1)) {
    recent_.pop_front();
  }
  std::string rate = "- req/s";
  if (recent_.size() >= 2) {
    const double dt = std::chrono::duration<double>(s.elapsed - recent_.front().first).count();
    if (dt > 0) {
      rate = fmt::format("{:.0f} req/s",
                         static_cast<double>(s.responses - recent_.front().second) / dt);
    }
  }
  // The measured phase is the usual state; the others are named.
  const char* phase = s.phase == engine::LivePhase::kWarmup    ? " warm-up"
                      : s.phase == engine::LivePhase::kMeasure ? ""
                                                               : " finishing";
  const core::Nanos elapsed = core::steady_clock_source().now() - job_start_;
  const core::Nanos left = std::max(core::Nanos(0), planned_ - s.elapsed) + after_;
  std::string p99 = s.latency_count > 0
                        ? fmt::format("{:.2f}ms", static_cast<double>(s.p99_ns) / 1e6)
                        : std::string("-");
  // Fits 80 columns for a sweep level: "level 3/7 c=4  9.6s elapsed, ~12s left  4186 req/s  p99
  // 10.69ms  errors 0".
  draw(fmt::format("{}{}  {} elapsed, ~{} left  {}  p99 {}  errors {}", label_, phase,
                   time_text(elapsed), time_text(left), rate, p99, s.errors));
}

void Progress::show_count(std::string_view label, int64_t done, int64_t total,
                          std::string_view unit, core::TimePoint started) {
  if (!enabled_) return;
  constexpr size_t kWidth = 30;
  const double fraction =
      total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 1;
  const size_t filled = static_cast<size_t>(fraction * kWidth);
  const double seconds = std::chrono::duration<double>(core::Clock::now() - started).count();
  draw(fmt::format("{} [{}{}] {:3.0f}%  {}/{} {}  {:.0f} {}/s", label, std::string(filled, '#'),
                   std::string(kWidth - filled, '.'), fraction * 100, done, total, unit,
                   seconds > 0 ? static_cast<double>(done) / seconds : 0.0, unit));
}

void Progress::draw(const std::string& text) {
  // One terminal line at most: a wrapped line could not be rewritten in place.
  const size_t columns = terminal_columns();
  std::string line = text.size() >= columns ? text.substr(0, columns - 1) : text;
  fmt::print(stderr, "\r{}\033[K", line);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::print_line(const std::string& line) {
  if (!enabled_) return;
  const size_t columns = terminal_columns();
  fmt::print(stderr, "\r{}\033[K\n", line.size() >= columns ? line.substr(0, columns - 1) : line);
  std::fflush(stderr);
  ++live_lines_;
  drawn_ = false;  // the next begin_run() or update() draws the progress line again
}

void Progress::print_lines(const std::string& text) {
  size_t from = 0;
  for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
    print_line(text.substr(from, nl - from));
  }
}

void Progress::clear() {
  if (!enabled_ || !drawn_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

void Progress::finish() {
  if (!enabled_) return;
  clear();
  if (live_lines_ > 0 && isatty(STDOUT_FILENO) == 1 &&
      static_cast<size_t>(live_lines_) < terminal_rows()) {
    fmt::print(stderr, "\033[{}F\033[J", live_lines_);  // up to the block's first line, clear
    std::fflush(stderr);
  }
  live_lines_ = 0;
}

}  // namespace knee::harness
