// Declares the shared load, TLS, protocol, rate and output flags (cli/load_flags.h).
#include "cli/load_flags.h"

#include <fmt/core.h>

#include <charconv>
#include <cstdint>

namespace knee::cli {

namespace {

// A text option given empty ('--mix ""', from a shell variable that was not set) is refused, not
// taken as the option left out (regression: the run went on with a default load).
CLI::Validator not_empty(std::string fix) {
  return CLI::Validator(
      [fix = std::move(fix)](const std::string& value) {
        return value.empty() ? "empty: " + fix : std::string();
      },
      "");
}

}  // namespace

CLI::Validator seed_number() {
  return CLI::Validator(
      [](const std::string& value) {
        uint64_t parsed = 0;
        const char* end = value.data() + value.size();
        const auto [at, error] = std::from_chars(value.data(), end, parsed);
        if (value.empty() || error != std::errc() || at != end) {
          return fmt::format("'{}' is not a seed; give a whole number from 0 to {}", value,
                             UINT64_MAX);
        }
        return std::string();
      },
      "");
}

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
                 "Measured phase (per level in a sweep), e.g. 2s, at least 10ms; with -n, the "
                 "most it may last (default then 10m)")
      ->capture_default_str()
      ->each([this](const std::string&) { duration_given = true; });
  app.add_option("-n,--requests", requests,
                 "Measure this many requests instead of a duration (per level in a sweep). "
                 "Closed loop: the measured phase ends once they are sent; open loop: it lasts "
                 "COUNT / RATE, COUNT arrivals")
      ->each([this](const std::string&) { requests_given = true; });
  app.add_option("-w,--warmup", warmup,
                 "Warm-up before it: requests flow, samples are discarded; 0 for none")
      ->capture_default_str()
      ->each([this](const std::string&) { warmup_given = true; });
  app.add_option("--timeout", timeout, "Per-request timeout; a late response counts as a timeout")
      ->capture_default_str();
  app.add_option("--grace", grace,
                 "After the duration, how long requests in flight may still finish (default: "
                 "--timeout); later ones are reported as aborted");
  app.add_option("-m,--method", method, "HTTP method")->capture_default_str();
  app.add_option("-H,--header", headers, "Request header 'Name: value' (repeatable)");
  app.add_option("--body", body, "Request body");
  app.add_option("--body-file", body_file, "Read the request body from FILE")->type_name("FILE");
  app.add_flag("--no-keepalive", no_keepalive,
               "A new connection for every request (Connection: close), as one-shot clients do; "
               "in closed loop latency then runs from the connect's start and includes the TCP "
               "connect and the TLS handshake");
  add_tls_flags(app);
  add_protocol_flags(app);
  add_mix_flags(app);
}

void LoadFlags::add_mix_flags(CLI::App& app) {
  app.add_option("--mix", mix,
                 "A request mix on the URL's host: 'METHOD /target[ @BODY_FILE]=WEIGHT,...', "
                 "weights all ratios (=5) or all rates (=97.22/s: open loop at their sum; with -r, "
                 "--rate or --stages, the proportions of that rate); each endpoint is reported "
                 "apart. Not with -m or --body; -H applies to all; a .json "
                 "body goes with Content-Type: application/json unless -H names one")
      ->check(not_empty("give at least one entry, e.g. --mix 'GET /a=3,GET /b=1'"));
  app.add_option("--shipments", shipments,
                 "{shipment} in a target or body expands to a tracking number of ids 1..COUNT "
                 "(knee lab data's --records; k, M, G allowed)")
      ->capture_default_str();
  app.add_option("--zipf", zipf,
                 "Draw {shipment} by Zipf's law with this exponent (e.g. 1.0: a few hot "
                 "shipments) instead of uniformly")
      ->each([this](const std::string&) { zipf_given = true; });
}

void LoadFlags::add_distribution_flags(CLI::App& app) {
  app.add_option("--part", part,
                 "Drive part INDEX (from 0) of COUNT of this load, others driving the rest from "
                 "other processes or hosts: -c, -n and -r split among the parts, {conn} numbers "
                 "unique across them; merge their --json files with knee report merge")
      ->type_name("INDEX/COUNT");
  app.add_option("--start-at", start_at,
                 "Begin at this wall-clock time (epoch seconds or 2026-12-02T12:00:00Z; +30s is "
                 "from this process's start), each later run of a sweep a fixed slot after it: "
                 "give separately started parts the same absolute time")
      ->type_name("TIME");
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
  app.add_option("--io", io,
                 "How requests are written: epoll (a send per connection and loop pass) or "
                 "uring (many connections' writes per io_uring system call; http:// only)")
      ->capture_default_str()
      ->check(CLI::IsMember({"epoll", "uring"}));
}

void LoadFlags::add_tls_flags(CLI::App& app) {
  app.add_option("--cacert", cacert,
                 "https: trust the CA certificates of this PEM file instead of the system's")
      ->type_name("FILE");
  app.add_flag("-k,--insecure", insecure,
               "https: do not verify the server's certificate (the handshake is still measured)");
  app.add_option("--cert", cert, "https: client certificate (PEM) for mutual TLS; with --key")
      ->type_name("FILE");
  app.add_option("--key", key, "https: private key (PEM) of --cert")->type_name("FILE");
  app.add_option("--tls", tls_version, "https: speak only this TLS version, 1.2 or 1.3")
      ->type_name("1.2|1.3");  // the values man pages and completion offer (docgen/docgen.h)
  app.add_flag("--no-tls-resume", no_tls_resume,
               "https: a full handshake on every connect instead of resuming the last session");
}

void LoadFlags::add_rate_to(CLI::App& app) {
  app.add_option("-r,--rate", rate,
                 "Open loop: send this many requests per second on a fixed schedule, whatever "
                 "the server does; latency is measured from each request's intended send time "
                 "(above 0, at most 1e6)")
      ->each([this](const std::string&) { rate_given = true; });
  app.add_option("--stages", stages,
                 "Open loop at a changing rate, k6's stages: 'DURATION:RATE,...', each ramping "
                 "linearly from the previous rate (first from 0), e.g. '30s:100,1m:500,30s:0'; "
                 "the run lasts their sum (not with -r, -d or -n; -w defaults to 0 and is their "
                 "first part), with a per-second timeline in the report")
      ->check(not_empty("give at least one stage, e.g. --stages '30s:100,1m:500'"));
  app.add_option("--spin", spin,
                 "Open loop: busy-poll this long before each intended send instead of sleeping "
                 "up to it (0 to 10ms, e.g. 200us; 0 always sleeps); auto sizes the window from "
                 "how late this host wakes a sleeping thread (its p99 less 50us), so sends stay "
                 "punctual on hosts with slow wake-ups without spinning a core where they are "
                 "quick; spin time is reported apart and left out of the client-bound check")
      ->capture_default_str();
}

void LoadFlags::add_arrival_to(CLI::App& app, const std::string& context) {
  app.add_option("--arrival", arrival,
                 context +
                     "spacing of arrivals, uniform or poisson (Poisson arrivals queue "
                     "sooner, as independent users do)")
      ->type_name("uniform|poisson")
      ->capture_default_str();
  app.add_option("--seed", seed, context + "seed of the Poisson arrivals")
      ->check(seed_number())
      ->capture_default_str();
}

void OutputFlags::add_to(CLI::App& app) {
  app.add_option("--json", json,
                 "Write the whole result as JSON (fields in docs/output.md) to FILE; alone or "
                 "with '-': to stdout instead of the text")
      ->expected(0, 1)
      ->type_name("FILE");
  app.add_option("--html", html,
                 "Write a self-contained HTML report with charts to FILE (works offline)")
      ->type_name("FILE");
  app.add_option("--json-parts", json_parts,
                 "Under mpirun: also write each rank's own result to PREFIX.RANK.json (what knee "
                 "report merge merges into the same result)")
      ->type_name("PREFIX");
  app.add_option("--hlog", hlog,
                 "Write per-second latency histograms to FILE in HdrHistogram's interval log "
                 "format (read back with knee report FILE)")
      ->type_name("FILE");
}

Status LoadFlags::check_open_loop_only(const CLI::App& app, bool open_loop,
                                       std::string_view rate_flag) {
  if (open_loop) return Status::success();
  for (const char* flag : {"--arrival", "--seed"}) {
    if (app.count(flag) > 0) {
      return Status::invalid_argument(fmt::format(
          "{}: only in open loop (with {}); a closed loop sends each request when the previous "
          "one ends, so there are no arrivals to space",
          flag, rate_flag));
    }
  }
  return Status::success();
}

void OutputFlags::resolve(const CLI::App& app, std::string& url) {
  if (app.count("--json") == 0) return;
  if (json.find("://") != std::string::npos && url.empty()) {
    url = json;
    json.clear();
  }
  if (json.empty()) json = "-";
}

}  // namespace knee::cli
