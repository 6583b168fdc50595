// `knee report FILE...`: reads saved results back.
//   knee report a.json            the result as it was first printed (any kind knee writes)
//   knee report a.json -o a.html  its HTML report (a run or a sweep)
//   knee report a.json b.json     two runs or sweeps side by side, level by level (compare.h);
//                                 -o overlays two sweeps' curves in HTML
//   knee report x.hlog ...        percentiles of HdrHistogram interval logs, per tag and merged
//                                 exactly, optionally of a time range or one tag
//   knee report merge a.json b.json ... -o all.json
//                                 the parts of one load, run by separate processes, merged
//                                 exactly into one result (report/merge.h)
// --json prints the comparison, the log summary or the document itself as JSON.
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "cli/output.h"
#include "cli/report_inputs.h"
#include "report/analyse.h"
#include "report/compare.h"
#include "report/hlog.h"
#include "report/html.h"
#include "report/merge.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using core::Result;
using core::Status;

Result<report::Document> read_document(const std::string& path) {
  auto text = read_text_file("report", path);
  if (!text) return text.status();
  auto doc = report::parse_document(*text, path);
  if (!doc) return doc.status().with_context("report");
  return doc;
}

class ReportCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("files", files_,
                   "Saved knee JSON results (one to re-render it, two runs or sweeps to compare "
                   "them), HdrHistogram interval logs (.hlog) to read and merge, or 'merge' "
                   "then the JSON results of the parts of one load (--part, one per load host)")
        ->required()
        ->type_name("FILE");
    app.add_option("--from", from_s_, "Only intervals starting at or after S seconds (log time)");
    app.add_option("--to", to_s_, "Only intervals starting at or before S seconds (log time)");
    app.add_option("--tag", tag_, "Only intervals with this tag (e.g. c32 for a sweep level)");
    app.add_flag("--json", json_,
                 "Print the document, the comparison or the merged latency summary as JSON");
    app.add_option("-o,--output", html_path_,
                   "With one run or sweep (FILE.json): write its HTML report to this file; with "
                   "two sweeps (a.json b.json): an HTML page overlaying their curves; after "
                   "merge: the merged result, JSON (or its HTML report for a .html name)")
        ->type_name("FILE");
  }

  int run() override {
    if (files_.front() == "merge") return merge();
    if (Status s = check_report_inputs(files_, html_path_); !s) return report_failure(s);
    const bool all_json = std::all_of(files_.begin(), files_.end(),
                                      [](const std::string& f) { return f.ends_with(".json"); });
    if (all_json && files_.size() <= 2) {
      std::vector<report::Document> docs;
      for (const std::string& path : files_) {
        auto doc = read_document(path);
        if (!doc) return report_failure(doc.status());
        docs.push_back(std::move(doc).value());
      }
      if (!html_path_.empty()) return write_html(docs);
      if (docs.size() == 1) {
        fmt::print("{}", json_ ? json_text(docs[0]) : report::render_text(docs[0]));
        return kExitOk;
      }
      return compare(docs[0], docs[1]);
    }
    if (all_json) {
      return report_failure(Status::invalid_argument(
          "report: give one or two knee JSON results (a.json [b.json]), or HdrHistogram logs "
          "(.hlog)"));
    }
    return read_logs();
  }

 private:
  // Two runs or sweeps side by side, level by level, as text or with --json as JSON.
  int compare(const report::Document& a, const report::Document& b) {
    auto c = report::compare(a, files_[0], b, files_[1]);
    if (!c) return report_failure(c.status().with_context("report"));
    fmt::print("{}", json_ ? json_text(*c) : report::render_compare_text(*c));
    return kExitOk;
  }

  // One run or sweep's page (the renderer of run/sweep --html), or two sweeps overlaid.
  int write_html(const std::vector<report::Document>& docs) {
    auto page = docs.size() == 1
                    ? report::render_html(docs[0], files_[0])
                    : report::render_compare_html(docs[0], docs[1], files_[0], files_[1]);
    if (!page) return report_failure(page.status());
    FileOrStdout out;
    if (Status s = out.open("-o", html_path_, files_); !s) return report_failure(s);
    if (Status s = out.write(*page); !s) return report_failure(s);
    return kExitOk;
  }

  // The parts of one load merged (report/merge.h): printed, and with -o written as JSON (or HTML).
  int merge() {
    const std::vector<std::string> inputs(files_.begin() + 1, files_.end());
    if (inputs.empty()) {
      return report_failure(Status::invalid_argument(
          "report merge: give the JSON results of two or more parts of one load: knee report "
          "merge a.json b.json ... -o all.json"));
    }
    std::vector<report::MergePart> parts;
    for (const std::string& path : inputs) {
      auto doc = read_document(path);
      if (!doc) return report_failure(doc.status());
      parts.push_back({path, std::move(doc).value(), std::nullopt});
    }
    auto merged = report::merge_documents(parts);
    if (!merged) return report_failure(merged.status().with_context("report merge"));
    if (!html_path_.empty()) {
      auto page = html_path_.ends_with(".html") ? report::render_html(*merged, html_path_)
                                                : Result<std::string>(json_text(*merged));
      if (!page) return report_failure(page.status());
      FileOrStdout out;
      if (Status s = out.open("-o", html_path_, inputs); !s) return report_failure(s);
      if (Status s = out.write(*page); !s) return report_failure(s);
    }
    fmt::print("{}", json_ ? json_text(*merged) : report::render_text(*merged));
    return kExitOk;
  }

  // --from and --to: seconds of log time, 0 or more, from no later than to.
  Status check_range() const {
    for (const auto& [flag, value] : {std::pair{"--from", from_s_}, {"--to", to_s_}}) {
      if (value && !(*value >= 0)) {
        return Status::invalid_argument(fmt::format(
            "{}: {} is before the log's start; give seconds of log time, 0 or more", flag, *value));
      }
    }
    if (from_s_ && to_s_ && *from_s_ > *to_s_) {
      return Status::invalid_argument(fmt::format(
          "--from {} --to {}: the range ends before it starts; give --from no later than --to",
          *from_s_, *to_s_));
    }
    return Status::success();
  }

  // --tag names a tag some interval carries; else the tags there are.
  Status check_tag(const std::vector<report::HlogInterval>& all) const {
    if (!tag_) return Status::success();
    const std::vector<std::string> tags = report::interval_tags(all);
    if (std::find(tags.begin(), tags.end(), *tag_) != tags.end()) return Status::success();
    std::string known;
    for (const std::string& t : tags) {
      if (!t.empty()) known += (known.empty() ? "" : ", ") + t;
    }
    return Status::invalid_argument(
        known.empty()
            ? fmt::format("--tag: no interval is tagged '{}'; these logs carry no tags "
                          "(leave --tag out)",
                          *tag_)
            : fmt::format("--tag: no interval is tagged '{}'; the tags are {}", *tag_, known));
  }

  int read_logs() {
    if (Status s = check_range(); !s) return report_failure(s);
    std::vector<report::HlogInterval> all;
    for (size_t f = 0; f < files_.size(); ++f) {
      const std::string& file = files_[f];
      if (!file.ends_with(".hlog")) {
        return report_failure(Status::invalid_argument(fmt::format(
            "report: '{}' is not an .hlog file; knee report reads HdrHistogram interval logs "
            "(knee run/sweep --hlog FILE.hlog), or one or two JSON results (a.json [b.json])",
            file)));
      }
      for (size_t g = 0; g < f; ++g) {
        if (core::same_file(files_[g], file)) {
          return report_failure(Status::invalid_argument(fmt::format(
              "report: '{}' is given twice; its intervals would be counted twice", file)));
        }
      }
      std::ifstream in(file);
      if (!in)
        return report_failure(Status::invalid_argument("report: cannot read '" + file + "'"));
      auto intervals = report::read_hlog(in);
      if (!intervals) {  // a log that does not parse is bad input, as a bad JSON result is
        return report_failure(
            Status::invalid_argument(intervals.status().with_context("report: " + file).message()));
      }
      for (report::HlogInterval& i : *intervals) all.push_back(std::move(i));
    }
    if (Status s = check_tag(all); !s) return report_failure(s);
    std::optional<std::string_view> tag;
    if (tag_) tag = *tag_;
    const core::Histogram merged = report::merge_intervals(all, from_s_, to_s_, tag);
    if (merged.count() == 0) {  // zeros would read as measured latencies
      return report_failure(Status::invalid_argument(
          all.empty() ? "report: the logs hold no intervals (a run that ended before its first "
                        "second writes only the header)"
                      : fmt::format("report: none of the {} intervals has a latency value in the "
                                    "range and tag asked for (--from, --to, --tag)",
                                    all.size())));
    }
    if (json_) {
      fmt::print("{}", json_text(report::LatencyReportDocument{report::latency_summary(merged)}));
    } else {
      fmt::print("{}", report::render_hlog_summary(all, files_.size(), from_s_, to_s_, tag));
    }
    return kExitOk;
  }

  std::string html_path_;
  std::vector<std::string> files_;
  std::optional<double> from_s_;
  std::optional<double> to_s_;
  std::optional<std::string> tag_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace knee::cli
