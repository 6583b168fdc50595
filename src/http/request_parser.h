// The server-side HTTP/1.1 request parser: reads one request head (request line and header
// section, RFC 9112 §2-§3, §5) from the front of a connection's accumulated read buffer and
// reports how it is framed (RFC 9112 §6: Content-Length; Transfer-Encoding is refused).
//
// Bytes in, no I/O: the caller appends what it reads to its buffer and calls parse() with the
// bytes from the start of the request. The parser is resumable: it remembers how far it has
// scanned, so calling again after more bytes arrive only looks at the new bytes (a head that
// arrives one byte at a time costs O(size), not O(size^2)). After kComplete the caller drops
// head().request_bytes() bytes from the front (the body, if any, is the caller's business) and
// calls reset() before the next pipelined request.
//
// Limits (RFC 9112 §3: a server MUST be able to handle request lines at least as long as the URIs
// it serves, and answers 414 or 431 past its limits): the request line may be up to
// kMaxRequestLineBytes long, the header section up to the parser's limit (kMaxHeaderSectionBytes
// unless given another, at most kMaxHeaderSectionLimit). So a buffer of kMaxHeadBytes always
// suffices to reach a decision.
//
// Strictness: the request line must be exactly `method SP target SP HTTP/d.d`; field names are
// tokens with no whitespace before the colon (RFC 9112 §5.1); obs-fold (a field line starting
// with SP or HTAB) is rejected (RFC 9112 §5.2); bare LF line ends are accepted (RFC 9112 §2.2),
// bare CR is not; up to kMaxLeadingEmptyBytes of empty lines before the request line are
// skipped (RFC 9112 §2.2). An HTTP/1.1 request needs exactly one Host field (RFC 9112 §3.2).
//
// Ownership: RequestHead holds string_views into the buffer given to parse(); they are valid
// while that buffer is unchanged. Thread-safety: a parser belongs to one connection; no shared
// state, no allocation.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace knee::http {

// Longest accepted request line in bytes, without its CRLF. Longer: kUriTooLong (414).
inline constexpr size_t kMaxRequestLineBytes = 8192;
// Longest accepted header section in bytes by default: every field line with its line end, plus
// the final empty line. Longer: kHeaderFieldsTooLarge (431). 8 KiB, as nginx's
// large_client_header_buffers line size.
inline constexpr size_t kMaxHeaderSectionBytes = 8192;
// The largest header-section limit a parser may be given, in bytes.
inline constexpr size_t kMaxHeaderSectionLimit = 16384;
// Empty lines (CRLF or LF) tolerated before a request line, in bytes. More: kBadRequest.
inline constexpr size_t kMaxLeadingEmptyBytes = 16;
// Bytes after which parse() has certainly decided (complete or an error): size a read buffer to
// at least this.
inline constexpr size_t kMaxHeadBytes =
    kMaxLeadingEmptyBytes + kMaxRequestLineBytes + 2 + kMaxHeaderSectionLimit;

enum class ParseOutcome : uint8_t {
  kNeedMore,              // the head is not complete yet; call again with more bytes
  kComplete,              // head() describes the request
  kBadRequest,            // 400: malformed request line, field line, Content-Length, obs-fold,
                          //      missing or repeated Host in HTTP/1.1
  kUriTooLong,            // 414: request line longer than kMaxRequestLineBytes
  kHeaderFieldsTooLarge,  // 431: header section longer than kMaxHeaderSectionBytes
  kNotImplemented,        // 501: Transfer-Encoding in a request (RFC 9112 §6.1)
  kVersionNotSupported,   // 505: a well-formed HTTP-version whose major version is not 1
};

// The status code a server answers an error outcome with (400, 414, 431, 501, 505); 0 for
// kNeedMore and kComplete.
int error_status(ParseOutcome outcome);

// A parsed request head. Views point into the buffer passed to RequestParser::parse().
struct RequestHead {
  std::string_view method;  // case-sensitive token, "GET" (RFC 9110 §9.1)
  std::string_view target;  // request-target as sent: "/tracking?no=1", "http://h/x", "*"
  int minor_version = 1;    // 0 for HTTP/1.0, 1 for HTTP/1.1 (and HTTP/1.2+, RFC 9110 §6.2)
  // Whether the connection persists after this exchange (RFC 9112 §9.3): a "close" connection
  // option ends it; otherwise HTTP/1.1 persists and HTTP/1.0 persists only with "keep-alive".
  bool keep_alive = true;
  uint64_t content_length = 0;  // body length in bytes; 0 without Content-Length
  size_t head_bytes = 0;        // bytes of the head: leading empty lines through the final CRLF
  std::string_view fields;      // the field lines as sent, without the final empty line

  // Bytes the whole request occupies in the stream: head plus body.
  uint64_t request_bytes() const { return head_bytes + content_length; }
  // The value of the first field named `name` (case-insensitive), without surrounding
  // whitespace; nullopt when absent. Scans `fields`: meant for rare lookups, not a hot path.
  std::optional<std::string_view> field(std::string_view name) const;
};

class RequestParser {
 public:
  // `max_header_bytes`: the header section's limit, at most kMaxHeaderSectionLimit (asserts).
  explicit RequestParser(size_t max_header_bytes = kMaxHeaderSectionBytes)
      : max_header_bytes_(max_header_bytes) {
    assert(max_header_bytes <= kMaxHeaderSectionLimit);
  }

  // Parses the request head at the front of `buffer`, which must begin with the same bytes as in
  // earlier calls since the last reset() (it may only have grown, and may have moved: the lab
  // server shifts unread bytes to the front of its buffer). Returns kNeedMore until the head is
  // complete, then kComplete (head() is valid, its views into the `buffer` of the call that
  // completed it) or an error outcome; once decided, further calls return the same outcome.
  ParseOutcome parse(std::string_view buffer);

  // The parsed head; valid after parse() returned kComplete.
  const RequestHead& head() const { return head_; }
  // A short reason after an error outcome ("bad field line"); empty otherwise.
  std::string_view error() const { return error_; }

  // Forgets everything but the header limit, ready for the next request's bytes.
  void reset() { *this = RequestParser(max_header_bytes_); }

 private:
  ParseOutcome fail(ParseOutcome outcome, std::string_view why);
  ParseOutcome check_request_line(std::string_view line);
  size_t request_line_too_long_at(std::string_view buf) const;
  ParseOutcome finish(std::string_view buffer, size_t fields_end, size_t head_end);

  static constexpr size_t kNone = static_cast<size_t>(-1);

  size_t max_header_bytes_;
  ParseOutcome outcome_ = ParseOutcome::kNeedMore;
  bool started_ = false;             // past the leading empty lines
  size_t pos_ = 0;                   // next byte to scan
  size_t head_start_ = 0;            // first byte of the request line
  size_t method_checked_ = 0;        // request-line bytes already checked as method chars
  size_t request_line_end_ = kNone;  // end of the request line (before CR LF)
  size_t fields_start_ = 0;          // first byte after the request line's LF
  size_t line_start_ = 0;            // first byte of the line being scanned
  // The method and target in the buffer, made views by finish() (regression: views kept from the
  // call that saw the request line pointed at other bytes once the server moved its buffer, so
  // a pipelined request whose head came in two reads was answered for another target).
  size_t method_at_ = 0, method_size_ = 0;
  size_t target_at_ = 0, target_size_ = 0;
  RequestHead head_;
  std::string_view error_;
};

}  // namespace knee::http
