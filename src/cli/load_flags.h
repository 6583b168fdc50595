// The flags the measuring subcommands share, declared once: target, request shape and phases,
// the open loop's rate, arrivals and seed (LoadFlags, filling an engine::LoadSpec, which parses
// them into engine::LoadOptions), and the output files (--json, --html, --hlog).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "core/status.h"
#include "engine/load_spec.h"
#include "harness/result_files.h"

namespace knee::cli {

// A seed's text: a whole number 0..2^64-1 in digits. CLI11 read "-1" as 2^64-1 and wrapped past
// 2^64 without a word (regression, a new user's trial); the error names the accepted range.
CLI::Validator seed_number();

// The shared flags, filling an engine::LoadSpec (engine/load_spec.h), which parses them.
struct LoadFlags : engine::LoadSpec {
  // Declares the URL (positional), -t, -d, -w, --timeout, --grace, -m, -H, --body, --body-file,
  // the TLS and protocol flags, and -c unless `with_connections` is false (sweep's levels are its
  // connections).
  void add_to(CLI::App& app, bool url_required, bool with_connections);
  // Declares --cacert, -k/--insecure, --cert, --key, --tls, --no-tls-resume.
  void add_tls_flags(CLI::App& app);
  // Declares --h2, --h2c, --streams, --pipeline and --io.
  void add_protocol_flags(CLI::App& app);
  // Declares --mix, --shipments and --zipf.
  void add_mix_flags(CLI::App& app);
  // Declares --part and --start-at (run, sweep).
  void add_distribution_flags(CLI::App& app);
  // Declares -r/--rate, --stages and --spin (run).
  void add_rate_to(CLI::App& app);
  // Declares --arrival and --seed, with `context` in their help ("With --rate: ").
  void add_arrival_to(CLI::App& app, const std::string& context = "Open loop: ");
  // --arrival and --seed do nothing in a closed loop: given without the open loop (`open_loop`
  // false), kInvalidArgument naming the flag and `rate_flag`, the flag that would make one.
  static core::Status check_open_loop_only(const CLI::App& app, bool open_loop,
                                           std::string_view rate_flag);
};

// The result files of run and sweep: --json [FILE|-] (alone: stdout), --html FILE, --hlog FILE,
// --json-parts PREFIX.
struct OutputFlags : harness::OutputPaths {
  void add_to(CLI::App& app);
  // After parsing: a bare --json means stdout, and a URL that --json took as its FILE
  // (`knee run --json http://...`) goes back to `url` when no other URL was given.
  void resolve(const CLI::App& app, std::string& url);
};

using engine::parse_header;

}  // namespace knee::cli
