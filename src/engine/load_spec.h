// A load as it is typed: the text of every option `knee run`, `knee sweep` and `knee capacity`
// share (target, request shape, phases, open loop, TLS, protocol, mix, stages, part), and the one
// parser that turns it into LoadOptions. cli/load_flags.h declares the flags that fill it; tests
// fill it directly. Durations are typed like "2s" or "500ms" (core::parse_duration), counts like
// "100k" (core::parse_count).
//
// Errors: a bad value of one option names its field (Status::field(): "duration", "rate_rps",
// "streams"), which cli/ maps to its flag. Decision: the text of some errors quotes flags itself
// (two options that exclude each other, "--body and --body-file"; a TLS option without https,
// "--cacert: only for https://"; the hint of what to type, "omit -r", "-w 5s"; the file a flag
// names, "--body-file"). The text is the engine's own, shared by every command, and a message
// that names what to type beats a neutral one rewritten in cli/; engine/scenario.h quotes
// --scenario the same way. Every other area keeps field names only.
//
// Thread-safety: a value type. Its functions read no clock (the caller passes the time) and
// touch nothing shared; to_options() reads the body files it names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "engine/load.h"
#include "engine/plan.h"
#include "http/url.h"
#include "net/tls.h"

namespace knee::engine {

struct LoadSpec {
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
  double rate = 0;  // req/s; open loop when rate_given
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
  int streams = 1;           // --streams: HTTP/2 streams per connection
  int pipeline = 1;          // --pipeline: HTTP/1.1 requests in flight per connection
  std::string io = "epoll";  // --io: how requests are written, epoll or uring (LoadOptions::io)
  // A request mix (engine/mix.h) and {shipment}'s ids (engine/shipments.h).
  std::string mix;
  std::string stages;                // --stages (run): open loop at a changing rate
  bool warmup_given = false;         // set by -w
  std::string shipments = "100000";  // a count, k/M/G allowed (core::parse_count)
  double zipf = 0;
  bool zipf_given = false;
  std::string part;      // --part INDEX/COUNT
  std::string start_at;  // --start-at TIME

  // Requests in flight per connection asked for (streams or pipeline).
  int per_connection() const { return h2 || h2c ? streams : pipeline; }
  // A rate, stages, or a mix whose weights are rates: the load is open loop.
  bool open_loop() const;
  // The files this load reads: the body file, the mix's @bodies, the TLS certificates and key
  // (as typed; a mix that does not parse adds none). No result file may replace one of them.
  std::vector<std::string> input_files() const;
  // Everything into options, checked (LoadOptions::validate). Defaults that are behaviour: a
  // request count without a duration runs up to 10 minutes; with stages the warm-up is 0 unless
  // given; with a rate and no connections given, the pool's cap is left to the engine's default
  // for the rate; a mix of rates (=R/s) and no rate makes the load open loop at their sum.
  // Without `with_url` the URL is left for the caller to set (scenarios). Errors:
  // kInvalidArgument naming the option field (a rate not above 0 or above kMaxRateRps names
  // "rate_rps"), or quoting the flags (see above); those of core::read_text_file for a body file
  // (kInvalidArgument when it cannot be opened, kIoError when reading it fails).
  core::Result<LoadOptions> to_options(bool with_url = true) const;
  // `knee sweep`'s plan (engine::sweep_plan): one level per concurrency (closed loop) or rate
  // (open loop), the base options checked with the largest level's pool. Sets `connections` to
  // that pool: the largest level (closed loop), or `max_connections`, else the engine's default
  // pool for the largest rate (open loop). Errors: those of to_options, one on connections named
  // "levels"; "mix" for a mix of rates in a closed-loop sweep.
  core::Result<Plan> to_sweep_plan(const std::vector<int64_t>& levels, bool by_rate,
                                   std::optional<int> max_connections, int repeats);
  // The part (INDEX/COUNT: this process's share of every level, engine::split_plan) and the
  // start time (core::parse_wall_time, relative to `now_epoch_s`, the wall clock in seconds since
  // the epoch) applied to a plan. Errors: kInvalidArgument naming "part" (not INDEX/COUNT, an
  // index outside 0..COUNT-1, a share with nothing in it: engine::part_of) or "start_at".
  core::Status part_options(Plan& plan, double now_epoch_s) const;
  // The TLS fields into `out`, for `target` (null: not known yet, as for scenarios). Errors:
  // kInvalidArgument for a TLS option with an http:// target, a version other than 1.2 or 1.3,
  // or insecure with a CA file (the files themselves are checked by net::TlsContext::create).
  core::Status tls_options(const http::Url* target, net::TlsOptions& out) const;

 private:
  // The protocol fields into `out`, checked against `target` (null: not known yet). Errors:
  // kInvalidArgument for h2 with http:// or h2c with https://, both at once, streams without
  // HTTP/2 or pipeline with it, either outside 1..LoadOptions::kMaxPerConnection.
  core::Status protocol_options(const http::Url* target, LoadOptions& out) const;
  // The mix into o.mix (bodies read from their files; a .json body typed as JSON unless a
  // header names the type), and the open loop's rate its weights make when they are rates.
  // Errors: kInvalidArgument for a bad mix (engine::parse_mix), with a method or a body, or an
  // unreadable body file.
  core::Result<std::optional<double>> mix_options(LoadOptions& o) const;
  // The stages into o (after the warm-up is set): the stages, the peak rate, the measured phase
  // (their total less the warm-up) and per-second intervals. Errors: kInvalidArgument naming
  // "stages" (with a rate, a duration or a request count; a bad text) or "warmup" (not shorter
  // than the stages).
  core::Status stage_options(LoadOptions& o) const;
};

// One header 'Name: value' into (name, value), leading blanks of the value dropped. Errors:
// kInvalidArgument naming -H/--header and the accepted form.
core::Result<std::pair<std::string, std::string>> parse_header(const std::string& text);

}  // namespace knee::engine
