// HTTP/1.1 responses of the lab server (RFC 9112 §4, RFC 9110 §6.6.1, §8.6, §15), assembled by
// appending to a connection's output buffer.
//
// Every response carries Content-Type, Content-Length, Date and, when the connection will not
// persist, "Connection: close" (for an HTTP/1.0 client that asked to persist, "Connection:
// keep-alive"). Responses whose body never changes are precomputed once (FixedResponse), so the
// hot path is four appends; other bodies go through append_response().
//
// Ownership: the caller owns the output string; appending reuses its capacity. Thread-safety:
// FixedResponse is immutable after make(); an HttpDate belongs to one thread.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace knee::lab {

// How the response ends the exchange, which picks its Connection field.
enum class ConnectionMode : uint8_t {
  kKeepAlive,    // HTTP/1.1 persists: no Connection field
  kKeepAlive10,  // HTTP/1.0 client asked to persist: "Connection: keep-alive"
  kClose,        // the server closes after this response: "Connection: close"
};

// The reason phrase for the status codes the lab sends ("Not Found"); "Unknown" otherwise.
std::string_view reason_phrase(int status);

// The Date field value (IMF-fixdate, RFC 9110 §5.6.7), recomputed only when the second changes.
class HttpDate {
 public:
  HttpDate() { refresh(std::time(nullptr)); }
  // Sets the date to `now` (seconds since the epoch, wall time: Date is a calendar time).
  void refresh(std::time_t now);
  // "Sun, 06 Nov 1994 08:49:37 GMT": always 29 bytes.
  std::string_view value() const { return {text_, 29}; }

 private:
  std::time_t second_ = -1;
  char text_[30] = {};
};

// A response whose status, fields and body never change, with its head preformatted.
class FixedResponse {
 public:
  FixedResponse() = default;
  // `extra_fields` are complete field lines ("Allow: GET, HEAD\r\n") placed before Date.
  static FixedResponse make(int status, std::string_view content_type, std::string body,
                            std::string_view extra_fields = {});

  int status() const { return status_; }
  std::string_view body() const { return body_; }

  // Appends the whole response; head_only leaves out the body (a HEAD request, RFC 9110 §9.3.2),
  // keeping Content-Length as for GET.
  void append_to(std::string& out, std::string_view date, ConnectionMode mode,
                 bool head_only) const;

 private:
  int status_ = 0;
  std::string head_;  // status line, Content-Type, Content-Length, extras, "Date: "
  std::string body_;
};

// Appends a response with any status and body: the same fields as FixedResponse, formatted now.
void append_response(std::string& out, int status, std::string_view content_type,
                     std::string_view body, std::string_view date, ConnectionMode mode,
                     bool head_only);

}  // namespace knee::lab
