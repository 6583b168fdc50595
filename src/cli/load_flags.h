// The flags shared by `knee run` and `knee sweep`: target, request shape and phases, parsed into
// engine::LoadOptions. Durations are typed like "2s" or "500ms" (core::parse_duration).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "engine/load.h"

namespace knee::cli {

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
  double rate = 0;  // open loop when > 0 (run only)
  std::string arrival = "uniform";
  uint64_t seed = 1;
  std::string spin = "0";          // open loop: busy-poll window before each intended send
  bool connections_given = false;  // set by add_to's -c callback
  bool rate_given = false;         // set by add_open_loop_to's -r callback

  // Declares the flags on `app`. `with_connections` adds -c (sweep uses --levels instead).
  void add_to(CLI::App& app, bool url_required, bool with_connections);
  // Declares -r/--rate, --arrival, --seed and --spin (open loop).
  void add_open_loop_to(CLI::App& app);
  // Parses URL, durations, headers and body into options. Errors: kInvalidArgument naming the
  // flag and the accepted form; kIoError when --body-file cannot be read.
  core::Result<engine::LoadOptions> to_options() const;
};

// Parses one -H/--header value 'Name: value' into (name, value), leading blanks of the value
// dropped. Errors: kInvalidArgument naming -H/--header and the accepted form.
core::Result<std::pair<std::string, std::string>> parse_header(const std::string& text);

// Prints "knee: <message>" to stderr and returns the exit code for it: 2 for bad input
// (kInvalidArgument), 1 for everything else.
int report_failure(const core::Status& status);

}  // namespace knee::cli
