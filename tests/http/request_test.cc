#include "http/request.h"

#include <gtest/gtest.h>

#include <string>

namespace knee::http {
namespace {

RequestSpec spec_for(std::string_view url_text, std::string method = "GET") {
  RequestSpec spec;
  spec.method = std::move(method);
  auto url = parse_url(url_text);
  EXPECT_TRUE(url.has_value()) << url.status().message();
  if (url) spec.url = *url;
  return spec;
}

RequestTemplate compile_ok(const RequestSpec& spec) {
  auto t = RequestTemplate::compile(spec);
  EXPECT_TRUE(t.has_value()) << t.status().message();
  return t.has_value() ? *t : RequestTemplate{};
}

std::string compile_error(const RequestSpec& spec) {
  auto t = RequestTemplate::compile(spec);
  EXPECT_FALSE(t.has_value());
  if (t.has_value()) return "";
  EXPECT_EQ(t.status().code(), core::Status::Code::kInvalidArgument);
  return t.status().message();
}

std::string render(const RequestTemplate& t, uint64_t conn, uint64_t seq) {
  std::string out = "stale bytes";
  t.render(conn, seq, out);
  return out;
}

TEST(RequestTemplate, SerialisesGet) {
  const RequestTemplate t = compile_ok(spec_for("http://127.0.0.1:8080/items?id=7"));
  EXPECT_FALSE(t.has_placeholders());
  EXPECT_FALSE(t.is_head());
  const std::string expected =
      "GET /items?id=7 HTTP/1.1\r\n"
      "Host: 127.0.0.1:8080\r\n"
      "User-Agent: knee/0.1\r\n"
      "\r\n";
  EXPECT_EQ(t.fixed(), expected);
  EXPECT_EQ(render(t, 3, 9), expected);
}

TEST(RequestTemplate, SerialisesPostWithBodyAndHeaders) {
  RequestSpec spec = spec_for("http://h/orders", "POST");
  spec.headers = {{"Content-Type", "application/json"}, {"X-Trace", "a b"}};
  spec.body = R"({"qty":2})";
  const RequestTemplate t = compile_ok(spec);
  EXPECT_EQ(t.fixed(),
            "POST /orders HTTP/1.1\r\n"
            "Host: h\r\n"
            "Content-Type: application/json\r\n"
            "X-Trace: a b\r\n"
            "Content-Length: 9\r\n"
            "User-Agent: knee/0.1\r\n"
            "\r\n"
            R"({"qty":2})");
}

TEST(RequestTemplate, EmptyBodySendsContentLengthOnlyForMethodsWithBodies) {
  for (const char* method : {"POST", "PUT", "PATCH"}) {
    EXPECT_NE(compile_ok(spec_for("http://h/", method)).fixed().find("Content-Length: 0\r\n"),
              std::string::npos)
        << method;
  }
  for (const char* method : {"GET", "DELETE", "HEAD", "OPTIONS"}) {
    EXPECT_EQ(compile_ok(spec_for("http://h/", method)).fixed().find("Content-Length"),
              std::string::npos)
        << method;
  }
  RequestSpec get_with_body = spec_for("http://h/");
  get_with_body.body = "xy";
  EXPECT_NE(compile_ok(get_with_body).fixed().find("Content-Length: 2\r\n"), std::string::npos);
}

TEST(RequestTemplate, UserHostAndUserAgentReplaceTheDefaults) {
  RequestSpec spec = spec_for("http://10.0.0.1:8080/");
  spec.headers = {{"host", "api.example.test"}, {"user-agent", "probe/2"}};
  EXPECT_EQ(compile_ok(spec).fixed(),
            "GET / HTTP/1.1\r\n"
            "host: api.example.test\r\n"
            "user-agent: probe/2\r\n"
            "\r\n");
}

TEST(RequestTemplate, Ipv6HostHeaderHasBrackets) {
  EXPECT_EQ(compile_ok(spec_for("http://[::1]:8080/x")).fixed(),
            "GET /x HTTP/1.1\r\n"
            "Host: [::1]:8080\r\n"
            "User-Agent: knee/0.1\r\n"
            "\r\n");
  EXPECT_NE(compile_ok(spec_for("http://[::1]/")).fixed().find("Host: [::1]\r\n"),
            std::string::npos);
}

TEST(RequestTemplate, HeadIsHead) {
  EXPECT_TRUE(compile_ok(spec_for("http://h/", "HEAD")).is_head());
  EXPECT_FALSE(compile_ok(spec_for("http://h/", "head")).is_head());  // methods are case-sensitive
}

TEST(RequestTemplate, ExpandsPlaceholdersInTargetHeadersAndBody) {
  RequestSpec spec = spec_for("http://h/item/{seq}?c={conn}&s={seq}", "PUT");
  spec.headers = {{"X-Id", "{conn}-{seq}"}};
  spec.body = "conn={conn};seq={seq}";
  const RequestTemplate t = compile_ok(spec);
  EXPECT_TRUE(t.has_placeholders());
  EXPECT_EQ(render(t, 7, 12345),
            "PUT /item/12345?c=7&s=12345 HTTP/1.1\r\n"
            "Host: h\r\n"
            "X-Id: 7-12345\r\n"
            "Content-Length: 16\r\n"
            "User-Agent: knee/0.1\r\n"
            "\r\n"
            "conn=7;seq=12345");
}

TEST(RequestTemplate, ContentLengthCountsExpandedDigits) {
  RequestSpec spec = spec_for("http://h/", "POST");
  spec.body = "{seq}{seq}x{conn}";
  const RequestTemplate t = compile_ok(spec);
  for (uint64_t seq : {0ull, 9ull, 10ull, 123456789ull, 18446744073709551615ull}) {
    const std::string out = render(t, 42, seq);
    const std::string body = out.substr(out.find("\r\n\r\n") + 4);
    EXPECT_EQ(body, std::to_string(seq) + std::to_string(seq) + "x42");
    EXPECT_NE(out.find("Content-Length: " + std::to_string(body.size()) + "\r\n"),
              std::string::npos)
        << out;
  }
}

TEST(RequestTemplate, LeavesUnknownBracesAlone) {
  RequestSpec spec = spec_for("http://h/{id}/{seq");
  const RequestTemplate t = compile_ok(spec);
  EXPECT_FALSE(t.has_placeholders());
  EXPECT_EQ(t.fixed().substr(0, 22), "GET /{id}/{seq HTTP/1.");
}

TEST(RequestTemplate, RenderReusesTheBuffer) {
  const RequestTemplate t = compile_ok(spec_for("http://h/{conn}/{seq}"));
  std::string out;
  out.reserve(256);
  const char* data = out.data();
  for (uint64_t seq = 0; seq < 1000; ++seq) {
    t.render(1, seq, out);
    EXPECT_EQ(out.data(), data);  // no reallocation once the capacity suffices
  }
  EXPECT_EQ(out.substr(0, 21), "GET /1/999 HTTP/1.1\r\n");
}

TEST(RequestTemplate, RejectsBadMethods) {
  for (const char* method : {"", "GE T", "GET\r\n", "G(ET)", "GET/1", "{seq}"}) {
    const std::string msg = compile_error(spec_for("http://h/", method));
    EXPECT_NE(msg.find("method"), std::string::npos) << msg;
  }
}

TEST(RequestTemplate, RejectsBadHeaders) {
  const std::pair<std::string, std::string> bad[] = {
      {"", "x"},
      {"X Bad", "x"},
      {"X:Bad", "x"},
      {"X-Ok", "a\r\nInjected: 1"},
      {"X-Ok", "a\nb"},
      {"X-Ok", "a\rb"},
      {"X-Ok", std::string("a\0b", 3)},
      {"Transfer-Encoding", "chunked"},
  };
  for (const auto& header : bad) {
    RequestSpec spec = spec_for("http://h/");
    spec.headers = {header};
    const std::string msg = compile_error(spec);
    EXPECT_NE(msg.find("header"), std::string::npos) << msg;
  }
}

TEST(RequestTemplate, UserContentLengthMustMatchTheBody) {
  RequestSpec spec = spec_for("http://h/", "POST");
  spec.body = "abc";
  spec.headers = {{"Content-Length", "3"}};
  EXPECT_EQ(compile_ok(spec).fixed(),
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nUser-Agent: knee/0.1\r\n\r\nabc");
  spec.headers = {{"Content-Length", "4"}};
  compile_error(spec);
  spec.body = "{seq}";
  spec.headers = {{"Content-Length", "5"}};
  compile_error(spec);
}

TEST(RequestTemplate, RejectsMissingHostAndBadTargets) {
  RequestSpec no_host;
  no_host.url.target = "/";
  compile_error(no_host);
  RequestSpec bad_target = spec_for("http://h/");
  bad_target.url.target = "/a b";
  compile_error(bad_target);
  bad_target.url.target = "";
  compile_error(bad_target);
}

// {shipment}: a tracking number of 12 bytes wherever it stands, Content-Length computed with it.
TEST(RequestTemplate, ShipmentRendersATrackingNumberOfFixedWidth) {
  RequestSpec spec = spec_for("http://127.0.0.1:8080/tracking/{shipment}", "POST");
  spec.headers = {{"X-Shipment", "{shipment}"}};
  spec.body = R"({"no":"{shipment}","atMs":{seq}})";
  const RequestTemplate t = compile_ok(spec);
  EXPECT_TRUE(t.has_placeholders());
  EXPECT_TRUE(t.uses_shipment());
  std::string out;
  t.render(0, 7, out, 42);
  EXPECT_NE(out.find("POST /tracking/KN0000000042 HTTP/1.1\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("X-Shipment: KN0000000042\r\n"), std::string::npos);
  const std::string body = R"({"no":"KN0000000042","atMs":7})";
  EXPECT_NE(out.find("Content-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos)
      << out;
  EXPECT_TRUE(out.ends_with("\r\n\r\n" + body)) << out;
  t.render(0, 7, out, 9'999'999'999);
  EXPECT_NE(out.find("/tracking/KN9999999999 "), std::string::npos);
  EXPECT_FALSE(compile_ok(spec_for("http://127.0.0.1/{conn}")).uses_shipment());
}

TEST(RequestTemplate, AUserContentLengthIsRefusedWithAShipmentInTheBody) {
  RequestSpec spec = spec_for("http://127.0.0.1/events", "POST");
  spec.body = R"({"no":"{shipment}"})";
  spec.headers = {{"Content-Length", std::to_string(spec.body.size())}};
  EXPECT_NE(compile_error(spec).find("does not match the body"), std::string::npos);
}

}  // namespace
}  // namespace knee::http
