#include "http/url.h"

#include <gtest/gtest.h>

#include <string>

namespace knee::http {
namespace {

Url parse_ok(std::string_view text) {
  auto url = parse_url(text);
  EXPECT_TRUE(url.has_value()) << text << ": " << url.status().message();
  return url.has_value() ? *url : Url{};
}

std::string parse_error(std::string_view text) {
  auto url = parse_url(text);
  EXPECT_FALSE(url.has_value()) << text << " parsed as " << (url ? url->to_string() : "");
  if (url.has_value()) return "";
  EXPECT_EQ(url.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(url.status().message().find(text), std::string::npos) << url.status().message();
  return url.status().message();
}

TEST(Url, ParsesIpv4WithPortAndPath) {
  const Url url = parse_ok("http://127.0.0.1:8080/items/7");
  EXPECT_EQ(url.scheme, "http");
  EXPECT_EQ(url.host, "127.0.0.1");
  EXPECT_EQ(url.port, 8080);
  EXPECT_EQ(url.target, "/items/7");
  EXPECT_FALSE(url.ipv6_literal);
}

TEST(Url, DefaultPortsFollowTheScheme) {
  EXPECT_EQ(parse_ok("http://example.test/").port, 80);
  const Url https = parse_ok("https://example.test/");
  EXPECT_EQ(https.scheme, "https");
  EXPECT_EQ(https.port, 443);
  EXPECT_EQ(parse_ok("HTTP://Example.TEST").scheme, "http");
  EXPECT_EQ(parse_ok("HTTP://Example.TEST").host, "example.test");
}

TEST(Url, EmptyPathBecomesSlash) {
  EXPECT_EQ(parse_ok("http://localhost").target, "/");
  EXPECT_EQ(parse_ok("http://localhost:9000").target, "/");
}

TEST(Url, KeepsQueryStrings) {
  EXPECT_EQ(parse_ok("http://h/search?q=1&r=2").target, "/search?q=1&r=2");
  EXPECT_EQ(parse_ok("http://h?q=1").target, "/?q=1");
  EXPECT_EQ(parse_ok("http://h:81?q=1").target, "/?q=1");
}

TEST(Url, DropsFragments) {
  EXPECT_EQ(parse_ok("http://h/a?b=1#frag").target, "/a?b=1");
  EXPECT_EQ(parse_ok("http://h#frag").target, "/");
}

TEST(Url, KeepsPlaceholdersInTheTarget) {
  EXPECT_EQ(parse_ok("http://h/item/{seq}?c={conn}").target, "/item/{seq}?c={conn}");
}

TEST(Url, ParsesBracketedIpv6Literals) {
  const Url plain = parse_ok("http://[::1]/x");
  EXPECT_EQ(plain.host, "::1");
  EXPECT_TRUE(plain.ipv6_literal);
  EXPECT_EQ(plain.port, 80);
  EXPECT_EQ(plain.target, "/x");

  const Url with_port = parse_ok("http://[::1]:8080");
  EXPECT_EQ(with_port.host, "::1");
  EXPECT_EQ(with_port.port, 8080);
  EXPECT_EQ(with_port.target, "/");

  EXPECT_EQ(parse_ok("http://[2001:DB8::7]:81/").host, "2001:db8::7");
  EXPECT_EQ(parse_ok("http://[::ffff:10.0.0.1]/").host, "::ffff:10.0.0.1");
}

TEST(Url, AuthorityOmitsTheDefaultPort) {
  EXPECT_EQ(parse_ok("http://example.test/").authority(), "example.test");
  EXPECT_EQ(parse_ok("http://example.test:80/").authority(), "example.test");
  EXPECT_EQ(parse_ok("http://example.test:443/").authority(), "example.test:443");
  EXPECT_EQ(parse_ok("https://example.test:443/").authority(), "example.test");
  EXPECT_EQ(parse_ok("http://127.0.0.1:8080/").authority(), "127.0.0.1:8080");
  EXPECT_EQ(parse_ok("http://[::1]:8080/").authority(), "[::1]:8080");
  EXPECT_EQ(parse_ok("http://[::1]/").authority(), "[::1]");
}

TEST(Url, ToStringIsNormalised) {
  EXPECT_EQ(parse_ok("HTTP://[::1]:8080/x?y=1#z").to_string(), "http://[::1]:8080/x?y=1");
  EXPECT_EQ(parse_ok("http://h:80").to_string(), "http://h/");
}

TEST(Url, MissingSchemeAsksForHttp) {
  const std::string msg = parse_error("localhost:8080/x");
  EXPECT_NE(msg.find("add http://"), std::string::npos) << msg;
  parse_error("//localhost/");
}

TEST(Url, RejectsOtherSchemes) {
  const std::string msg = parse_error("ftp://h/");
  EXPECT_NE(msg.find("http://host[:port]"), std::string::npos) << msg;
  parse_error("://h/");
}

TEST(Url, RejectsUserinfo) {
  EXPECT_NE(parse_error("http://user:pw@h/").find("userinfo"), std::string::npos);
  parse_error("http://user@h/");
}

TEST(Url, RejectsBadPorts) {
  parse_error("http://h:0/");
  parse_error("http://h:65536/");
  parse_error("http://h:99999999999999999999/");
  parse_error("http://h:8o/");
  parse_error("http://h:-1/");
  parse_error("http://h:/");
  parse_error("http://[::1]:/");
  EXPECT_EQ(parse_ok("http://h:1/").port, 1);
  EXPECT_EQ(parse_ok("http://h:65535/").port, 65535);
}

TEST(Url, RejectsEmptyHosts) {
  parse_error("http://");
  parse_error("http:///path");
  parse_error("http://:8080/");
  parse_error("http://[]:8080/");
  parse_error("http://?q");
}

TEST(Url, RejectsMalformedIpv6) {
  EXPECT_NE(parse_error("http://::1/").find("brackets"), std::string::npos);
  parse_error("http://[::1/");
  parse_error("http://[::1]x/");
  parse_error("http://[localhost]/");
}

TEST(Url, RejectsSpacesControlsAndNonAscii) {
  parse_error("http://h/a b");
  parse_error(" http://h/");
  parse_error("http://h/\t");
  parse_error("http://h/\x7f");
  parse_error("http://h/caf\xc3\xa9");
  parse_error("");
}

TEST(Url, RejectsBadHostCharacters) {
  parse_error("http://h!x/");
  parse_error("http://h%20x/");
}

}  // namespace
}  // namespace knee::http
