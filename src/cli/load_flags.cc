#include "cli/load_flags.h"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "cli/interrupt.h"
#include "core/units.h"
#include "http/url.h"

namespace knee::cli {

using core::Result;
using core::Status;

void LoadFlags::add_to(CLI::App& app, bool url_required, bool with_connections) {
  auto* u =
      app.add_option("url", url,
                     "Target URL, http[s]://HOST[:PORT]/PATH; {conn} and {seq} in it expand to "
                     "the connection index and its request counter");
  if (url_required) u->required();
  if (with_connections) {
    app.add_option("-c,--connections", connections,
                   "Closed loop: concurrent connections, each with one request in flight (the N "
                   "of N = X * R). Open loop: the most connections the pool may open (default: "
                   "enough for the rate at 250 ms of latency, 16..4096)")
        ->capture_default_str()
        ->each([this](const std::string&) { connections_given = true; });
  }
  app.add_option("-t,--threads", threads, "Worker threads, each with its own event loop")
      ->capture_default_str();
  app.add_option("-d,--duration", duration,
                 "Measured phase (per level in a sweep), e.g. 2s; with -n, the most it may last "
                 "(default then 10m)")
      ->capture_default_str()
      ->each([this](const std::string&) { duration_given = true; });
  app.add_option("-n,--requests", requests,
                 "Measure this many requests instead of a duration (per level in a sweep). "
                 "Closed loop: the measured phase ends once they are sent; open loop: it lasts "
                 "COUNT / RATE, COUNT arrivals")
      ->each([this](const std::string&) { requests_given = true; });
  app.add_option("-w,--warmup", warmup,
                 "Warm-up before it: requests flow, samples are discarded; 0 for none")
      ->capture_default_str();
  app.add_option("--timeout", timeout, "Per-request timeout; a late response counts as a timeout")
      ->capture_default_str();
  app.add_option("--grace", grace,
                 "After the duration, how long requests in flight may still finish (default: "
                 "--timeout); later ones are reported as aborted");
  app.add_option("-m,--method", method, "HTTP method")->capture_default_str();
  app.add_option("-H,--header", headers, "Request header 'Name: value' (repeatable)");
  app.add_option("--body", body, "Request body");
  app.add_option("--body-file", body_file, "Read the request body from FILE");
  app.add_flag("--no-keepalive", no_keepalive,
               "A new connection for every request (Connection: close), as one-shot clients do; "
               "in closed loop latency then runs from the connect's start and includes the TCP "
               "connect and the TLS handshake");
  add_tls_flags(app);
  add_protocol_flags(app);
}

void LoadFlags::add_protocol_flags(CLI::App& app) {
  app.add_flag("--h2", h2,
               "HTTP/2 over TLS for an https:// URL; the server must choose h2 in ALPN");
  app.add_flag("--h2c", h2c,
               "HTTP/2 over cleartext for an http:// URL, with prior knowledge (RFC 9113 3.3)");
  app.add_option("--streams", streams,
                 "HTTP/2: concurrent streams per connection (h2load's -m); the closed loop's N "
                 "is connections x streams")
      ->capture_default_str();
  app.add_option("--pipeline", pipeline,
                 "HTTP/1.1: requests in flight per connection, answered in order; the closed "
                 "loop's N is connections x pipeline")
      ->capture_default_str();
}

Status LoadFlags::protocol_options(const http::Url* target, engine::LoadOptions& out) const {
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
    if (value < 1 || value > engine::LoadOptions::kMaxPerConnection) {
      return Status::invalid_field(
          field, fmt::format("{} requests in flight per connection; give 1 to {}", value,
                             engine::LoadOptions::kMaxPerConnection));
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
  return Status::ok();
}

void LoadFlags::add_tls_flags(CLI::App& app) {
  app.add_option("--cacert", cacert,
                 "https: trust the CA certificates of this PEM file instead of the system's");
  app.add_flag("-k,--insecure", insecure,
               "https: do not verify the server's certificate (the handshake is still measured)");
  app.add_option("--cert", cert, "https: client certificate (PEM) for mutual TLS; with --key");
  app.add_option("--key", key, "https: private key (PEM) of --cert");
  app.add_option("--tls", tls_version, "https: speak only this TLS version, 1.2 or 1.3");
  app.add_flag("--no-tls-resume", no_tls_resume,
               "https: a full handshake on every connect instead of resuming the last session");
}

Status LoadFlags::tls_options(const http::Url* target, net::TlsOptions& out) const {
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
  return Status::ok();
}

void LoadFlags::add_rate_to(CLI::App& app) {
  app.add_option("-r,--rate", rate,
                 "Open loop: send this many requests per second on a fixed schedule, whatever "
                 "the server does; latency is measured from each request's intended send time "
                 "(above 0, at most 1e6)")
      ->each([this](const std::string&) { rate_given = true; });
  app.add_option("--spin", spin,
                 "Open loop: busy-poll this long before each intended send instead of sleeping "
                 "(e.g. 500us, at most 10ms): punctual sends on hosts with slow wake-ups, for a "
                 "core of client CPU; spin time is reported apart and left out of the "
                 "client-bound check")
      ->capture_default_str();
}

void LoadFlags::add_arrival_to(CLI::App& app, const std::string& context) {
  app.add_option("--arrival", arrival,
                 context +
                     "spacing of arrivals, uniform or poisson (Poisson arrivals queue "
                     "sooner, as independent users do)")
      ->capture_default_str();
  app.add_option("--seed", seed, context + "seed of the Poisson arrivals")->capture_default_str();
}

void OutputFlags::add_to(CLI::App& app) {
  app.add_option("--json", json,
                 "Write the whole result as JSON (fields in docs/output.md) to FILE; alone or "
                 "with '-': to stdout instead of the text")
      ->expected(0, 1);
  app.add_option("--html", html,
                 "Write a self-contained HTML report with charts to FILE (works offline)");
  app.add_option("--hlog", hlog,
                 "Write per-second latency histograms to FILE in HdrHistogram's interval log "
                 "format (read back with knee report FILE)");
}

Status LoadFlags::check_open_loop_only(const CLI::App& app, bool open_loop,
                                       std::string_view rate_flag) {
  if (open_loop) return Status::ok();
  for (const char* flag : {"--arrival", "--seed"}) {
    if (app.count(flag) > 0) {
      return Status::invalid_argument(fmt::format(
          "{}: only in open loop (with {}); a closed loop sends each request when the previous "
          "one ends, so there are no arrivals to space",
          flag, rate_flag));
    }
  }
  return Status::ok();
}

void OutputFlags::resolve(const CLI::App& app, std::string& url) {
  if (app.count("--json") == 0) return;
  if (json.find("://") != std::string::npos && url.empty()) {
    url = json;
    json.clear();
  }
  if (json.empty()) json = "-";
}

namespace {

Result<core::Nanos> duration_field(std::string_view field, const std::string& text) {
  auto d = core::parse_duration(text);
  if (!d) return Status::invalid_field(std::string(field), d.status().message());
  return d;
}

}  // namespace

Result<engine::LoadOptions> LoadFlags::to_options(bool with_url) const {
  engine::LoadOptions o;
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
  o.request.body = body;
  if (!body_file.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(body_file, ec)) {
      return Status::invalid_argument(fmt::format("--body-file: '{}' is not a readable file{}",
                                                  body_file, ec ? " (" + ec.message() + ")" : ""));
    }
    std::ifstream in(body_file, std::ios::binary);
    if (!in) {
      return Status::invalid_argument(
          fmt::format("--body-file: cannot read '{}': {}", body_file, std::strerror(errno)));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    o.request.body = ss.str();
  }
  if (Status s = tls_options(with_url ? &o.request.url : nullptr, o.tls); !s) return s;
  if (Status s = protocol_options(with_url ? &o.request.url : nullptr, o); !s) return s;
  o.connections = connections;
  o.threads = threads;
  if (rate_given && !(rate > 0 && rate <= engine::kMaxRateRps)) {
    // Regression: -r 1e12 filled 24 GB and -r 0 quietly ran a closed loop.
    return Status::invalid_field(
        "rate_rps", fmt::format("{} is not a rate knee can schedule; give requests per second "
                                "above 0 and at most 1e6 (omit -r for a closed loop)",
                                rate));
  }
  if (rate_given) {
    o.rate_rps = rate;
    if (connections_given) o.max_connections = connections;
  }
  if (arrival == "uniform") {
    o.arrival = engine::Arrival::kUniform;
  } else if (arrival == "poisson") {
    o.arrival = engine::Arrival::kPoisson;
  } else {
    return Status::invalid_field(
        "arrival", fmt::format("'{}' is not an arrival process; use uniform or poisson", arrival));
  }
  o.seed = seed;
  auto d = duration_field("duration", requests_given && !duration_given ? "10m" : duration);
  if (!d) return d.status();
  o.duration = *d;
  o.keepalive = !no_keepalive;
  if (requests_given) {
    if (requests < 1) {
      return Status::invalid_field("requests",
                                   fmt::format("{} requests; give a count of 1 or more", requests));
    }
    o.requests = static_cast<uint64_t>(requests);
  }
  auto w = duration_field("warmup", warmup);
  if (!w) return w.status();
  o.warmup = *w;
  auto t = duration_field("timeout", timeout);
  if (!t) return t.status();
  o.timeout = *t;
  auto sp = duration_field("spin", spin);
  if (!sp) return sp.status();
  o.spin = *sp;
  if (!grace.empty()) {
    auto g = duration_field("grace", grace);
    if (!g) return g.status();
    o.grace = *g;
  }
  if (Status s = o.validate(); !s) return s;
  return o;
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

std::string flag_of(const std::string& field) {
  // clang-format off
  static const std::pair<const char*, const char*> kFlags[] = {
      {"connections", "-c/--connections"}, {"max_connections", "-c/--connections"},
      {"threads", "-t/--threads"}, {"duration", "-d/--duration"}, {"warmup", "-w/--warmup"},
      {"timeout", "--timeout"}, {"grace", "--grace"}, {"rate_rps", "-r/--rate"},
      {"spin", "--spin"}, {"arrival", "--arrival"}, {"url", "URL"}, {"count", "-n/--count"}, {"requests", "-n/--requests"},
      {"n", "--n"}, {"x", "--x"}, {"r", "--r"}, {"lambda", "--lambda"}, {"from", "--from"},
      {"mu", "--mu"}, {"levels", "--levels"}, {"rates", "--rate"},
      {"start_rate", "--start-rate"}, {"max_rate", "--max-rate"}, {"precision", "--precision"},
      {"cacert", "--cacert"}, {"cert", "--cert"}, {"key", "--key"}, {"tls", "--tls"},
      {"h2", "--h2/--h2c"}, {"streams", "--streams"}, {"pipeline", "--pipeline"},
      {"per_connection", "--streams/--pipeline"}};
  // clang-format on
  for (const auto& [f, flag] : kFlags) {
    if (field == f) return flag;
  }
  return field;
}

int report_failure(const Status& status) {
  if (interrupt_requested()) {
    // Ctrl-C during the pre-flight connect or handshake: the failure is the interruption's.
    // Regression: it exited 1 as if the target were unreachable.
    fmt::print(stderr, "knee: interrupted before measuring began ({})\n", status.message());
    return kExitInterrupted;
  }
  if (status.field().empty()) {
    fmt::print(stderr, "knee: {}\n", status.message());
  } else {
    fmt::print(stderr, "knee: {}: {}\n", flag_of(status.field()), status.message());
  }
  return status.code() == Status::Code::kInvalidArgument ? kExitBadInput : kExitRunFailed;
}

}  // namespace knee::cli
