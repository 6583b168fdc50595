// RequestSpec and RequestTemplate: the HTTP/1.1 request a load test sends, serialised once.
//
// A RequestSpec is what the user asked for (method, URL, headers, body). compile() validates it
// and serialises it into a RequestTemplate: literal byte runs plus slots for the placeholders
// {conn} (the connection's index) and {seq} (the connection's request counter), which may appear
// in the request target, in header values and in the body. render() then only appends byte runs
// and formats integers: no parsing, no regex, and no allocation once `out` has capacity. A request
// without placeholders is serialised completely at compile time (fixed()).
//
// {shipment} (a shipment of the lab's data set, drawn by the load engine: engine/shipments.h)
// renders as its tracking number, "KN" and the id in 10 zero-padded digits (store::tracking_number
// makes the same; tests/store/data_test.cc holds them equal), always 12 bytes, 1 <= id <=
// kMaxShipmentId.
//
// Wire format (RFC 9112 §3 request line, §5 fields, §6.2 Content-Length):
//   METHOD SP target SP "HTTP/1.1" CRLF
//   Host: <url.authority()>          unless the spec has a Host header
//   <spec headers, in order>
//   Content-Length: <body bytes>     when the body is non-empty or the method is POST/PUT/PATCH
//   User-Agent: knee/0.1             unless the spec has a User-Agent header
//   CRLF
//   <body>
//
// Ownership and thread-safety: both are plain values. A compiled RequestTemplate is immutable, so
// render() is safe to call from several threads at once, each with its own `out`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "http/url.h"

namespace knee::http {

// The largest id {shipment} renders in its 10 digits.
inline constexpr uint64_t kMaxShipmentId = 9'999'999'999;

// Appends {shipment}'s rendering of `id`: "KN" and its last 10 digits, zero-padded (12 bytes).
void append_tracking_number(std::string& out, uint64_t id);

struct RequestSpec {
  std::string method = "GET";  // an RFC 9110 §5.6.2 token, case-sensitive ("GET", "POST")
  Url url;                     // from parse_url(); url.target is sent as the request target
  std::vector<std::pair<std::string, std::string>> headers;  // name, value; sent in this order
  std::string body;  // sent as is; Content-Length counts its rendered bytes
};

class RequestTemplate {
 public:
  // An empty template (renders nothing); use compile() for a real one.
  RequestTemplate() = default;

  // Validates and serialises `spec`.
  // Errors (kInvalidArgument, naming the offending input and the accepted form): a method that is
  // not a token (RFC 9110 tchar: letters, digits, !#$%&'*+-.^_`|~); an empty host; a request
  // target that is empty or holds spaces or control characters; a header name that is not a
  // token; a header value with CR, LF or NUL; a Transfer-Encoding header (knee frames bodies with
  // Content-Length); a Content-Length header that differs from the body size, or any
  // Content-Length header when the body holds placeholders.
  static core::Result<RequestTemplate> compile(const RequestSpec& spec);

  // True if the target, a header value or the body holds {conn}, {seq} or {shipment}.
  bool has_placeholders() const { return has_placeholders_; }
  // True if it holds {shipment}: the caller draws an id for every rendering.
  bool uses_shipment() const { return uses_shipment_; }

  // Clears `out` and writes the whole request with {conn} -> conn and {seq} -> seq (decimal),
  // {shipment} -> the tracking number of `shipment` (1..kMaxShipmentId; larger ids are cut to
  // their last 10 digits). Allocates only if `out` lacks capacity; the rendered size grows only
  // with the digit counts.
  void render(uint64_t conn, uint64_t seq, std::string& out, uint64_t shipment = 1) const;

  // The complete request bytes. Precondition: !has_placeholders() (else asserts; empty string).
  const std::string& fixed() const;

  // True for HEAD: the response carries no body whatever its headers say (RFC 9112 §6.3).
  bool is_head() const { return is_head_; }

 private:
  enum class PieceKind : uint8_t { kLiteral, kConn, kSeq, kShipment, kContentLength };
  struct Piece {
    PieceKind kind;
    uint32_t offset;  // kLiteral: the run text_[offset, offset + size)
    uint32_t size;
  };

  void add_literal(std::string_view s);
  // Splits out {conn}, {seq} and {shipment}.
  void add_expanded(std::string_view s, bool in_body);
  void add_slot(PieceKind kind);

  std::string text_;  // every literal run, in order; the full request when !has_placeholders_
  std::vector<Piece> pieces_;
  // Content-Length of a body with placeholders: literal bytes plus the digits of each slot.
  uint64_t body_literal_bytes_ = 0;
  uint64_t body_conn_slots_ = 0;
  uint64_t body_seq_slots_ = 0;
  bool has_placeholders_ = false;
  bool uses_shipment_ = false;
  bool is_head_ = false;
};

}  // namespace knee::http
