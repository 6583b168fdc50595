#include "lab/response.h"

#include <gtest/gtest.h>

#include <string>

namespace knee::lab {
namespace {

constexpr std::string_view kDate = "Sun, 06 Nov 1994 08:49:37 GMT";

TEST(HttpDate, FormatsImfFixdate) {
  HttpDate date;
  date.refresh(784111777);  // RFC 9110 §5.6.7's example
  EXPECT_EQ(date.value(), kDate);
  date.refresh(0);
  EXPECT_EQ(date.value(), "Thu, 01 Jan 1970 00:00:00 GMT");
}

TEST(FixedResponse, KeepAliveHasNoConnectionField) {
  FixedResponse r = FixedResponse::make(200, "application/json", R"({"ok":true})");
  std::string out;
  r.append_to(out, kDate, ConnectionMode::kKeepAlive, false);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
            "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n{\"ok\":true}");
}

TEST(FixedResponse, CloseAndHttp10KeepAliveSayIt) {
  FixedResponse r = FixedResponse::make(405, "application/json", "{}", "Allow: GET, HEAD\r\n");
  std::string out;
  r.append_to(out, kDate, ConnectionMode::kClose, false);
  EXPECT_EQ(out,
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nAllow: GET, HEAD\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
            "Connection: close\r\n\r\n{}");
  out.clear();
  r.append_to(out, kDate, ConnectionMode::kKeepAlive10, false);
  EXPECT_NE(out.find("\r\nConnection: keep-alive\r\n\r\n{}"), std::string::npos);
}

TEST(FixedResponse, HeadOnlyKeepsTheLengthAndDropsTheBody) {
  FixedResponse r = FixedResponse::make(200, "application/json", "12345");
  std::string out;
  r.append_to(out, kDate, ConnectionMode::kKeepAlive, true);
  EXPECT_NE(out.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_TRUE(out.ends_with("\r\n\r\n"));
}

TEST(AppendResponse, MatchesAFixedResponseWithTheSameParts) {
  FixedResponse fixed = FixedResponse::make(404, "application/json", R"({"error":"not found"})");
  std::string a;
  std::string b;
  fixed.append_to(a, kDate, ConnectionMode::kClose, false);
  append_response(b, 404, "application/json", R"({"error":"not found"})", kDate,
                  ConnectionMode::kClose, false);
  EXPECT_EQ(a, b);
}

TEST(ReasonPhrase, NamesTheLabsStatuses) {
  EXPECT_EQ(reason_phrase(414), "URI Too Long");
  // Regression (a new user's trial): the header timeout's answer read "408 Unknown".
  EXPECT_EQ(reason_phrase(408), "Request Timeout");
  EXPECT_EQ(reason_phrase(431), "Request Header Fields Too Large");
  EXPECT_EQ(reason_phrase(299), "Unknown");
}

}  // namespace
}  // namespace knee::lab
