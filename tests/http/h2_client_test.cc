// H2Request: a RequestSpec as HTTP/2 fields (RFC 9113 §8.2.2, §8.3.1), and H2Client's error
// names.
#include "http/h2_client.h"

#include <gtest/gtest.h>

#include <string>

namespace knee::http {
namespace {

RequestSpec spec_for(const std::string& url) {
  RequestSpec s;
  s.url = *parse_url(url);
  return s;
}

std::string field(const H2Request& r, const std::string& name) {
  for (const auto& [n, v] : r.fields) {
    if (n == name) return v;
  }
  return "<none>";
}

TEST(H2Request, PseudoHeadersComeFirstAndConnectionFieldsAreDropped) {
  RequestSpec s = spec_for("https://a.test:8443/items?id=7");
  s.method = "POST";
  s.headers = {
      {"Host", "b.test"}, {"Connection", "keep-alive"}, {"X-Trace", "on"}, {"Keep-Alive", "5"}};
  s.body = "hello";
  auto r = H2Request::compile(s);
  ASSERT_TRUE(r) << r.status().message();
  ASSERT_GE(r->fields.size(), 4u);
  EXPECT_EQ(r->fields[0], (std::pair<std::string, std::string>{":method", "POST"}));
  EXPECT_EQ(r->fields[1], (std::pair<std::string, std::string>{":scheme", "https"}));
  EXPECT_EQ(r->fields[2].first, ":authority");
  EXPECT_EQ(r->fields[2].second, "b.test");  // the user's Host wins, as over HTTP/1.1
  EXPECT_EQ(r->fields[3], (std::pair<std::string, std::string>{":path", "/items?id=7"}));
  EXPECT_EQ(field(*r, "x-trace"), "on");  // lower-case names (RFC 9113 §8.2.1)
  EXPECT_EQ(field(*r, "connection"), "<none>");
  EXPECT_EQ(field(*r, "keep-alive"), "<none>");
  EXPECT_EQ(field(*r, "user-agent"), "knee/0.1");
  EXPECT_EQ(field(*r, "content-length"), "5");
  EXPECT_FALSE(r->has_placeholders);
}

TEST(H2Request, PlaceholdersExpandPerConnectionAndRequest) {
  RequestSpec s = spec_for("http://127.0.0.1:8080/c/{conn}/s/{seq}");
  s.method = "PUT";
  s.body = "{\"seq\": {seq}}";
  auto r = H2Request::compile(s);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_TRUE(r->has_placeholders);
  EXPECT_EQ(field(*r, "content-length"), "<none>");  // known once expanded
  H2Request out;
  r->render(3, 120, out);
  EXPECT_EQ(field(out, ":path"), "/c/3/s/120");
  EXPECT_EQ(out.body, "{\"seq\": 120}");
  EXPECT_EQ(field(out, "content-length"), "12");
  r->render(4, 7, out);  // reused: nothing of the previous rendering stays
  EXPECT_EQ(field(out, ":path"), "/c/4/s/7");
  EXPECT_EQ(field(out, "content-length"), "10");
}

TEST(H2Request, TheHttp11ChecksHoldToo) {
  RequestSpec s = spec_for("http://127.0.0.1/");
  s.headers = {{"X-Bad", "a\r\nb"}};
  EXPECT_FALSE(H2Request::compile(s));
}

TEST(H2Client, NamesErrorCodesAsRfc9113Does) {
  EXPECT_EQ(H2Client::error_name(0), "NO_ERROR");
  EXPECT_EQ(H2Client::error_name(7), "REFUSED_STREAM");
  EXPECT_EQ(H2Client::error_name(13), "HTTP_1_1_REQUIRED");
  EXPECT_EQ(H2Client::error_name(0x1f), "0x1f");
}

}  // namespace
}  // namespace knee::http
