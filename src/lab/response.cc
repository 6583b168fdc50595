#include "lab/response.h"

#include <charconv>

namespace knee::lab {
namespace {

// The end of the head after the Date value, by connection mode.
std::string_view head_end(ConnectionMode mode) {
  switch (mode) {
    case ConnectionMode::kKeepAlive:
      return "\r\n\r\n";
    case ConnectionMode::kKeepAlive10:
      return "\r\nConnection: keep-alive\r\n\r\n";
    case ConnectionMode::kClose:
      break;
  }
  return "\r\nConnection: close\r\n\r\n";
}

void append_status_line(std::string& out, int status) {
  char digits[8];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, status);
  out.append("HTTP/1.1 ");
  out.append(digits, end);
  out.push_back(' ');
  out.append(reason_phrase(status));
  out.append("\r\n");
}

void append_length(std::string& out, size_t bytes) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, bytes);
  out.append("Content-Length: ");
  out.append(digits, end);
  out.append("\r\n");
}

}  // namespace

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";  // RFC 9110 §15.5.9
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";  // RFC 9110 §15.5.14
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

void HttpDate::refresh(std::time_t now) {
  if (now == second_) return;
  second_ = now;
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&now, &tm);
  auto two = [](char* p, int v) {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
  };
  char* p = text_;
  auto copy3 = [&](const char* s) {
    p[0] = s[0];
    p[1] = s[1];
    p[2] = s[2];
    p += 3;
  };
  copy3(kDays[tm.tm_wday % 7]);
  *p++ = ',';
  *p++ = ' ';
  two(p, tm.tm_mday);
  p += 2;
  *p++ = ' ';
  copy3(kMonths[tm.tm_mon % 12]);
  *p++ = ' ';
  int year = (tm.tm_year + 1900) % 10000;
  two(p, year / 100);
  two(p + 2, year % 100);
  p += 4;
  *p++ = ' ';
  two(p, tm.tm_hour);
  p[2] = ':';
  two(p + 3, tm.tm_min);
  p[5] = ':';
  two(p + 6, tm.tm_sec);
  p += 8;
  copy3(" GM");
  *p++ = 'T';
  *p = '\0';
}

FixedResponse FixedResponse::make(int status, std::string_view content_type, std::string body,
                                  std::string_view extra_fields) {
  FixedResponse r;
  r.status_ = status;
  append_status_line(r.head_, status);
  r.head_.append("Content-Type: ");
  r.head_.append(content_type);
  r.head_.append("\r\n");
  append_length(r.head_, body.size());
  r.head_.append(extra_fields);
  r.head_.append("Date: ");
  r.body_ = std::move(body);
  return r;
}

void FixedResponse::append_to(std::string& out, std::string_view date, ConnectionMode mode,
                              bool head_only) const {
  out.append(head_);
  out.append(date);
  out.append(head_end(mode));
  if (!head_only) out.append(body_);
}

void append_response(std::string& out, int status, std::string_view content_type,
                     std::string_view body, std::string_view date, ConnectionMode mode,
                     bool head_only) {
  append_status_line(out, status);
  out.append("Content-Type: ");
  out.append(content_type);
  out.append("\r\n");
  append_length(out, body.size());
  out.append("Date: ");
  out.append(date);
  out.append(head_end(mode));
  if (!head_only) out.append(body);
}

}  // namespace knee::lab
