// Fuzz target: http::parse_url, the URL a user gives on the command line.
// Checks (abort on failure): an accepted URL has a port in 1..65535, a target starting with '/',
// and its normalised form (Url::to_string) parses again to the same URL.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto url = knee::http::parse_url(text);
  if (!url) {
    if (url.status().message().empty()) std::abort();
    return 0;
  }
  if (url->port < 1 || url->port > 65535 || url->target.empty() || url->target[0] != '/') {
    std::abort();
  }
  auto again = knee::http::parse_url(url->to_string());
  if (!again || again->scheme != url->scheme || again->host != url->host ||
      again->port != url->port || again->target != url->target ||
      again->ipv6_literal != url->ipv6_literal) {
    std::abort();
  }
  return 0;
}
