#include "cli/common.h"

#include <fmt/core.h>

#include <ctime>
#include <fstream>

#include "report/hlog.h"

namespace knee::cli {

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

report::LoadParams load_params(const engine::LoadOptions& o, const std::string& url_template) {
  auto secs = [](core::Nanos d) { return std::chrono::duration<double>(d).count(); };
  report::LoadParams p;
  p.url = url_template;
  p.method = o.request.method;
  p.duration_s = secs(o.duration);
  p.warmup_s = secs(o.warmup);
  p.timeout_s = secs(o.timeout);
  p.grace_s = secs(o.grace_or_default());
  p.threads = o.threads;
  p.arrival = o.arrival == engine::Arrival::kPoisson ? "poisson" : "uniform";
  return p;
}

core::Status write_hlog(const std::string& path, const std::vector<TaggedRun>& runs) {
  std::ofstream out(path);
  if (!out) return core::Status::io_error("--hlog: cannot write '" + path + "'");
  double start = runs.empty() ? 0.0 : runs.front().run->measure_start_epoch_s;
  report::HlogWriter writer(out, start);
  for (const TaggedRun& tagged : runs) {
    const double offset = tagged.run->measure_start_epoch_s - start;
    for (const core::LatencyInterval& i : tagged.run->intervals) {
      if (core::Status s =
              writer.write_interval(offset + i.start_s, i.length_s, i.latency_ns(), tagged.tag);
          !s) {
        return s;
      }
    }
  }
  out.close();
  if (!out) return core::Status::io_error("--hlog: cannot write '" + path + "'");
  return core::Status::ok();
}

core::Status open_output(std::string_view flag, const std::string& path, std::ofstream& file) {
  if (path.empty()) return core::Status::ok();
  file.open(path);
  if (!file) {
    return core::Status::invalid_argument(
        fmt::format("{}: cannot write '{}'; give a writable file path", flag, path));
  }
  return core::Status::ok();
}

}  // namespace knee::cli
