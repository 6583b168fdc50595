#include "cli/common.h"

#include <ctime>

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

}  // namespace knee::cli
