#include "cli/server_limits.h"

#include <algorithm>
#include <limits>

#include "cli/command.h"
#include "core/units.h"

namespace knee::cli {

void ServerLimitFlags::add_to(CLI::App& app) {
  app.add_option("--header-timeout", header_timeout,
                 "A request's head and body must arrive within this of its first byte, else 408 "
                 "and close (slow clients cannot hold the server); an HTTP/2 stream's request "
                 "and a TLS handshake too")
      ->capture_default_str();
  app.add_option("--idle-timeout", idle_timeout,
                 "A keep-alive connection with no request under way closes after this long "
                 "without a byte (longer than nginx's upstream keepalive_timeout of 60s)")
      ->capture_default_str();
  app.add_option("--max-connections", max_connections,
                 "Connections open at once over all threads; more are answered 503 (TLS: closed) "
                 "and counted in /health. 0: the open-file limit (raised to the hard one) less 64")
      ->capture_default_str()
      ->check(CLI::Range(0, std::numeric_limits<int>::max(), "NONNEGATIVE"));
  app.add_option("--max-header-bytes", max_header_bytes,
                 "Longest header section in bytes; longer gets 431 and close (HTTP/2: its fields "
                 "as HPACK counts them, 32 bytes more each)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{256}, http::kMaxHeaderSectionLimit));
  app.add_option("--max-body-bytes", max_body_bytes,
                 "Longest request body in bytes (Content-Length); longer gets 413 and close; "
                 "over HTTP/2 the stream gets 413 as soon as it is over, and is reset, the "
                 "connection kept (POST /events reads at most 16384 whatever this says)")
      ->capture_default_str();
}

core::Status ServerLimitFlags::apply(lab::ServerOptions& options) const {
  for (auto [flag, text, out] :
       {std::tuple{"--header-timeout", &header_timeout, &options.header_timeout},
        std::tuple{"--idle-timeout", &idle_timeout, &options.idle_timeout}}) {
    auto d = core::parse_duration(*text);  // > 0 is lab::LabServer::start's check
    if (!d) return d.status().with_context(flag);
    *out = *d;
  }
  options.max_connections = max_connections;
  options.max_header_bytes = max_header_bytes;
  options.max_body_bytes = max_body_bytes;
  return core::Status::success();
}

core::Status ServerLimitFlags::named(const core::Status& status) {
  for (const char* f : {"header_timeout", "idle_timeout", "max_connections", "max_header_bytes",
                        "max_body_bytes"}) {
    if (status.field() == f) {
      std::string flag = "--" + status.field();
      std::replace(flag.begin(), flag.end(), '_', '-');
      return status.with_field("").with_context(flag);
    }
  }
  return status;
}

}  // namespace knee::cli
