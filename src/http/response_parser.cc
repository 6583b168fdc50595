#include "http/response_parser.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

namespace knee::http {
namespace {

constexpr std::string_view kHttpPrefix = "HTTP/1.";
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

// RFC 9110 §5.6.2 tchar, as a table so the per-byte test is one load.
constexpr std::array<bool, 256> make_tchar_table() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[static_cast<size_t>(c)] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<size_t>(c)] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<size_t>(c)] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kTchar = make_tchar_table();

bool is_tchar(char c) { return kTchar[static_cast<unsigned char>(c)]; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ows(char c) { return c == ' ' || c == '\t'; }
char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Whether any byte of `v` is zero (the "haszero" bit trick, Hacker's Delight §6-1).
constexpr bool has_zero_byte(uint64_t v) {
  return ((v - 0x0101010101010101ULL) & ~v & 0x8080808080808080ULL) != 0;
}

// Index of the first CR or LF in [from, len), or len. Eight bytes per step while they hold
// neither: a Date or Server value is skipped in a few loads instead of a byte at a time.
size_t find_line_end(const char* data, size_t from, size_t len) {
  constexpr uint64_t kCr = 0x0d0d0d0d0d0d0d0dULL;
  constexpr uint64_t kLf = 0x0a0a0a0a0a0a0a0aULL;
  while (len - from >= 8) {
    uint64_t v;
    std::memcpy(&v, data + from, 8);
    if (has_zero_byte(v ^ kCr) || has_zero_byte(v ^ kLf)) break;
    from += 8;
  }
  while (from < len && data[from] != '\r' && data[from] != '\n') ++from;
  return from;
}

// The status line's fixed start "HTTP/1.x NNN " (13 bytes) at `p`, when it is exactly that:
// the minor version digit and the code (100..999), else nothing (the byte-at-a-time path then
// reads the same bytes and names what is wrong).
constexpr size_t kStatusStartBytes = 13;
static_assert(kHttpPrefix.size() + 6 == kStatusStartBytes);  // "x NNN "
struct StatusStart {
  uint8_t minor;
  int code;
};
std::optional<StatusStart> status_start(const char* p) {
  if (std::memcmp(p, kHttpPrefix.data(), kHttpPrefix.size()) != 0 || !is_digit(p[7]) ||
      p[8] != ' ' || !is_digit(p[9]) || !is_digit(p[10]) || !is_digit(p[11]) || p[12] != ' ') {
    return std::nullopt;
  }
  const int code = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
  if (code < 100) return std::nullopt;
  return StatusStart{static_cast<uint8_t>(p[7] - '0'), code};
}

}  // namespace

void ResponseParser::reset(bool head_request) {
  state_ = State::kNeedMore;
  error_ = "";
  head_request_ = head_request;
  received_any_ = false;
  cr_pending_ = false;
  body_bytes_ = 0;
  start_response();
}

void ResponseParser::start_response() {
  phase_ = Phase::kStatusVersion;
  keep_alive_ = false;
  match_pos_ = 0;
  http_minor_ = 0;
  code_digits_ = 0;
  status_code_ = 0;
  section_bytes_ = 0;
  field_ = Field::kNone;
  value_pending_ = false;
  name_len_ = 0;
  has_content_length_ = false;
  content_length_ = 0;
  te_present_ = false;
  te_chunked_last_ = false;
  conn_close_ = false;
  conn_keep_alive_ = false;
  remaining_ = 0;
}

void ResponseParser::fail(const char* why) {
  state_ = State::kError;
  error_ = why;
  phase_ = Phase::kDone;
}

void ResponseParser::complete() {
  state_ = State::kComplete;
  phase_ = Phase::kDone;
}

bool ResponseParser::token_is(std::string_view lower) const {
  return token_len_ <= kTokenCapacity && token_len_ == lower.size() &&
         std::string_view(token_, token_len_) == lower;
}

const char* ResponseParser::limit_message() const {
  switch (phase_) {
    case Phase::kStatusVersion:
    case Phase::kStatusMinor:
    case Phase::kStatusSpace:
    case Phase::kStatusCode:
    case Phase::kStatusAfterCode:
    case Phase::kStatusReason:
      return "status line longer than 64 KiB";
    case Phase::kChunkSize:
    case Phase::kChunkExt:
    case Phase::kChunkDataEnd:
      return "chunk-size line longer than 64 KiB";
    case Phase::kTrailerLineStart:
    case Phase::kTrailerLine:
      return "trailer section longer than 64 KiB";
    default:
      return "header section longer than 64 KiB";
  }
}

void ResponseParser::start_value() {
  token_len_ = 0;
  token_ended_ = false;
  token_params_ = false;
  element_digits_ = 0;
  element_value_ = 0;
}

// One byte of a Content-Length, Transfer-Encoding or Connection value (not CR or LF).
void ResponseParser::value_byte(char c) {
  if (c == ',') {
    finish_element();
    start_value();
    return;
  }
  if (is_ows(c)) {
    if (token_len_ > 0 || element_digits_ > 0) token_ended_ = true;
    return;
  }
  if (field_ == Field::kContentLength) {
    if (token_ended_ || !is_digit(c)) return fail("bad Content-Length");
    const auto digit = static_cast<uint64_t>(c - '0');
    if (element_value_ > (kMaxU64 - digit) / 10) return fail("Content-Length too large");
    element_value_ = element_value_ * 10 + digit;
    element_digits_ = 1;
    return;
  }
  // Transfer-Encoding and Connection: a token, maybe followed by ";parameters" (skipped).
  if (token_params_) return;
  if (c == ';') {
    token_params_ = true;
    return;
  }
  if (token_ended_ || !is_tchar(c)) {
    token_len_ = kTokenCapacity + 1;  // not a single token: matches nothing
    token_params_ = true;
    return;
  }
  if (token_len_ < kTokenCapacity) {
    token_[token_len_] = to_lower(c);
    ++token_len_;
  } else {
    token_len_ = kTokenCapacity + 1;
  }
}

void ResponseParser::finish_element() {
  switch (field_) {
    case Field::kContentLength:
      if (element_digits_ == 0) return fail("bad Content-Length");
      if (has_content_length_ && content_length_ != element_value_) {
        return fail("conflicting Content-Length values");
      }
      has_content_length_ = true;
      content_length_ = element_value_;
      return;
    case Field::kTransferEncoding:
      if (token_len_ == 0) return;  // empty list element
      te_present_ = true;
      te_chunked_last_ = token_is("chunked");
      return;
    case Field::kConnection:
      if (token_is("close")) conn_close_ = true;
      if (token_is("keep-alive")) conn_keep_alive_ = true;
      return;
    default:
      return;
  }
}

void ResponseParser::finish_value() {
  value_pending_ = false;
  if (field_ == Field::kContentLength || field_ == Field::kTransferEncoding ||
      field_ == Field::kConnection) {
    finish_element();
  }
}

void ResponseParser::end_of_head() {
  const int code = status_code_;
  if (code >= 100 && code < 200 && code != 101) {
    start_response();  // interim response: the final one follows
    return;
  }
  keep_alive_ = http_minor_ >= 1 ? !conn_close_ : (conn_keep_alive_ && !conn_close_);
  if (code == 101) {
    keep_alive_ = false;  // the connection now speaks another protocol
    return complete();
  }
  if (head_request_ || code == 204 || code == 304) return complete();
  if (te_present_) {
    // RFC 9112 §6.1, §6.3: TE overrides CL; either with CL or in HTTP/1.0, close afterwards.
    if (has_content_length_ || http_minor_ == 0) keep_alive_ = false;
    if (te_chunked_last_) {
      phase_ = Phase::kChunkSize;
      section_bytes_ = 0;
      chunk_digits_ = false;
      chunk_ws_ = false;
      remaining_ = 0;
    } else {
      phase_ = Phase::kBodyClose;
      keep_alive_ = false;
    }
    return;
  }
  if (has_content_length_) {
    if (content_length_ == 0) return complete();
    phase_ = Phase::kBodyLength;
    remaining_ = content_length_;
    return;
  }
  phase_ = Phase::kBodyClose;
  keep_alive_ = false;
}

void ResponseParser::append_name(const char* p, size_t n) {
  if (name_len_ + n <= kNameCapacity) {
    for (size_t k = 0; k < n; ++k) name_[name_len_ + k] = to_lower(p[k]);
    name_len_ = static_cast<uint8_t>(name_len_ + n);
  } else if (n > 0) {
    name_len_ = kNameCapacity + 1;  // too long to be a field that matters
  }
}

bool ResponseParser::close_pending_value() {
  if (value_pending_) finish_value();
  return state_ == State::kNeedMore;
}

void ResponseParser::end_field_line() {
  value_pending_ = true;
  phase_ = Phase::kHeaderLineStart;
}

ResponseParser::Field ResponseParser::field_named(std::string_view name) {
  // Only three names matter; their lengths differ, so the length picks the one to compare.
  const auto is = [&](std::string_view lower) {
    for (size_t k = 0; k < lower.size(); ++k) {
      if (to_lower(name[k]) != lower[k]) return false;
    }
    return true;
  };
  switch (name.size()) {
    case 10:
      return is("connection") ? Field::kConnection : Field::kOther;
    case 14:
      return is("content-length") ? Field::kContentLength : Field::kOther;
    case 17:
      return is("transfer-encoding") ? Field::kTransferEncoding : Field::kOther;
    default:
      return Field::kOther;
  }
}

void ResponseParser::end_of_name(std::string_view name) {
  field_ = field_named(name);
  if (field_ == Field::kOther) {
    phase_ = Phase::kHeaderValueSkip;
  } else {
    start_value();
    phase_ = Phase::kHeaderValue;
  }
}

bool ResponseParser::take_field_line(const char* data, size_t& i, size_t len) {
  if (!is_tchar(data[i])) return false;  // the head's end, obs-fold, or a malformed line
  const size_t end = find_line_end(data, i, len);
  if (len - end < 2 || data[end] != '\r' || data[end + 1] != '\n') return false;
  const size_t line = end + 2 - i;
  if (line > room()) return false;
  size_t colon = i;
  while (is_tchar(data[colon])) ++colon;  // stops at the CR at the latest
  if (data[colon] != ':') return false;
  if (!close_pending_value()) {
    ++i;  // where the byte loop fails too: at the line's first byte
    return true;
  }
  end_of_name(std::string_view(data + i, colon - i));
  section_bytes_ += line;
  if (field_ != Field::kOther && !take_simple_value(data + colon + 1, end - colon - 1)) {
    for (size_t k = colon + 1; k < end; ++k) {
      value_byte(data[k]);
      if (state_ != State::kNeedMore) {
        i = k + 1;
        return true;
      }
    }
  }
  end_field_line();
  i = end + 2;
  return true;
}

bool ResponseParser::take_simple_value(const char* v, size_t n) {
  size_t from = 0;
  while (from < n && is_ows(v[from])) ++from;
  const size_t with_ows = n;
  while (n > from && is_ows(v[n - 1])) --n;
  const size_t size = n - from;
  v += from;
  if (field_ == Field::kContentLength) {
    if (size == 0 || size > 18) return false;  // 18 digits cannot overflow 64 bits
    uint64_t value = 0;
    for (size_t k = 0; k < size; ++k) {
      if (!is_digit(v[k])) return false;
      value = value * 10 + static_cast<uint64_t>(v[k] - '0');
    }
    element_value_ = value;
    element_digits_ = 1;
    token_ended_ = n < with_ows;  // as value_byte() leaves it after trailing OWS
    return true;
  }
  if (size == 0 || size > kTokenCapacity) return false;
  for (size_t k = 0; k < size; ++k) {
    if (!is_tchar(v[k])) return false;  // a list, parameters, or worse: the byte loop decides
  }
  for (size_t k = 0; k < size; ++k) token_[k] = to_lower(v[k]);
  token_len_ = static_cast<uint8_t>(size);
  token_ended_ = n < with_ows;
  return true;
}

size_t ResponseParser::skip_line(const char* data, size_t i, size_t len) {
  const size_t end = find_line_end(data, i, i + std::min(len - i, room()));
  section_bytes_ += end - i;
  return end;
}

bool ResponseParser::take_crlf(const char* data, size_t& i, size_t len) {
  if (len - i < 2 || data[i] != '\r' || data[i + 1] != '\n' || room() < 2) {
    return false;
  }
  i += 2;
  section_bytes_ += 2;
  return true;
}

size_t ResponseParser::take_name(const char* data, size_t i, size_t len) {
  const size_t end = i + std::min(len - i, room());
  const size_t from = i;
  while (i < end && is_tchar(data[i])) ++i;
  section_bytes_ += i - from;
  append_name(data + from, i - from);
  return i;
}

void ResponseParser::end_chunk_size_line() {
  if (!chunk_digits_) return fail("bad chunk size");
  section_bytes_ = 0;
  phase_ = remaining_ == 0 ? Phase::kTrailerLineStart : Phase::kChunkData;
}

size_t ResponseParser::feed(const char* data, size_t len) {
  if (state_ != State::kNeedMore || len == 0) return 0;
  received_any_ = true;
  size_t i = 0;
  while (i < len) {
    // Body bytes, in bulk.
    if (phase_ == Phase::kBodyLength || phase_ == Phase::kChunkData) {
      const uint64_t n = std::min<uint64_t>(remaining_, len - i);
      i += static_cast<size_t>(n);
      remaining_ -= n;
      body_bytes_ += n;
      if (remaining_ == 0) {
        if (phase_ == Phase::kBodyLength) {
          complete();
          return i;
        }
        phase_ = Phase::kChunkDataEnd;
        section_bytes_ = 0;
      }
      continue;
    }
    if (phase_ == Phase::kBodyClose) {
      body_bytes_ += len - i;
      return len;
    }

    // The usual status line start, in one step.
    if (phase_ == Phase::kStatusVersion && match_pos_ == 0 && !cr_pending_ &&
        len - i >= kStatusStartBytes) {
      if (auto start = status_start(data + i)) {
        http_minor_ = start->minor;
        status_code_ = start->code;
        code_digits_ = 3;
        section_bytes_ += kStatusStartBytes;
        i += kStatusStartBytes;
        phase_ = Phase::kStatusReason;
        continue;
      }
    }

    // A whole field line, in one step.
    if (phase_ == Phase::kHeaderLineStart && !cr_pending_ && take_field_line(data, i, len)) {
      if (state_ != State::kNeedMore) return i;
      continue;
    }

    // Line-oriented phases, one byte at a time.
    const char c = data[i++];
    if (++section_bytes_ > kMaxHeadBytes) {
      fail(limit_message());
      return i;
    }
    if (cr_pending_) {
      if (c != '\n') {
        fail("CR not followed by LF");
        return i;
      }
      cr_pending_ = false;
    } else if (c == '\r') {
      cr_pending_ = true;
      continue;
    }

    switch (phase_) {
      case Phase::kStatusVersion:
        if (c == kHttpPrefix[match_pos_]) {
          ++match_pos_;
          if (match_pos_ == kHttpPrefix.size()) phase_ = Phase::kStatusMinor;
        } else if (match_pos_ == 5 && is_digit(c)) {
          fail("unsupported HTTP version (expected HTTP/1.x)");
        } else {
          fail("malformed status line (expected \"HTTP/1.x NNN\")");
        }
        break;
      case Phase::kStatusMinor:
        if (!is_digit(c)) {
          fail("malformed HTTP version in status line");
          break;
        }
        http_minor_ = static_cast<uint8_t>(c - '0');
        phase_ = Phase::kStatusSpace;
        break;
      case Phase::kStatusSpace:
        if (c != ' ') {
          fail("malformed status line (expected SP after HTTP version)");
          break;
        }
        phase_ = Phase::kStatusCode;
        break;
      case Phase::kStatusCode:
        if (!is_digit(c)) {
          fail("non-digit in status code");
          break;
        }
        status_code_ = status_code_ * 10 + (c - '0');
        if (++code_digits_ == 3) {
          if (status_code_ < 100) {
            fail("status code below 100");
            break;
          }
          phase_ = Phase::kStatusAfterCode;
        }
        break;
      case Phase::kStatusAfterCode:
        if (c == '\n') {
          phase_ = Phase::kHeaderLineStart;  // no reason phrase (tolerated)
        } else if (c == ' ') {
          phase_ = Phase::kStatusReason;
        } else {
          fail(is_digit(c) ? "status code longer than 3 digits"
                           : "malformed status line (expected SP after status code)");
        }
        break;
      case Phase::kStatusReason:
        if (c == '\n') {
          phase_ = Phase::kHeaderLineStart;
        } else {
          i = skip_line(data, i, len);
          if (take_crlf(data, i, len)) phase_ = Phase::kHeaderLineStart;
        }
        break;
      case Phase::kHeaderLineStart:
        if (is_ows(c)) {  // obs-fold: the previous value goes on after a SP (RFC 9112 §5.2)
          if (field_ == Field::kNone) {
            fail("whitespace before the first header field");
            break;
          }
          value_pending_ = false;
          if (field_ == Field::kOther) {
            phase_ = Phase::kHeaderValueSkip;
          } else {
            value_byte(' ');
            phase_ = Phase::kHeaderValue;
          }
          break;
        }
        if (!close_pending_value()) break;
        if (c == '\n') {
          end_of_head();
        } else if (is_tchar(c)) {
          name_len_ = 0;
          append_name(&c, 1);
          phase_ = Phase::kHeaderName;
          i = take_name(data, i, len);
        } else {
          fail("malformed header field name");
        }
        break;
      case Phase::kHeaderName:
        if (c == ':') {
          end_of_name(name_len_ <= kNameCapacity ? std::string_view(name_, name_len_)
                                                 : std::string_view());
        } else if (is_tchar(c)) {
          append_name(&c, 1);
          i = take_name(data, i, len);
        } else {
          fail(c == '\n' ? "header line without ':'" : "malformed header field name");
        }
        break;
      case Phase::kHeaderValue:
        if (c == '\n') {
          end_field_line();
        } else {
          value_byte(c);
        }
        break;
      case Phase::kHeaderValueSkip:
        if (c != '\n') i = skip_line(data, i, len);
        if (c == '\n' || take_crlf(data, i, len)) end_field_line();
        break;
      case Phase::kChunkSize: {
        if (c == '\n') {
          end_chunk_size_line();
          break;
        }
        if (c == ';') {
          if (!chunk_digits_) {
            fail("bad chunk size");
          } else {
            phase_ = Phase::kChunkExt;
          }
          break;
        }
        if (is_ows(c) && chunk_digits_) {
          chunk_ws_ = true;
          break;
        }
        const int h = hex_value(c);
        if (h < 0 || chunk_ws_) {
          fail("bad chunk size");
          break;
        }
        if (remaining_ > (kMaxU64 >> 4)) {
          fail("chunk size too large");
          break;
        }
        remaining_ = (remaining_ << 4) | static_cast<uint64_t>(h);
        chunk_digits_ = true;
        break;
      }
      case Phase::kChunkExt:
        if (c == '\n') {
          end_chunk_size_line();
        } else {
          i = skip_line(data, i, len);
        }
        break;
      case Phase::kChunkDataEnd:
        if (c != '\n') {
          fail("missing CRLF after chunk data");
          break;
        }
        phase_ = Phase::kChunkSize;
        section_bytes_ = 0;
        chunk_digits_ = false;
        chunk_ws_ = false;
        remaining_ = 0;
        break;
      case Phase::kTrailerLineStart:
        if (c == '\n') {
          complete();
        } else {
          phase_ = Phase::kTrailerLine;
        }
        break;
      case Phase::kTrailerLine:
        if (c == '\n') {
          phase_ = Phase::kTrailerLineStart;
        } else {
          i = skip_line(data, i, len);
        }
        break;
      case Phase::kBodyLength:
      case Phase::kBodyClose:
      case Phase::kChunkData:
      case Phase::kDone:
        break;  // handled above, or unreachable while kNeedMore
    }
    if (state_ != State::kNeedMore) return i;
    if (section_bytes_ > kMaxHeadBytes) {
      fail(limit_message());
      return i;
    }
  }
  return i;
}

ResponseParser::State ResponseParser::on_eof() {
  if (state_ != State::kNeedMore) return state_;
  if (phase_ == Phase::kBodyClose) {
    keep_alive_ = false;
    complete();
  } else {
    fail(received_any_ ? "EOF mid-response" : "EOF before any response byte");
  }
  return state_;
}

}  // namespace knee::http
