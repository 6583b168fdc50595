#include "harness/load_params.h"

#include <fmt/core.h>

#include <chrono>
#include <ctime>

#include "engine/schedule.h"

namespace knee::harness {

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
  p.requests = o.requests;
  p.warmup_s = secs(o.warmup);
  p.timeout_s = secs(o.timeout);
  p.grace_s = secs(o.grace_or_default());
  p.threads = o.threads;
  p.repeats = repeats;
  p.arrival = o.arrival == engine::Arrival::kPoisson ? "poisson" : "uniform";
  if (o.arrival == engine::Arrival::kPoisson) p.seed = o.seed;
  if (!o.keepalive) p.new_connection_per_request = true;
  if (o.h2) p.protocol = o.request.url.scheme == "https" ? "h2" : "h2c";
  if (o.per_connection > 1) p.per_connection = o.per_connection;
  if (o.io != net::IoPath::kEpoll) p.io = std::string(net::io_path_name(o.io));
  if (!o.mix.empty()) {
    std::string text;
    for (const engine::MixEndpoint& e : o.mix) {
      // As --mix takes it, so the heading's command runs the same mix again (regression: rates
      // lost their /s and bodies their @FILE, and read back as ratios without a body).
      text += fmt::format("{}{}{}={:g}{}", text.empty() ? "" : ",", e.name,
                          e.body_file.empty() ? "" : " @" + e.body_file, e.weight,
                          e.weight_is_rate ? "/s" : "");
    }
    p.mix = text;
  }
  if (!o.stages.empty()) {
    std::string text;
    for (const engine::Stage& st : o.stages) {
      text += fmt::format("{}{:g}s:{:g}", text.empty() ? "" : ",",
                          std::chrono::duration<double>(st.duration).count(), st.target_rps);
    }
    p.stages = text;
  }
  if (o.share.count > 1) p.part = report::PartParams{o.share.index, o.share.count};
  if (o.draws_shipments()) {
    p.shipments = o.shipments.count;
    p.zipf = o.shipments.zipf;
  }
  if (o.request.url.scheme == "https") {
    report::TlsParams t;
    t.verify = o.tls.verify;
    t.ca_file = o.tls.ca_file;
    t.client_cert = o.tls.cert_file;
    if (o.tls.version) t.version = *o.tls.version == 12 ? "1.2" : "1.3";
    t.resume = o.tls.resume;
    p.tls = t;
  }
  return p;
}

}  // namespace knee::harness
