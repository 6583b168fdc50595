// `knee report FILE...`: reads saved results back. For now HdrHistogram interval logs (.hlog,
// written by --hlog or any HdrHistogram tool): percentiles of the whole log, a time range or a
// tag, merged exactly across files. Two knee JSON results (a.json b.json): side by side, level by
// level (report/compare.h).
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/load_flags.h"
#include "report/compare.h"
#include "report/hlog.h"
#include "report/html.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using core::Status;

std::string summary_line(const core::Histogram& h) {
  auto ms = [&](double p) { return static_cast<double>(h.value_at_percentile(p)) / 1e6; };
  return fmt::format(
      "{:>9}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}",
      h.count(), static_cast<double>(h.min()) / 1e6, h.count() ? h.mean() / 1e6 : 0.0, ms(50),
      ms(90), ms(99), ms(99.9), ms(99.99), static_cast<double>(h.max()) / 1e6);
}

bool has_suffix(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The JSON document in `path`. Errors: kInvalidArgument naming the file when it cannot be read
// or parsed.
core::Result<nlohmann::json> read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::invalid_argument("report: cannot read '" + path + "'");
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Status::invalid_argument(fmt::format("report: '{}' is not valid JSON", path));
  }
  return doc;
}

class ReportCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("files", files_,
                   "HdrHistogram interval logs (.hlog) to read and merge, or two knee run/sweep "
                   "JSON results (a.json b.json) to compare side by side")
        ->required();
    app.add_option("--from", from_s_, "Only intervals starting at or after S seconds (log time)");
    app.add_option("--to", to_s_, "Only intervals starting at or before S seconds (log time)");
    app.add_option("--tag", tag_, "Only intervals with this tag (e.g. c32 for a sweep level)");
    app.add_flag("--json", json_,
                 "Print the merged latency summary (ns), or the comparison, as JSON");
    app.add_option("-o,--output", html_path_,
                   "With one knee JSON result (FILE.json): write its HTML report to this file; "
                   "with two (a.json b.json): an HTML page overlaying their curves");
  }

  int run() override {
    if (!html_path_.empty()) return write_html_report();
    if (files_.size() == 2 && has_suffix(files_[0], ".json") && has_suffix(files_[1], ".json")) {
      return compare_json_files(files_[0], files_[1]);
    }
    std::vector<report::HlogInterval> all;
    for (const std::string& file : files_) {
      if (has_suffix(file, ".json")) {  // one JSON result, or a JSON beside a log
        return report_failure(Status::invalid_argument(fmt::format(
            "report: '{}' is a JSON result: add -o FILE.html to render it as a report, or give "
            "two .json files to compare them",
            file)));
      }
      if (file.size() < 5 || file.substr(file.size() - 5) != ".hlog") {
        return report_failure(Status::invalid_argument(fmt::format(
            "report: '{}' is not an .hlog file; knee report reads HdrHistogram interval logs "
            "(knee run/sweep --hlog FILE.hlog), or compares two JSON results (a.json b.json)",
            file)));
      }
      std::ifstream in(file);
      if (!in)
        return report_failure(Status::invalid_argument("report: cannot read '" + file + "'"));
      auto intervals = report::read_hlog(in);
      if (!intervals) {
        return report_failure(Status::invalid_argument(
            fmt::format("report: {}: {}", file, intervals.status().message())));
      }
      for (report::HlogInterval& i : *intervals) all.push_back(std::move(i));
    }
    std::optional<std::string_view> tag;
    if (tag_) tag = *tag_;
    core::Histogram merged = report::merge_intervals(all, from_s_, to_s_, tag);
    if (json_) {
      fmt::print("{}\n", report::latency_json(merged).dump(2));
      return kExitOk;
    }
    fmt::print("{} interval{} from {} file{}\n", all.size(), all.size() == 1 ? "" : "s",
               files_.size(), files_.size() == 1 ? "" : "s");
    fmt::print("{:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}   (ms)\n", "count",
               "min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max");
    // One line per tag, in order of first appearance, then everything selected together.
    std::vector<std::string> tags;
    for (const report::HlogInterval& i : all) {
      if (std::find(tags.begin(), tags.end(), i.tag) == tags.end()) tags.push_back(i.tag);
    }
    if (tags.size() > 1 && !tag_) {
      for (const std::string& t : tags) {
        core::Histogram h = report::merge_intervals(all, from_s_, to_s_, std::string_view(t));
        fmt::print("{}  {}\n", summary_line(h), t.empty() ? "(untagged)" : t);
      }
    }
    fmt::print("{}  {}\n", summary_line(merged), tag_ ? *tag_ : "all");
    return kExitOk;
  }

 private:
  // `knee report a.json b.json`: two run or sweep results side by side, level by level
  // (report/compare.h), as text or with --json as JSON.
  int compare_json_files(const std::string& a_path, const std::string& b_path) {
    std::vector<report::CompareSide> sides;
    for (const std::string& path : {a_path, b_path}) {
      auto doc = read_json_file(path);
      if (!doc) return report_failure(doc.status());
      auto side = report::compare_side_from_json(*doc, path);
      if (!side) {
        return report_failure(Status::invalid_argument("report: " + side.status().message()));
      }
      sides.push_back(std::move(side).value());
    }
    auto comparison = report::compare(std::move(sides[0]), std::move(sides[1]));
    if (!comparison) {
      return report_failure(Status::invalid_argument("report: " + comparison.status().message()));
    }
    if (json_) {
      fmt::print("{}\n", report::compare_to_json(*comparison).dump(2));
    } else {
      fmt::print("{}", report::render_compare_text(*comparison));
    }
    return kExitOk;
  }

  // `knee report FILE.json -o FILE.html` (the same renderer as run/sweep --html), or
  // `knee report a.json b.json -o FILE.html` (two sweeps overlaid).
  int write_html_report() {
    const bool all_json = std::all_of(files_.begin(), files_.end(),
                                      [](const std::string& f) { return has_suffix(f, ".json"); });
    if (files_.size() > 2 || !all_json) {
      return report_failure(Status::invalid_argument(
          "-o: give one knee JSON result (FILE.json) for its HTML report, or two (a.json b.json) "
          "to overlay them"));
    }
    std::vector<nlohmann::json> docs;
    for (const std::string& path : files_) {
      auto doc = read_json_file(path);
      if (!doc) return report_failure(doc.status());
      docs.push_back(std::move(doc).value());
    }
    auto html = docs.size() == 1
                    ? report::render_html(docs[0])
                    : report::render_compare_html(docs[0], docs[1], files_[0], files_[1]);
    if (!html) return report_failure(html.status());
    std::ofstream out;
    if (Status s = open_output("-o", html_path_, out); !s) return report_failure(s);
    out << *html;
    out.close();
    if (!out) return report_failure(Status::io_error("-o: cannot write " + html_path_));
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
