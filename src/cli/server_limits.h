// The lab server's limits as `knee serve` flags (lab::ServerOptions: header_timeout,
// idle_timeout, max_connections, max_header_bytes, max_body_bytes), declared in one place.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "lab/lab_server.h"

namespace knee::cli {

struct ServerLimitFlags {
  // Declares --header-timeout, --idle-timeout, --max-connections, --max-header-bytes and
  // --max-body-bytes on `app`, with the options' defaults.
  void add_to(CLI::App& app);
  // Parses the durations into `options` and copies the sizes. Errors: kInvalidArgument naming the
  // flag, for a duration that does not parse (the ranges are LabServer::start's to check).
  core::Status apply(lab::ServerOptions& options) const;
  // A refusal of the server's with its limit field named by flag ("max_connections" ->
  // "--max-connections: ..."), for report_failure, which names the load's fields (there
  // max_connections is -c's); any other status as it is.
  static core::Status named(const core::Status& status);

  std::string header_timeout = "10s";
  std::string idle_timeout = "75s";
  int max_connections = 0;
  size_t max_header_bytes = http::kMaxHeaderSectionBytes;
  uint64_t max_body_bytes = lab::ServerOptions{}.max_body_bytes;
};

}  // namespace knee::cli
