// ResponseParser: an incremental HTTP/1.1 response parser for the load generator's hot path.
//
// Bytes go in as they arrive from the socket, split at any boundary; the parser finds where the
// response ends and records what the engine counts: status code, decoded body bytes, whether
// the connection may be reused, or why the bytes were not HTTP. It does not keep header values
// or the body: only Content-Length, Transfer-Encoding and Connection matter, tokenised on the fly
// into a few fixed-size fields. feed() never allocates and makes no virtual calls; the head
// (status line, fields, chunk lines, trailers) is a byte-at-a-time state machine; what is whole
// in the buffer is taken in one step instead (the usual "HTTP/1.x NNN " start, a whole field
// line, a field name, a skipped value and its CRLF), with the outcome and the bytes consumed the
// byte loop's, which reads what it declines; body bytes are skipped in bulk. The fuzz target
// (tests/fuzz/response_parser_fuzz.cc) holds the two paths to the same outcome.
//
// Sources:
//   RFC 9112 §4 status line; §2.2 a lone LF is accepted as a line end, a CR must precede LF;
//   §5 field lines (names case-insensitive, obs-fold in a response is read as SP, §5.2);
//   §6.3 message body length, in order: HEAD, 1xx, 204 and 304 carry no body; Transfer-Encoding
//        with chunked as the final coding -> chunked, other Transfer-Encoding -> until close;
//        Content-Length (equal duplicates and lists "5, 5" accepted, conflicts are errors,
//        RFC 9110 §8.6); neither -> until close;
//   §7.1 chunked coding with chunk extensions (skipped) and trailer fields (skipped);
//   §9.3 persistence: HTTP/1.1 persists unless "Connection: close"; HTTP/1.0 only with
//        "Connection: keep-alive"; a close-delimited body, or Transfer-Encoding together with
//        Content-Length or in HTTP/1.0 (§6.1), ends the connection;
//   RFC 9110 §15.2 interim 1xx responses (100 Continue, 103 Early Hints) are skipped and parsing
//        continues with the final response; 101 Switching Protocols ends parsing as a final
//        response without body whose connection is no longer HTTP/1.1 (keep_alive() false).
//
// Limits: the status line plus header section, each chunk-size line and the trailer section are
// each at most kMaxHeadBytes (64 KiB); a Content-Length or chunk size must fit in 64 bits.
//
// Ownership and thread-safety: a ResponseParser is a small value owned by one connection and
// used by one thread; it holds no pointer to the bytes fed to it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace knee::http {

class ResponseParser {
 public:
  enum class State {
    kNeedMore,  // the response is incomplete: feed more bytes, or call on_eof() at close
    kComplete,  // one final response was parsed; status_code(), body_bytes(), keep_alive() hold
    kError,     // the bytes are not a valid HTTP/1.1 response; error() says why
  };

  static constexpr size_t kMaxHeadBytes = 64 * 1024;

  ResponseParser() { reset(); }

  // Prepares for the next response on the connection. `head_request`: the request was HEAD, so
  // the response has no body whatever its Content-Length or Transfer-Encoding say.
  void reset(bool head_request = false);

  // Parses up to `len` bytes of `data`. Returns the bytes consumed: all `len` while the response
  // stays incomplete; on completion, the bytes up to and including the response's last byte, so
  // whatever follows (a pipelined next response) is left for the caller to feed after reset();
  // on error, the bytes examined so far. After kComplete or kError it consumes nothing (returns 0)
  // until reset(). Allocation-free.
  size_t feed(const char* data, size_t len);

  // The peer closed the connection (read returned 0). Completes a close-delimited body
  // (kComplete, keep_alive() false); leaves a complete response or an error as they are; else
  // kError with error() "EOF mid-response", or "EOF before any response byte" when
  // !received_any() (an idle keep-alive connection the server closed).
  State on_eof();

  State state() const { return state_; }

  // The status code (100..999) of the response being parsed or completed; 0 before it is read.
  // After interim 1xx responses, the final response's code.
  int status_code() const { return status_code_; }

  // Whether the connection can carry the next request (meaningful once kComplete): false for
  // HTTP/1.0 without "Connection: keep-alive", for "Connection: close", for close-delimited
  // bodies, for 101, and for Transfer-Encoding with Content-Length or in HTTP/1.0.
  bool keep_alive() const { return keep_alive_; }

  // True once any byte has been fed since reset() (interim 1xx responses included).
  bool received_any() const { return received_any_; }

  // Payload bytes of the final response's body so far: Content-Length or close-delimited bytes,
  // or the chunked payload without chunk-size lines, CRLFs and trailers.
  uint64_t body_bytes() const { return body_bytes_; }

  // Why the state is kError (a static string); empty otherwise.
  std::string_view error() const { return error_; }

  // Where an incomplete response stands, for a connection that closed or failed mid-response:
  // the head (status line, fields) was complete and body bytes were expected.
  bool in_body() const {
    return phase_ == Phase::kBodyLength || phase_ == Phase::kBodyClose ||
           (phase_ >= Phase::kChunkSize && phase_ <= Phase::kTrailerLine);
  }
  // The body length the head announced (Content-Length), when it did and the body is not
  // chunked.
  std::optional<uint64_t> announced_body_bytes() const {
    if (has_content_length_ && !te_present_) return content_length_;
    return std::nullopt;
  }

 private:
  enum class Phase : uint8_t {
    kStatusVersion,     // "HTTP/1." matched one byte at a time, when not taken in one step
    kStatusMinor,       // the minor version digit
    kStatusSpace,       // SP after the version
    kStatusCode,        // three digits
    kStatusAfterCode,   // SP before the reason phrase, or the line end
    kStatusReason,      // reason phrase, skipped to the line end
    kHeaderLineStart,   // a field name's first byte, obs-fold, or the empty line ending the head
    kHeaderName,        // field name up to ':'
    kHeaderValue,       // value of a field that matters, tokenised
    kHeaderValueSkip,   // value of any other field, skipped
    kChunkSize,         // hex digits, optional BWS
    kChunkExt,          // chunk extensions, skipped to the line end
    kChunkData,         // chunk payload, bulk
    kChunkDataEnd,      // the CRLF after the payload
    kTrailerLineStart,  // a trailer field, or the empty line ending the message
    kTrailerLine,       // trailer field, skipped
    kBodyLength,        // Content-Length payload, bulk
    kBodyClose,         // close-delimited payload, bulk
    kDone,
  };
  enum class Field : uint8_t { kNone, kOther, kContentLength, kTransferEncoding, kConnection };

  static constexpr size_t kNameCapacity = 20;   // "transfer-encoding" and shorter names
  static constexpr size_t kTokenCapacity = 12;  // "keep-alive", "chunked", "close"

  void start_response();  // per-response fields, for the first and each interim response
  void start_value();
  void value_byte(char c);
  // Appends p[0, n) lower-cased to the field name (name_, name_len_), or marks it too long to
  // matter (name_len_ kNameCapacity + 1).
  void append_name(const char* p, size_t n);
  // Head bytes the current section may still take before kMaxHeadBytes.
  size_t room() const { return kMaxHeadBytes - std::min(section_bytes_, kMaxHeadBytes); }
  // A value that ended at a line end is whole once the next line is no obs-fold: finishes it.
  // False when that failed (state_ kError).
  bool close_pending_value();
  // A field line ended: its value waits for the next line (a fold may continue it).
  void end_field_line();
  // Takes the field-name bytes (tchar) that follow in data[i, len), at most room() of them,
  // appending them to the name and counting them in the section; returns the index of the
  // first byte it did not take.
  size_t take_name(const char* data, size_t i, size_t len);
  // Which field `name` (any case) is, for the ones that matter.
  static Field field_named(std::string_view name);
  // The field name just read (any case; empty when too long to matter) decides what its value
  // is parsed for.
  void end_of_name(std::string_view name);
  // Takes a whole "name: value CRLF" line at data[i] when all of it is in the buffer, fits in
  // room() and starts as a field line: first finishes the value the previous line left pending
  // (which may fail), then the name and value (advancing i, on a failure to just past the byte
  // the byte loop fails at); false leaves the line to that loop.
  bool take_field_line(const char* data, size_t& i, size_t len);
  // A Content-Length value of 1..18 digits, or a Transfer-Encoding or Connection value of one
  // token no longer than kTokenCapacity, v[0, n) between optional OWS, taken as value_byte()
  // would take it byte by byte after start_value() (token_ended_ included); false for anything
  // else (lists, parameters, longer values, bad bytes), left untouched for the byte loop.
  bool take_simple_value(const char* v, size_t n);
  // Skips data[i, len) up to its first CR or LF, at most room() bytes (counted in the section),
  // so the byte that crosses the limit fails in the byte loop; returns the index it stopped at.
  size_t skip_line(const char* data, size_t i, size_t len);
  // Takes a whole CRLF at data[i] when it is there and fits in room() (advancing i), so the
  // line's end costs no turn of the byte loop; false leaves it to that loop.
  bool take_crlf(const char* data, size_t& i, size_t len);
  void finish_element();
  void finish_value();
  void end_of_head();
  void end_chunk_size_line();
  void complete();
  void fail(const char* why);
  bool token_is(std::string_view lower) const;
  const char* limit_message() const;

  State state_ = State::kNeedMore;
  Phase phase_ = Phase::kStatusVersion;
  const char* error_ = "";
  bool head_request_ = false;
  bool received_any_ = false;
  bool cr_pending_ = false;  // a CR was read; the next byte must be LF
  bool keep_alive_ = false;

  // Status line.
  uint8_t match_pos_ = 0;
  uint8_t http_minor_ = 0;
  uint8_t code_digits_ = 0;
  int status_code_ = 0;

  // Header section.
  size_t section_bytes_ = 0;  // bytes of the head, current chunk-size line, or trailer section
  Field field_ = Field::kNone;
  bool value_pending_ = false;  // a value ended at a line end; obs-fold may still extend it
  uint8_t name_len_ = 0;        // kNameCapacity + 1: too long to matter
  char name_[kNameCapacity] = {};
  uint8_t token_len_ = 0;      // kTokenCapacity + 1: too long to matter
  bool token_ended_ = false;   // OWS followed the token
  bool token_params_ = false;  // ';' parameters follow the token; skipped
  char token_[kTokenCapacity] = {};
  uint8_t element_digits_ = 0;  // Content-Length element digits (0 or 1: any)
  uint64_t element_value_ = 0;
  bool has_content_length_ = false;
  uint64_t content_length_ = 0;
  bool te_present_ = false;
  bool te_chunked_last_ = false;
  bool conn_close_ = false;
  bool conn_keep_alive_ = false;

  // Body.
  uint64_t remaining_ = 0;  // bytes left of the Content-Length body or of the current chunk
  uint64_t body_bytes_ = 0;
  bool chunk_digits_ = false;
  bool chunk_ws_ = false;  // BWS after the size; only ';' or the line end may follow
};

}  // namespace knee::http
