#include "cli/output.h"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <sstream>

#include "report/hlog.h"

namespace knee::cli {

using core::Status;

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

report::LoadParams load_params(const engine::LoadOptions& o, const std::string& url_template,
                               int repeats) {
  auto secs = [](core::Nanos d) { return std::chrono::duration<double>(d).count(); };
  report::LoadParams p;
  p.url = url_template;
  p.method = o.request.method;
  p.duration_s = secs(o.duration);
  p.warmup_s = secs(o.warmup);
  p.timeout_s = secs(o.timeout);
  p.grace_s = secs(o.grace_or_default());
  p.threads = o.threads;
  p.repeats = repeats;
  p.arrival = o.arrival == engine::Arrival::kPoisson ? "poisson" : "uniform";
  return p;
}

HostObserver::HostObserver(std::optional<int> server_pid, std::chrono::milliseconds every)
    : server_pid_(server_pid), sampler_(probes::FsReader("/"), every) {}

Status OutputFile::open(std::string_view flag, std::string path) {
  flag_ = flag;
  path_ = std::move(path);
  if (path_.empty() || path_ == "-") return Status::ok();
  file_.open(path_);
  if (!file_) {
    return Status::invalid_argument(
        fmt::format("{}: cannot write '{}'; give a writable file path", flag_, path_));
  }
  return Status::ok();
}

Status OutputFile::write(const std::string& text) {
  if (path_ == "-") {
    fmt::print("{}", text);
    return Status::ok();
  }
  file_ << text;
  file_.close();
  if (!file_) return Status::io_error(fmt::format("{}: cannot write {}", flag_, path_));
  return Status::ok();
}

Status OutputFile::write_hlog(const std::vector<std::vector<core::RunResult>>& levels,
                              bool sweep) {
  if (Status s = report::write_levels_log(file_, levels, sweep); !s) return s;
  file_.close();
  if (!file_) return Status::io_error(fmt::format("{}: cannot write '{}'", flag_, path_));
  return Status::ok();
}

core::Result<std::string> read_text_file(std::string_view flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::invalid_argument(
        fmt::format("{}: cannot read '{}': {}", flag, path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string json_text(const report::Document& doc) { return report::to_json(doc).dump(2) + "\n"; }

}  // namespace knee::cli
