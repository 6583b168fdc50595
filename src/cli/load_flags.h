// The flags the measuring subcommands share, declared once: target, request shape and phases
// (LoadFlags, parsed into engine::LoadOptions), the open loop's rate, arrivals and seed, the
// output files (--html, --hlog), and how a failure is printed with the flag it came from.
// Durations are typed like "2s" or "500ms" (core::parse_duration).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "engine/load.h"
#include "engine/plan.h"

namespace knee::cli {

class Distributed;  // cli/distributed.h

struct LoadFlags {
  std::string url;
  int connections = 10;
  int threads = 1;
  std::string duration = "2s";
  std::string warmup = "1s";
  std::string timeout = "10s";
  std::string grace;  // empty: the request timeout
  std::string method = "GET";
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::string body_file;
  double rate = 0;  // open loop when rate_given
  std::string arrival = "uniform";
  uint64_t seed = 1;
  std::string spin = "auto";       // open loop: busy-poll window before each send, or auto
  int64_t requests = 0;            // -n: measured requests instead of a duration
  bool requests_given = false;     // set by -n
  bool duration_given = false;     // set by -d
  bool no_keepalive = false;       // --no-keepalive: a new connection per request
  bool connections_given = false;  // set by -c
  bool rate_given = false;         // set by -r
  // https (net/tls.h): --cacert, -k/--insecure, --cert, --key, --tls, --no-tls-resume.
  std::string cacert;
  bool insecure = false;
  std::string cert;
  std::string key;
  std::string tls_version;  // "", "1.2" or "1.3"
  bool no_tls_resume = false;
  // HTTP/2 (--h2 over TLS, --h2c cleartext) and requests in flight per connection.
  bool h2 = false;
  bool h2c = false;
  int streams = 1;   // --streams: HTTP/2 streams per connection
  int pipeline = 1;  // --pipeline: HTTP/1.1 requests in flight per connection
  // Requests in flight per connection these flags ask for (streams or pipeline).
  int per_connection() const { return h2 || h2c ? streams : pipeline; }
  // A request mix (engine/mix.h) and {shipment}'s ids (engine/shipments.h).
  std::string mix;
  std::string stages;                // --stages (run): open loop at a changing rate
  bool warmup_given = false;         // set by -w
  std::string shipments = "100000";  // a count, k/M/G allowed (core::parse_count)
  double zipf = 0;
  bool zipf_given = false;
  std::string part;      // --part INDEX/COUNT
  std::string start_at;  // --start-at TIME

  // Declares the URL (positional), -t, -d, -w, --timeout, --grace, -m, -H, --body, --body-file,
  // the TLS and protocol flags, and -c unless `with_connections` is false (sweep's levels are its
  // connections).
  void add_to(CLI::App& app, bool url_required, bool with_connections);
  // Declares --cacert, -k/--insecure, --cert, --key, --tls, --no-tls-resume.
  void add_tls_flags(CLI::App& app);
  // Declares --h2, --h2c, --streams and --pipeline.
  void add_protocol_flags(CLI::App& app);
  // -r, or a --mix whose weights are rates: the run is open loop (call after parsing).
  bool open_loop() const;
  // Declares --mix, --shipments and --zipf.
  void add_mix_flags(CLI::App& app);
  // Declares --part and --start-at (run, sweep).
  void add_distribution_flags(CLI::App& app);
  // --part and --start-at applied to a parsed plan: every level's options made this part's share
  // (engine::part_of), and the plan's start time set. Errors: kInvalidArgument naming "part"
  // (not INDEX/COUNT, or a share with nothing in it, or without a `shared_target`: sweep's
  // built-in server is each process's own) or "start_at" (core::parse_wall_time).
  // Under mpirun (`group` active) the plan becomes this rank's part instead.
  core::Status distribute(engine::Plan& plan, bool shared_target, const Distributed& group) const;
  // Those flags into `out`, checked against `target` (null: not known yet). Errors:
  // kInvalidArgument for --h2 with http:// or --h2c with https://, both at once, --streams
  // without HTTP/2 or --pipeline with it.
  core::Status protocol_options(const http::Url* target, engine::LoadOptions& out) const;
  // The TLS flags into `out`, for `target` (null: not known yet, as for scenarios). Errors:
  // kInvalidArgument for a TLS flag with an http:// target, a --tls other than 1.2 or 1.3, or -k
  // with --cacert (the files are checked by net::TlsContext::create).
  core::Status tls_options(const http::Url* target, net::TlsOptions& out) const;
  // Declares -r/--rate, --stages and --spin (run).
  void add_rate_to(CLI::App& app);
  // Declares --arrival and --seed, with `context` in their help ("With --rate: ").
  void add_arrival_to(CLI::App& app, const std::string& context = "Open loop: ");
  // Parses everything into options. With -r and no -c, the pool's cap is left to the engine's
  // default for the rate. Without `with_url` the URL is left for the caller to set (scenarios).
  // Errors: kInvalidArgument naming the option field (report_failure maps it to its flag);
  // kIoError when --body-file cannot be read. A --mix with rates (=R/s) and no -r makes the run
  // open loop at their sum.
  core::Result<engine::LoadOptions> to_options(bool with_url = true) const;
  // `knee sweep`'s plan: one level per concurrency (closed loop) or rate (open loop), the base
  // options checked with the largest level's connections (-t may exceed run's default of 10);
  // sets `connections` to it. An error on connections names --levels.
  core::Result<engine::Plan> sweep_plan(const std::vector<int64_t>& levels, bool by_rate,
                                        std::optional<int> max_connections, int repeats);
  // --mix into o.mix (bodies read from their files), and the open loop's rate its weights make
  // when they are rates. Errors: kInvalidArgument for a bad --mix (engine::parse_mix), with -m or
  // a body, or an unreadable body file.
  core::Result<std::optional<double>> mix_options(engine::LoadOptions& o) const;
  // --stages into o (after the warm-up is set): the stages, the peak rate, the measured phase
  // (their total less the warm-up) and per-second intervals. Errors: kInvalidArgument naming
  // "stages" (with -r, -d or -n; a bad text) or "warmup" (not shorter than the stages).
  core::Status stage_options(engine::LoadOptions& o) const;
  // --arrival and --seed do nothing in a closed loop: given without the open loop (`open_loop`
  // false), kInvalidArgument naming the flag and `rate_flag`, the flag that would make one.
  static core::Status check_open_loop_only(const CLI::App& app, bool open_loop,
                                           std::string_view rate_flag);
};

// The result files of run and sweep: --json [FILE|-] (alone: stdout), --html FILE, --hlog FILE.
struct OutputFlags {
  std::string json;  // "" not asked; "-" stdout; else a file (after resolve())
  std::string html;
  std::string hlog;
  std::string json_parts;  // --json-parts PREFIX: under mpirun, each rank's own result too
  void add_to(CLI::App& app);
  // After parsing: a bare --json means stdout, and a URL that --json took as its FILE
  // (`knee run --json http://...`) goes back to `url` when no other URL was given.
  void resolve(const CLI::App& app, std::string& url);
  // Whether a file that keeps per-second figures is asked for (--json, --html, --hlog).
  bool per_second() const { return !json.empty() || !html.empty() || !hlog.empty(); }
};

// Parses one -H/--header value 'Name: value' into (name, value), leading blanks of the value
// dropped. Errors: kInvalidArgument naming -H/--header and the accepted form.
core::Result<std::pair<std::string, std::string>> parse_header(const std::string& text);

}  // namespace knee::cli
