#include "http/url.h"

#include <fmt/format.h>

#include <cstddef>

namespace knee::http {
namespace {

constexpr std::string_view kAcceptedForm = "http://host[:port][/path][?query]";

core::Status bad_url(std::string_view text, std::string_view why) {
  return core::Status::invalid_argument(
      fmt::format("invalid URL \"{}\": {}; expected {}", text, why, kAcceptedForm));
}

int default_port(std::string_view scheme) { return scheme == "https" ? 443 : 80; }

char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = to_lower(c);
  return out;
}

bool is_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// A registered name or IPv4 address: letters, digits, '-', '.', '_'.
bool is_host_char(char c) { return is_alnum(c) || c == '-' || c == '.' || c == '_'; }

// The inside of "[...]": hex digits, ':' and '.' (an embedded IPv4 tail), with at least one ':'.
bool is_ipv6_literal(std::string_view s) {
  if (s.find(':') == std::string_view::npos) return false;
  for (char c : s) {
    if (!is_hex(c) && c != ':' && c != '.') return false;
  }
  return true;
}

}  // namespace

std::string Url::authority() const {
  std::string out = ipv6_literal ? fmt::format("[{}]", host) : host;
  if (port != default_port(scheme)) fmt::format_to(std::back_inserter(out), ":{}", port);
  return out;
}

std::string Url::to_string() const { return fmt::format("{}://{}{}", scheme, authority(), target); }

core::Result<Url> parse_url(std::string_view text) {
  if (text.empty()) return bad_url(text, "empty");
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte <= 0x20 || byte == 0x7f) {
      return bad_url(text, fmt::format("space or control character at offset {} (percent-encode "
                                       "it, e.g. %20)",
                                       i));
    }
    if (byte >= 0x80) {
      return bad_url(text, fmt::format("non-ASCII byte at offset {} (percent-encode it)", i));
    }
  }

  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) {
    return bad_url(text, fmt::format("no scheme, add http:// (e.g. \"http://{}\")", text));
  }
  Url url;
  url.scheme = lower(text.substr(0, scheme_end));
  if (url.scheme != "http" && url.scheme != "https") {
    return bad_url(text, fmt::format("unsupported scheme \"{}\"; knee speaks http:// and https://",
                                     text.substr(0, scheme_end)));
  }

  const std::string_view rest = text.substr(scheme_end + 3);
  const size_t authority_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, authority_end);
  std::string_view tail =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);

  if (authority.find('@') != std::string_view::npos) {
    return bad_url(text, "userinfo (user@) is not supported; send an Authorization header instead");
  }
  if (authority.empty()) return bad_url(text, "empty host");

  std::string_view host;
  std::string_view port_text;
  bool has_port = false;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad_url(text, "IPv6 literal without closing ']'");
    host = authority.substr(1, close - 1);
    if (host.empty()) return bad_url(text, "empty host");
    if (!is_ipv6_literal(host)) {
      return bad_url(text, fmt::format("\"{}\" is not an IPv6 literal", host));
    }
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return bad_url(text, "unexpected characters after ']' (expected :port)");
      }
      has_port = true;
      port_text = after.substr(1);
    }
    url.ipv6_literal = true;
  } else {
    const size_t colon = authority.find(':');
    if (colon != std::string_view::npos &&
        authority.find(':', colon + 1) != std::string_view::npos) {
      return bad_url(text, "an IPv6 address must be in brackets, e.g. http://[::1]:8080/");
    }
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(colon + 1);
    }
    if (host.empty()) return bad_url(text, "empty host");
    for (char c : host) {
      if (!is_host_char(c)) {
        return bad_url(text, fmt::format("invalid character '{}' in host \"{}\"", c, host));
      }
    }
  }
  url.host = lower(host);

  if (has_port) {
    if (port_text.empty()) return bad_url(text, "empty port after ':'");
    int port = 0;
    for (char c : port_text) {
      if (c < '0' || c > '9') {
        return bad_url(text, fmt::format("port \"{}\" is not a number (1..65535)", port_text));
      }
      port = port * 10 + (c - '0');
      if (port > 65535) break;
    }
    if (port < 1 || port > 65535) {
      return bad_url(text, fmt::format("port {} is out of range 1..65535", port_text));
    }
    url.port = port;
  } else {
    url.port = default_port(url.scheme);
  }

  tail = tail.substr(0, tail.find('#'));  // the fragment is never sent
  if (tail.empty() || tail.front() == '?') {
    url.target = "/";
    url.target.append(tail);
  } else {
    url.target = std::string(tail);
  }
  return url;
}

}  // namespace knee::http
