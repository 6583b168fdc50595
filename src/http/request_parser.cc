#include "http/request_parser.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>

namespace knee::http {
namespace {

// tchar (RFC 9110 §5.6.2): the characters of a token (method, field name).
constexpr std::array<bool, 256> make_tchar_table() {
  std::array<bool, 256> t{};
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  for (int c = '0'; c <= '9'; ++c) t[static_cast<size_t>(c)] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<size_t>(c)] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<size_t>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kTchar = make_tchar_table();

bool is_tchar(char c) { return kTchar[static_cast<unsigned char>(c)]; }

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_tchar(c)) return false;
  return true;
}

// A request-target byte: visible ASCII (RFC 3986 characters are a subset; no spaces, no CTLs).
bool is_target_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f;
}

// field-vchar or SP/HTAB (RFC 9110 §5.5): anything but CTLs (HTAB allowed) and DEL.
// Where a bare CR in buf[from, to) shows: the index of the byte after the first CR there that is
// not LF (the CR's successor must be in buf); npos when there is none. RFC 9112 §2.2.
size_t bare_cr_seen_at(std::string_view buf, size_t from, size_t to) {
  while (from < to) {
    const void* cr = std::memchr(buf.data() + from, '\r', to - from);
    if (cr == nullptr) return std::string_view::npos;
    const size_t i = static_cast<size_t>(static_cast<const char*>(cr) - buf.data());
    if (i + 1 < buf.size() && buf[i + 1] != '\n') return i + 1;
    from = i + 1;
  }
  return std::string_view::npos;
}

bool is_field_value_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
}

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// Calls fn(line) for each line of `fields` (LF-separated, a trailing CR removed).
template <typename F>
bool for_each_line(std::string_view fields, F&& fn) {
  while (!fields.empty()) {
    size_t lf = fields.find('\n');
    std::string_view line = fields.substr(0, lf);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!fn(line)) return false;
    if (lf == std::string_view::npos) break;
    fields.remove_prefix(lf + 1);
  }
  return true;
}

// Content-Length = 1*DIGIT (RFC 9110 §8.6), or a list of identical values, which a recipient may
// collapse to one. Values above 2^62 are refused as implausible.
bool parse_content_length(std::string_view value, uint64_t& out) {
  constexpr uint64_t kMax = uint64_t{1} << 62;
  bool have = false;
  uint64_t result = 0;
  while (true) {
    size_t comma = value.find(',');
    std::string_view item = trim_ows(value.substr(0, comma));
    if (item.empty()) return false;
    uint64_t v = 0;
    for (char c : item) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<uint64_t>(c - '0');
      if (v > kMax) return false;
    }
    if (have && v != result) return false;
    result = v;
    have = true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  out = result;
  return true;
}

}  // namespace

int error_status(ParseOutcome outcome) {
  switch (outcome) {
    case ParseOutcome::kBadRequest:
      return 400;
    case ParseOutcome::kUriTooLong:
      return 414;
    case ParseOutcome::kHeaderFieldsTooLarge:
      return 431;
    case ParseOutcome::kNotImplemented:
      return 501;
    case ParseOutcome::kVersionNotSupported:
      return 505;
    case ParseOutcome::kNeedMore:
    case ParseOutcome::kComplete:
      break;
  }
  return 0;
}

std::optional<std::string_view> RequestHead::field(std::string_view name) const {
  std::optional<std::string_view> found;
  for_each_line(fields, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !iequals(line.substr(0, colon), name)) return true;
    found = trim_ows(line.substr(colon + 1));
    return false;
  });
  return found;
}

ParseOutcome RequestParser::fail(ParseOutcome outcome, std::string_view why) {
  outcome_ = outcome;
  error_ = why;
  return outcome;
}

ParseOutcome RequestParser::parse(std::string_view buf) {
  if (outcome_ != ParseOutcome::kNeedMore) return outcome_;
  assert(buf.size() >= pos_ && "the buffer may only grow between calls");

  // Empty lines before the request line (RFC 9112 §2.2).
  while (!started_) {
    if (pos_ >= buf.size()) return ParseOutcome::kNeedMore;
    char c = buf[pos_];
    if (c == '\n') {
      ++pos_;
    } else if (c == '\r') {
      if (pos_ + 1 >= buf.size()) return ParseOutcome::kNeedMore;
      if (buf[pos_ + 1] != '\n') return fail(ParseOutcome::kBadRequest, "bare CR");
      pos_ += 2;
    } else {
      started_ = true;
      head_start_ = line_start_ = method_checked_ = pos_;
      break;
    }
    if (pos_ > kMaxLeadingEmptyBytes) {
      return fail(ParseOutcome::kBadRequest, "too many empty lines before the request line");
    }
  }

  while (true) {
    const void* hit =
        pos_ < buf.size() ? std::memchr(buf.data() + pos_, '\n', buf.size() - pos_) : nullptr;
    if (hit == nullptr) {
      // No LF in [pos_, end): a CR with a byte after it is bare (RFC 9112 §2.2 lets a server
      // reject it). Refused now rather than after 8 KiB that may never come; but a limit the
      // bytes crossed before the bare CR showed comes first, so that how the bytes were split
      // never changes the answer (431 or 414, else 400).
      const size_t bare_cr = bare_cr_seen_at(buf, pos_, buf.size());
      if (request_line_end_ != kNone) {
        const size_t too_large = fields_start_ + max_header_bytes_;  // its arrival: 431
        if (too_large < buf.size() && too_large <= bare_cr) {
          return fail(ParseOutcome::kHeaderFieldsTooLarge, "header section too large");
        }
      }
      if (bare_cr != std::string_view::npos && request_line_end_ != kNone) {
        return fail(ParseOutcome::kBadRequest, "bare CR");
      }
      pos_ = buf.back() == '\r' ? buf.size() - 1 : buf.size();  // a final CR is checked again
      if (request_line_end_ == kNone) {
        // Refuse early what cannot become a request line (a TLS hello, a typo'd method), instead
        // of waiting for 8 KiB that may never come.
        while (method_checked_ != kNone && method_checked_ < buf.size()) {
          char c = buf[method_checked_];
          if (c == ' ' && method_checked_ > head_start_) {
            method_checked_ = kNone;
          } else if (!is_tchar(c) && !(c == '\r' && method_checked_ + 1 == buf.size())) {
            return fail(ParseOutcome::kBadRequest, "bad method");
          } else {
            ++method_checked_;
          }
        }
        const size_t too_long = request_line_too_long_at(buf);
        if (too_long < buf.size() && too_long <= bare_cr) {
          return fail(ParseOutcome::kUriTooLong, "request line too long");
        }
        if (bare_cr != std::string_view::npos) return fail(ParseOutcome::kBadRequest, "bare CR");
      }
      return ParseOutcome::kNeedMore;
    }

    size_t lf = static_cast<size_t>(static_cast<const char*>(hit) - buf.data());
    size_t line_end = (lf > line_start_ && buf[lf - 1] == '\r') ? lf - 1 : lf;
    // As above, however the bytes came: the limit first if the line crossed it before its bare
    // CR showed.
    const size_t bare_cr = bare_cr_seen_at(buf, line_start_, line_end);
    if (request_line_end_ != kNone) {
      const size_t too_large = fields_start_ + max_header_bytes_;
      if (too_large <= lf && too_large <= bare_cr) {
        return fail(ParseOutcome::kHeaderFieldsTooLarge, "header section too large");
      }
    } else if (bare_cr != std::string_view::npos) {
      // The early check's order: the method's characters, then the length against the CR.
      const std::string_view line = buf.substr(head_start_, line_end - head_start_);
      if (!std::all_of(
              line.begin(),
              line.begin() + static_cast<std::ptrdiff_t>(std::min(line.find(' '), line.size())),
              is_tchar)) {
        return fail(ParseOutcome::kBadRequest, "bad method");
      }
      if (request_line_too_long_at(buf) <= bare_cr) {
        return fail(ParseOutcome::kUriTooLong, "request line too long");
      }
    }
    if (bare_cr != std::string_view::npos) return fail(ParseOutcome::kBadRequest, "bare CR");
    pos_ = lf + 1;
    if (request_line_end_ == kNone) {
      ParseOutcome checked = check_request_line(buf.substr(head_start_, line_end - head_start_));
      if (checked != ParseOutcome::kNeedMore) return checked;
      request_line_end_ = line_end;
      fields_start_ = line_start_ = pos_;
      continue;
    }
    if (pos_ - fields_start_ > max_header_bytes_) {
      return fail(ParseOutcome::kHeaderFieldsTooLarge, "header section too large");
    }
    if (line_end == line_start_) return finish(buf, line_start_, pos_);
    line_start_ = pos_;
  }
}

// The index of the byte whose arrival makes the request line longer than kMaxRequestLineBytes
// (a CR in that place counts only once the byte after it is not LF); npos while buf is too short
// to say.
size_t RequestParser::request_line_too_long_at(std::string_view buf) const {
  const size_t at = head_start_ + kMaxRequestLineBytes;
  if (at >= buf.size()) return std::string_view::npos;
  if (buf[at] != '\r') return at;
  if (at + 1 >= buf.size() || buf[at + 1] == '\n') return std::string_view::npos;
  return at + 1;
}

// Checks a complete request line in the order the early check applies while it is incomplete
// (method characters, then length), so the outcome does not depend on how the bytes arrived.
// Returns kNeedMore when the line is good (and records it in head_), else the error.
ParseOutcome RequestParser::check_request_line(std::string_view line) {
  // request-line = method SP request-target SP HTTP-version (RFC 9112 §3)
  const size_t sp1 = line.find(' ');
  const std::string_view method = line.substr(0, sp1);
  for (char c : method)
    if (!is_tchar(c)) return fail(ParseOutcome::kBadRequest, "bad method");
  if (line.size() > kMaxRequestLineBytes) {
    return fail(ParseOutcome::kUriTooLong, "request line too long");
  }
  if (sp1 == std::string_view::npos || sp1 == 0) {
    return fail(ParseOutcome::kBadRequest, "bad request line");
  }
  const std::string_view rest = line.substr(sp1 + 1);
  const size_t sp2 = rest.find(' ');
  if (sp2 == std::string_view::npos || sp2 == 0) {
    return fail(ParseOutcome::kBadRequest, "bad request line");
  }
  const std::string_view target = rest.substr(0, sp2);
  for (char c : target)
    if (!is_target_char(c)) return fail(ParseOutcome::kBadRequest, "bad request target");
  // HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3)
  const std::string_view version = rest.substr(sp2 + 1);
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[5] < '0' ||
      version[5] > '9' || version[6] != '.' || version[7] < '0' || version[7] > '9') {
    return fail(ParseOutcome::kBadRequest, "bad HTTP version");
  }
  if (version[5] != '1') return fail(ParseOutcome::kVersionNotSupported, "HTTP major version");
  // Offsets, not views: the caller may move its buffer before the head completes (finish() makes
  // the views from the buffer of that call).
  method_at_ = head_start_;
  method_size_ = method.size();
  target_at_ = head_start_ + sp1 + 1;
  target_size_ = target.size();
  head_.minor_version = version[7] == '0' ? 0 : 1;
  return ParseOutcome::kNeedMore;
}

ParseOutcome RequestParser::finish(std::string_view buf, size_t fields_end, size_t head_end) {
  head_.method = buf.substr(method_at_, method_size_);
  head_.target = buf.substr(target_at_, target_size_);
  const int minor = head_.minor_version;
  std::string_view fields = buf.substr(fields_start_, fields_end - fields_start_);
  bool have_length = false;
  uint64_t length = 0;
  bool transfer_encoding = false;
  bool close = false;
  bool keep_alive_option = false;
  int hosts = 0;
  const char* why = nullptr;
  for_each_line(fields, [&](std::string_view field_line) {
    if (field_line.empty() || is_ows(field_line.front())) {
      why = "obs-fold or whitespace before a field name";
      return false;
    }
    size_t colon = field_line.find(':');
    std::string_view name = field_line.substr(0, colon);
    if (colon == std::string_view::npos || !is_token(name)) {
      why = "bad field line";
      return false;
    }
    std::string_view value = trim_ows(field_line.substr(colon + 1));
    for (char c : value) {
      if (!is_field_value_char(c)) {
        why = "bad field value";
        return false;
      }
    }
    switch (lower(name.front())) {  // cheap dispatch before the case-insensitive compares
      case 'c':
        if (iequals(name, "content-length")) {
          uint64_t v = 0;
          if (!parse_content_length(value, v) || (have_length && v != length)) {
            why = "bad Content-Length";
            return false;
          }
          have_length = true;
          length = v;
        } else if (iequals(name, "connection")) {
          while (true) {
            size_t comma = value.find(',');
            std::string_view option = trim_ows(value.substr(0, comma));
            if (iequals(option, "close")) close = true;
            if (iequals(option, "keep-alive")) keep_alive_option = true;
            if (comma == std::string_view::npos) break;
            value.remove_prefix(comma + 1);
          }
        }
        break;
      case 'h':
        if (iequals(name, "host")) ++hosts;
        break;
      case 't':
        if (iequals(name, "transfer-encoding")) transfer_encoding = true;
        break;
      default:
        break;
    }
    return true;
  });
  if (why != nullptr) return fail(ParseOutcome::kBadRequest, why);
  if (hosts > 1 || (minor == 1 && hosts == 0)) {
    return fail(ParseOutcome::kBadRequest, "HTTP/1.1 needs exactly one Host");
  }
  if (transfer_encoding) return fail(ParseOutcome::kNotImplemented, "Transfer-Encoding");

  head_.keep_alive = !close && (minor == 1 || keep_alive_option);
  head_.content_length = length;
  head_.head_bytes = head_end;
  head_.fields = fields;
  outcome_ = ParseOutcome::kComplete;
  return outcome_;
}

}  // namespace knee::http
