#include "harness/result_files.h"

#include <fmt/core.h>

#include <utility>

#include "core/clock.h"
#include "report/html.h"

namespace knee::harness {

using core::Status;

Status FileOrStdout::open(std::string_view flag, std::string path,
                          const std::vector<std::string>& inputs) {
  to_stdout_ = path == "-";
  return to_stdout_ ? Status::success() : file_.open(flag, std::move(path), inputs);
}

Status FileOrStdout::write(const std::string& text) {
  if (!to_stdout_) return file_.write(text);
  fmt::print("{}", text);
  return Status::success();
}

Status HlogOutput::open(std::string path, const std::vector<std::string>& inputs) {
  if (path == "-") {
    return Status::invalid_argument(
        "--hlog: give a file name; the log is written to it as the run goes, and stdout carries "
        "the text");
  }
  return file_.open("--hlog", std::move(path), inputs);
}

void HlogOutput::write(const engine::IntervalRecord& record) {
  if (!error_) return;
  if (!writer_) {
    start_epoch_s_ = record.measure_start_epoch_s;
    writer_.emplace(file_.stream(), start_epoch_s_);
  }
  error_ = writer_->write_interval(
      record.measure_start_epoch_s - start_epoch_s_ + record.summary.start_s,
      record.summary.length_s, record.latency_ns, tag_);
}

Status HlogOutput::finish() {
  if (!error_) return error_.with_context("--hlog");
  if (!writer_) {  // no interval completed: the header alone, timed now
    const double now_s = core::wall_clock_s();
    writer_.emplace(file_.stream(), now_s);
  }
  return file_.commit();
}

Status ResultFiles::open(const OutputPaths& paths) {
  // Regression (a new user's trial): --html - printed the text table before the page, so the
  // page saved from stdout began with 14 lines of text. A document on stdout replaces the text.
  document_to_stdout_ = paths.json == "-" || paths.html == "-";
  const std::pair<const char*, const std::string*> named[] = {
      {"--json", &paths.json}, {"--html", &paths.html}, {"--hlog", &paths.hlog}};
  if (paths.json == "-" && paths.html == "-") {
    return Status::invalid_argument(
        "--json - and --html -: both on stdout would mix two documents; give one of them a file");
  }
  for (size_t i = 0; i < 3; ++i) {
    for (size_t k = i + 1; k < 3; ++k) {
      const std::string& a = *named[i].second;
      const std::string& b = *named[k].second;
      // Regression (a new user's trial): './a.json' or a link beside 'a.json' was let through,
      // and the second file written replaced the first.
      if (a.empty() || a == "-" || b.empty() || b == "-" || !core::same_path(a, b)) continue;
      return Status::invalid_argument(
          a == b ? fmt::format("{} and {}: both name '{}'; give each its own file", named[i].first,
                               named[k].first, a)
                 : fmt::format("{} and {}: both name one file ('{}' and '{}'); give each its "
                               "own file",
                               named[i].first, named[k].first, a, b));
    }
  }
  if (Status s = json.open("--json", paths.json, paths.inputs); !s) return s;
  if (Status s = html.open("--html", paths.html, paths.inputs); !s) return s;
  return hlog.open(paths.hlog, paths.inputs);
}

void ResultFiles::connect(engine::PlanControl& control) {
  if (!hlog.wanted()) return;
  control.on_interval = [this](const engine::IntervalRecord& r) { hlog.write(r); };
}

Status ResultFiles::write(const report::Document& doc, const std::string& text) {
  if (hlog.wanted()) {
    if (Status s = hlog.finish(); !s) return s;
  }
  if (!document_to_stdout_) fmt::print("{}", text);
  if (json.wanted()) {
    if (Status s = json.write(json_text(doc)); !s) return s;
  }
  if (html.wanted()) {
    auto page = report::render_html(doc, "--html");
    if (!page) return page.status();
    if (Status s = html.write(*page); !s) return s;
  }
  return Status::success();
}

std::string json_text(const report::Document& doc) { return report::to_json(doc).dump(2) + "\n"; }

}  // namespace knee::harness
