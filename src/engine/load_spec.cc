// LoadSpec into LoadOptions (engine/load_spec.h): the typed values, each error naming its
// option field.
#include "engine/load_spec.h"

#include <fmt/core.h>
#include <strings.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/files.h"
#include "core/units.h"
#include "engine/mix.h"
#include "engine/schedule.h"

namespace knee::engine {

using core::Result;
using core::Status;

Status LoadSpec::protocol_options(const http::Url* target, LoadOptions& out) const {
  if (h2 && h2c) {
    return Status::invalid_field("h2", "give one: --h2 for https://, --h2c for http://");
  }
  if (target != nullptr && h2 && target->scheme == "http") {
    return Status::invalid_field("h2",
                                 "http:// has no TLS to agree on HTTP/2 in; use --h2c for "
                                 "cleartext HTTP/2 with prior knowledge, or an https:// URL");
  }
  if (target != nullptr && h2c && target->scheme == "https") {
    return Status::invalid_field("h2", "--h2c is HTTP/2 over cleartext; for https:// use --h2");
  }
  out.h2 = h2 || h2c;
  for (const auto& [field, value] :
       {std::pair{"streams", streams}, std::pair{"pipeline", pipeline}}) {
    if (value < 1 || value > LoadOptions::kMaxPerConnection) {
      return Status::invalid_field(
          field, fmt::format("{} requests in flight per connection; give 1 to {}", value,
                             LoadOptions::kMaxPerConnection));
    }
  }
  if (streams != 1 && !out.h2) {
    return Status::invalid_field("streams",
                                 "HTTP/2 only: add --h2 or --h2c (HTTP/1.1 has --pipeline)");
  }
  if (pipeline != 1 && out.h2) {
    return Status::invalid_field("pipeline", "HTTP/1.1 only; HTTP/2 has --streams");
  }
  out.per_connection = out.h2 ? streams : pipeline;
  return Status::success();
}

Status LoadSpec::tls_options(const http::Url* target, net::TlsOptions& out) const {
  const bool any = !cacert.empty() || insecure || !cert.empty() || !key.empty() ||
                   !tls_version.empty() || no_tls_resume;
  if (any && target != nullptr && target->scheme != "https") {
    const char* flag = !cacert.empty()        ? "--cacert"
                       : insecure             ? "-k/--insecure"
                       : !cert.empty()        ? "--cert"
                       : !key.empty()         ? "--key"
                       : !tls_version.empty() ? "--tls"
                                              : "--no-tls-resume";
    return Status::invalid_argument(
        fmt::format("{}: only for https:// URLs; the target speaks plain http://", flag));
  }
  out.ca_file = cacert;
  out.verify = !insecure;
  out.cert_file = cert;
  out.key_file = key;
  out.resume = !no_tls_resume;
  if (tls_version == "1.2") {
    out.version = 12;
  } else if (tls_version == "1.3") {
    out.version = 13;
  } else if (!tls_version.empty()) {
    return Status::invalid_field(
        "tls",
        fmt::format("'{}': knee speaks TLS 1.2 and 1.3; give --tls 1.2 or --tls 1.3", tls_version));
  }
  if (insecure && !cacert.empty()) {
    return Status::invalid_argument(
        "-k/--insecure and --cacert: --cacert has no use when nothing is verified; give one");
  }
  // The files themselves are read, and a missing, unreadable or mismatched one named, by
  // net::TlsContext::create as the run starts, before any network is touched.
  return Status::success();
}

namespace {

// The shortest -d: 10 ms, several loopback connects and round trips (knee ladder: a connect and
// accept 37 us, a round trip 121 us on this project's VM); below it a phase can end before a
// connection opens.
constexpr core::Nanos kShortestMeasuredPhase = std::chrono::milliseconds(10);

Result<core::Nanos> duration_field(std::string_view field, const std::string& text) {
  auto d = core::parse_duration(text);
  if (!d) return Status::invalid_field(std::string(field), d.status().message());
  return d;
}

}  // namespace

Result<LoadOptions> LoadSpec::to_options(bool with_url) const {
  LoadOptions o;
  auto parsed = http::parse_url(with_url ? url : "http://127.0.0.1/");
  if (!parsed) return parsed.status();
  o.request.url = *parsed;
  o.request.method = method;
  for (const std::string& h : headers) {
    auto header = parse_header(h);
    if (!header) return header.status();
    o.request.headers.push_back(std::move(header).value());
  }
  if (!body.empty() && !body_file.empty()) {
    return Status::invalid_argument("--body and --body-file: give one of them, not both");
  }
  // Regression (a new user's trial): curl's habit, --body @x.json, sent the 7 characters. A body
  // that is '@' and the name of an existing file is refused with the flag that sends the file;
  // any other body starting with '@' is sent as given.
  std::error_code ec;
  if (body.size() > 1 && body.front() == '@' &&
      std::filesystem::is_regular_file(body.substr(1), ec)) {
    return Status::invalid_argument(fmt::format(
        "--body '{}' would send those characters, not the file; give --body-file {} to send it",
        body, body.substr(1)));
  }
  o.request.body = body;
  if (!body_file.empty()) {
    auto read = core::read_text_file("--body-file", body_file);
    if (!read) return read.status();
    o.request.body = std::move(read).value();
  }
  auto mix_rate = mix_options(o);
  if (!mix_rate) return mix_rate.status();
  auto count = core::parse_count(shipments);
  if (!count) return Status::invalid_field("shipments", count.status().message());
  o.shipments.count = *count;
  if (zipf_given) o.shipments.zipf = zipf;
  if (Status s = tls_options(with_url ? &o.request.url : nullptr, o.tls); !s) return s;
  if (Status s = protocol_options(with_url ? &o.request.url : nullptr, o); !s) return s;
  o.connections = connections;
  o.threads = threads;
  if (rate_given && !(rate > 0 && rate <= kMaxRateRps)) {
    // Regression: -r 1e12 filled 24 GB and -r 0 quietly ran a closed loop.
    return Status::invalid_field(
        "rate_rps", fmt::format("{} is not a rate knee can schedule; give requests per second "
                                "above 0 and at most 1e6 (omit -r for a closed loop)",
                                rate));
  }
  if (rate_given || *mix_rate) {
    o.rate_rps = rate_given ? rate : **mix_rate;
    if (connections_given) o.max_connections = connections;
  }
  if (arrival == "uniform") {
    o.arrival = Arrival::kUniform;
  } else if (arrival == "poisson") {
    o.arrival = Arrival::kPoisson;
  } else {
    return Status::invalid_field(
        "arrival", fmt::format("'{}' is not an arrival process; use uniform or poisson", arrival));
  }
  o.seed = seed;
  auto d = duration_field("duration", requests_given && !duration_given ? "10m" : duration);
  if (!d) return d.status();
  o.duration = *d;
  // Regression (a new user's trial): -d 300us (or 1ns) measured 0 requests, exit 0, and named
  // the client saturated. A phase that short ends before a connect completes, so it is refused.
  if (o.duration < kShortestMeasuredPhase) {
    return Status::invalid_field(
        "duration", fmt::format("{} is too short to measure anything (a connect alone can take "
                                "longer); give at least 10ms, or -n COUNT for a number of requests",
                                duration));
  }
  // Regression (a new user's trial): -r 0.5 -d 1s scheduled no request and passed --strict.
  const double duration_s = std::chrono::duration<double>(o.duration).count();
  if (rate_given && stages.empty() && !requests_given && rate * duration_s < 1) {
    return Status::invalid_field(
        "rate_rps", fmt::format("{:g} req/s for {:g} s schedules no request (one every {:g} s); "
                                "give a higher -r or a -d of at least {:g} s",
                                rate, duration_s, 1 / rate, std::ceil(1 / rate)));
  }
  o.keepalive = !no_keepalive;
  if (io == "uring") {
    o.io = net::IoPath::kUring;
  } else if (io != "epoll") {
    return Status::invalid_field("io", fmt::format("'{}': give epoll or uring", io));
  }
  if (requests_given) {
    if (requests < 1) {
      return Status::invalid_field("requests",
                                   fmt::format("{} requests; give a count of 1 or more", requests));
    }
    o.requests = static_cast<uint64_t>(requests);
  }
  auto w = duration_field("warmup", stages.empty() || warmup_given ? warmup : "0");
  if (!w) return w.status();
  o.warmup = *w;
  if (Status st = stage_options(o); !st) return st;
  auto t = duration_field("timeout", timeout);
  if (!t) return t.status();
  o.timeout = *t;
  if (spin != "auto") {
    auto sp = core::parse_duration(spin);
    if (!sp) {
      return Status::invalid_field(
          "spin", fmt::format("'{}' is neither auto nor a duration; give auto, 0 (always sleep) "
                              "or a window such as 200us",
                              spin));
    }
    o.spin = *sp;
  }
  if (!grace.empty()) {
    auto g = duration_field("grace", grace);
    if (!g) return g.status();
    o.grace = *g;
  }
  if (Status s = o.validate(); !s) return s;
  if (zipf_given && with_url) {  // after validate(): a bad exponent is named first
    // Regression (a new user's trial): --zipf on a URL without {shipment} ran uniformly as asked
    // of nothing, without a word.
    if (!o.draws_shipments()) {
      return Status::invalid_field(
          "zipf",
          "no request holds {shipment}, whose ids it draws: put {shipment} in the URL "
          "(/tracking/{shipment}), the body or a --mix target, or leave --zipf out");
    }
  }
  return o;
}

Result<Plan> LoadSpec::to_sweep_plan(const std::vector<int64_t>& levels, bool by_rate,
                                     std::optional<int> max_connections, int repeats) {
  connections = by_rate ? max_connections.value_or(
                              LoadOptions::default_pool_size(static_cast<double>(levels.back())))
                        : static_cast<int>(levels.back());
  auto base = to_options();
  if (!base) {
    if (base.status().field() == "connections") return base.status().with_field("levels");
    return base.status();
  }
  if (!by_rate && base->rate_rps) {  // a --mix of rates (=R/s)
    return Status::invalid_field("mix", "rates make an open loop: use --rate RATES, or ratios");
  }
  base->max_connections = max_connections;
  return sweep_plan(*base, levels, by_rate, repeats);
}

Result<std::pair<std::string, std::string>> parse_header(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::invalid_argument(
        fmt::format("-H/--header: '{}' is not a header; use 'Name: value'", text));
  }
  std::string value = text.substr(colon + 1);
  value.erase(0, value.find_first_not_of(" \t"));
  return std::pair<std::string, std::string>(text.substr(0, colon), std::move(value));
}

std::vector<std::string> LoadSpec::input_files() const {
  std::vector<std::string> files;
  for (const std::string* f : {&body_file, &cacert, &cert, &key}) {
    if (!f->empty()) files.push_back(*f);
  }
  if (!mix.empty()) {
    if (auto parsed = parse_mix(mix)) {
      for (const MixText& e : parsed->entries) {
        if (!e.body_file.empty()) files.push_back(e.body_file);
      }
    }
  }
  return files;
}

bool LoadSpec::open_loop() const {
  if (rate_given || !stages.empty()) return true;
  if (mix.empty()) return false;
  auto parsed = parse_mix(mix);
  return parsed && parsed->rates;
}

Result<std::optional<double>> LoadSpec::mix_options(LoadOptions& o) const {
  std::optional<double> mix_rate;
  if (mix.empty()) return mix_rate;
  if (method != "GET" || !body.empty() || !body_file.empty()) {
    return Status::invalid_argument(
        "--mix with -m, --body or --body-file: each endpoint of the mix names its own method "
        "and body (METHOD /target @BODY_FILE=WEIGHT); drop them");
  }
  // Regression (a new user's trial): 'knee run http://h/api --mix "GET /a=1"' sent /a and
  // dropped /api without a word. Each endpoint's target replaces the URL's whole, so a URL that
  // has one of its own is refused rather than ignored.
  if (o.request.url.target != "/") {
    return Status::invalid_field(
        "mix", fmt::format("the URL's target '{}' would not be sent: each endpoint names its own "
                           "(GET {}=1); give the URL as {}://{}/",
                           o.request.url.target, o.request.url.target, o.request.url.scheme,
                           o.request.url.authority()));
  }
  auto parsed_mix = parse_mix(mix);
  if (!parsed_mix) return parsed_mix.status();
  for (const MixText& e : parsed_mix->entries) {
    MixEndpoint endpoint{e.name, o.request, e.weight, e.body_file, parsed_mix->rates};
    endpoint.request.method = e.method;
    endpoint.request.url.target = e.target;
    endpoint.request.body.clear();
    if (!e.body_file.empty()) {
      auto read = core::read_text_file(fmt::format("--mix {}", e.name), e.body_file);
      if (!read) return read.status();
      endpoint.request.body = std::move(read).value();
      // A .json body is sent as JSON unless -H names the type (curl --json does the same).
      const bool typed = std::any_of(
          o.request.headers.begin(), o.request.headers.end(),
          [](const auto& h) { return strcasecmp(h.first.c_str(), "Content-Type") == 0; });
      if (!typed && e.body_file.ends_with(".json")) {
        endpoint.request.headers.emplace_back("Content-Type", "application/json");
      }
    }
    o.mix.push_back(std::move(endpoint));
  }
  if (parsed_mix->rates) mix_rate = parsed_mix->total_weight();
  return mix_rate;
}

Status LoadSpec::stage_options(LoadOptions& o) const {
  if (stages.empty()) return Status::success();
  if (rate_given || duration_given || requests_given) {
    return Status::invalid_field(
        "stages", "not with -r, -d or -n: the stages set the rate and how long the run lasts");
  }
  auto parsed_stages = parse_stages(stages);
  if (!parsed_stages) return parsed_stages.status();
  const RateProfile profile(*parsed_stages);
  if (o.warmup >= profile.total()) {
    return Status::invalid_field(
        "warmup", fmt::format("-w {} leaves nothing of the stages' {:.3f} s to measure", warmup,
                              std::chrono::duration<double>(profile.total()).count()));
  }
  // As -r with -d: a measured part that intends no request would measure nothing and pass
  // --strict. Regression (a new user's trial): --stages 1ns:100 ran and printed 139.70 GiB/s.
  const double total_ns = static_cast<double>(profile.total().count());
  const double measured_arrivals =
      profile.arrivals_until(total_ns) -
      profile.arrivals_until(static_cast<double>(core::Nanos(o.warmup).count()));
  if (measured_arrivals < 1) {
    return Status::invalid_field(
        "stages",
        fmt::format("'{}' intends {:.3g} requests after the warm-up, fewer than one: give "
                    "longer stages or higher rates, e.g. '10s:100'",
                    stages, measured_arrivals));
  }
  o.stages = std::move(parsed_stages).value();
  o.rate_rps = profile.peak_rps();
  o.duration = profile.total() - o.warmup;
  o.interval = std::chrono::seconds(1);  // the report's timeline
  if (connections_given) o.max_connections = connections;
  return Status::success();
}

Status LoadSpec::part_options(Plan& plan, double now_epoch_s) const {
  if (!part.empty()) {
    int index = -1, count = 0;
    char slash = 0, extra = 0;
    if (std::sscanf(part.c_str(), "%d%c%d%c", &index, &slash, &count, &extra) != 3 ||
        slash != '/') {
      return Status::invalid_field(
          "part",
          fmt::format("'{}' is not INDEX/COUNT: give e.g. 0/4 for the first of four", part));
    }
    if (Status s = split_plan(plan, index, count); !s) return s;
  }
  if (!start_at.empty()) {
    auto at = core::parse_wall_time(start_at, now_epoch_s);
    if (!at) return at.status().with_field("start_at");
    plan.start_at_epoch_s = *at;
    plan.run_slot_s = plan_run_slot_s(plan);
  }
  return Status::success();
}

}  // namespace knee::engine
