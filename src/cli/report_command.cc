// `knee report FILE...`: reads saved results back. For now HdrHistogram interval logs (.hlog,
// written by --hlog or any HdrHistogram tool): percentiles of the whole log, a time range or a
// tag, merged exactly across files.
#include <fmt/core.h>

#include <fstream>
#include <map>
#include <optional>

#include "cli/command.h"
#include "cli/load_flags.h"
#include "report/hlog.h"
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

class ReportCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("files", files_, "HdrHistogram interval logs (.hlog) to read and merge")
        ->required();
    app.add_option("--from", from_s_, "Only intervals starting at or after S seconds (log time)");
    app.add_option("--to", to_s_, "Only intervals starting at or before S seconds (log time)");
    app.add_option("--tag", tag_, "Only intervals with this tag (e.g. c32 for a sweep level)");
    app.add_flag("--json", json_, "Print the merged latency summary as JSON (ns)");
  }

  int run() override {
    std::vector<report::HlogInterval> all;
    for (const std::string& file : files_) {
      if (file.size() < 5 || file.substr(file.size() - 5) != ".hlog") {
        return report_failure(Status::invalid_argument(fmt::format(
            "report: '{}' is not an .hlog file; knee report reads HdrHistogram interval logs "
            "(knee run/sweep --hlog FILE.hlog) so far",
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
  std::vector<std::string> files_;
  std::optional<double> from_s_;
  std::optional<double> to_s_;
  std::optional<std::string> tag_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace knee::cli
