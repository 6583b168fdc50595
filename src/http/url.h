// Url: the target of a load test, parsed once from what the user typed
// ("http://127.0.0.1:8080/items?id=7") into the pieces the engine needs to connect (host, port)
// and the pieces the request needs on the wire (authority for the Host header, request target).
//
// Accepted form (a subset of RFC 3986 / RFC 9110 §4.2.1 http URIs):
//   http://host[:port][/path][?query][#fragment]      host: name, IPv4, or [IPv6 literal]
//   https://...                                       parsed (port 443); the caller decides
// The fragment is dropped (never sent, RFC 9110 §4.2.5). Userinfo ("user:pw@") is rejected
// (deprecated by RFC 9110 §4.2.4). Bytes are not percent-decoded; the target is sent as typed.
// The target may hold knee's placeholders {conn} and {seq} (see request.h).
//
// Ownership and thread-safety: Url is a plain value; parse_url() is pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace knee::http {

struct Url {
  std::string scheme;         // "http" or "https", lower-case
  std::string host;           // lower-case; an IPv6 literal without its brackets ("::1")
  int port = 0;               // 1..65535; the scheme default (80, 443) when the URL gave none
  std::string target;         // origin-form request target: path plus "?query"; "/" if empty
  bool ipv6_literal = false;  // host came in brackets

  // The Host header value (RFC 9110 §7.2): host, or "[v6]", plus ":port" unless the port is the
  // scheme's default. {"http", "::1", 8080} -> "[::1]:8080"; {"http", "a.test", 80} -> "a.test".
  std::string authority() const;

  // The normalised URL: scheme://authority target ("http://[::1]:8080/x?y=1").
  std::string to_string() const;
};

// Parses an absolute http/https URL in the accepted form above.
// Errors (kInvalidArgument, the message quotes the input and the accepted form): empty input, no
// scheme ("add http://"), another scheme, userinfo, empty host, a bad host character, an IPv6
// literal without brackets or without its closing "]", a port that is empty, non-numeric or
// outside 1..65535, and spaces, control characters or non-ASCII bytes anywhere (percent-encode
// them).
core::Result<Url> parse_url(std::string_view text);

}  // namespace knee::http
