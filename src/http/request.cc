#include "http/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <string_view>

namespace knee::http {
namespace {

constexpr std::string_view kConnPlaceholder = "{conn}";
constexpr std::string_view kSeqPlaceholder = "{seq}";
constexpr std::string_view kShipmentPlaceholder = "{shipment}";
constexpr uint64_t kTrackingNumberBytes = 12;  // "KN" and 10 digits
constexpr std::string_view kUserAgent = "knee/0.1";
// Piece offsets are 32-bit; 1 GiB leaves room for the fixed lines and headers.
constexpr size_t kMaxRequestBytes = size_t{1} << 30;

// RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_"
// / "`" / "|" / "~" / DIGIT / ALPHA.
bool is_tchar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Appends the decimal form of v without allocating beyond out's capacity.
void append_decimal(std::string& out, uint64_t v) {
  std::array<char, 20> buf;  // UINT64_MAX has 20 digits
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), res.ptr);
}

uint64_t decimal_digits(uint64_t v) {
  uint64_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

}  // namespace

void append_tracking_number(std::string& out, uint64_t id) {
  std::array<char, kTrackingNumberBytes> buf;
  buf[0] = 'K';
  buf[1] = 'N';
  for (size_t i = kTrackingNumberBytes; i > 2; --i) {
    buf[i - 1] = static_cast<char>('0' + id % 10);
    id /= 10;
  }
  out.append(buf.data(), buf.size());
}

void RequestTemplate::add_literal(std::string_view s) {
  if (s.empty()) return;
  const auto offset = static_cast<uint32_t>(text_.size());
  text_.append(s);
  if (!pieces_.empty() && pieces_.back().kind == PieceKind::kLiteral) {
    pieces_.back().size += static_cast<uint32_t>(s.size());
  } else {
    pieces_.push_back({PieceKind::kLiteral, offset, static_cast<uint32_t>(s.size())});
  }
}

void RequestTemplate::add_slot(PieceKind kind) {
  pieces_.push_back({kind, 0, 0});
  has_placeholders_ = true;
}

void RequestTemplate::add_expanded(std::string_view s, bool in_body) {
  while (!s.empty()) {
    const size_t conn_at = s.find(kConnPlaceholder);
    const size_t seq_at = s.find(kSeqPlaceholder);
    const size_t shipment_at = s.find(kShipmentPlaceholder);
    const size_t at = std::min({conn_at, seq_at, shipment_at});
    const std::string_view literal = s.substr(0, at);
    add_literal(literal);
    if (in_body) body_literal_bytes_ += literal.size();
    if (at == std::string_view::npos) return;
    if (at == shipment_at) {
      add_slot(PieceKind::kShipment);
      uses_shipment_ = true;
      if (in_body) body_literal_bytes_ += kTrackingNumberBytes;  // fixed width
      s.remove_prefix(at + kShipmentPlaceholder.size());
    } else if (at == conn_at) {
      add_slot(PieceKind::kConn);
      if (in_body) ++body_conn_slots_;
      s.remove_prefix(at + kConnPlaceholder.size());
    } else {
      add_slot(PieceKind::kSeq);
      if (in_body) ++body_seq_slots_;
      s.remove_prefix(at + kSeqPlaceholder.size());
    }
  }
}

core::Result<RequestTemplate> RequestTemplate::compile(const RequestSpec& spec) {
  using core::Status;
  if (!is_token(spec.method)) {
    return Status::invalid_argument(fmt::format(
        "invalid HTTP method \"{}\": expected a token of letters, digits or !#$%&'*+-.^_`|~ "
        "(e.g. GET, POST)",
        spec.method));
  }
  if (spec.url.host.empty()) {
    return Status::invalid_argument(
        "request URL has no host: expected a URL parsed by parse_url, e.g. http://host:port/path");
  }
  const std::string& target = spec.url.target;
  if (target.empty()) {
    return Status::invalid_argument(
        "empty request target: expected an origin-form target such as \"/\" or \"/path?query\"");
  }
  for (char c : target) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return Status::invalid_argument(fmt::format(
          "request target \"{}\" holds a space or control character: expected visible ASCII "
          "(percent-encode the rest)",
          target));
    }
  }

  size_t total_bytes = spec.method.size() + target.size() + spec.body.size();
  for (const auto& [name, value] : spec.headers) total_bytes += name.size() + value.size();
  if (total_bytes > kMaxRequestBytes) {
    return Status::invalid_argument(
        fmt::format("request of {} bytes is too large: expected at most {} bytes (1 GiB)",
                    total_bytes, kMaxRequestBytes));
  }

  bool user_host = false;
  bool user_agent = false;
  const std::string* user_content_length = nullptr;
  for (const auto& [name, value] : spec.headers) {
    if (!is_token(name)) {
      return Status::invalid_argument(fmt::format(
          "invalid header name \"{}\": expected a token of letters, digits or !#$%&'*+-.^_`|~ "
          "(e.g. X-Request-Id)",
          name));
    }
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return Status::invalid_argument(fmt::format(
          "invalid value for header \"{}\": it holds CR, LF or NUL; expected one line of text",
          name));
    }
    if (iequals(name, "Host")) user_host = true;
    if (iequals(name, "User-Agent")) user_agent = true;
    if (iequals(name, "Transfer-Encoding")) {
      return Status::invalid_argument(fmt::format(
          "header \"{}: {}\" is not supported: knee sends the body with Content-Length; remove it",
          name, value));
    }
    if (iequals(name, "Content-Length")) user_content_length = &value;
  }

  const bool body_has_placeholders = spec.body.find(kConnPlaceholder) != std::string::npos ||
                                     spec.body.find(kSeqPlaceholder) != std::string::npos ||
                                     spec.body.find(kShipmentPlaceholder) != std::string::npos;
  if (user_content_length != nullptr &&
      (body_has_placeholders || *user_content_length != std::to_string(spec.body.size()))) {
    return Status::invalid_argument(fmt::format(
        "header \"Content-Length: {}\" does not match the body ({} bytes{}): knee computes "
        "Content-Length; remove the header",
        *user_content_length, spec.body.size(),
        body_has_placeholders ? " before placeholders" : ""));
  }
  const bool method_sends_body =
      spec.method == "POST" || spec.method == "PUT" || spec.method == "PATCH";
  const bool send_content_length =
      user_content_length == nullptr && (!spec.body.empty() || method_sends_body);

  RequestTemplate t;
  t.is_head_ = spec.method == "HEAD";
  t.add_literal(spec.method);
  t.add_literal(" ");
  t.add_expanded(target, /*in_body=*/false);
  t.add_literal(" HTTP/1.1\r\n");
  if (!user_host) {
    t.add_literal("Host: ");
    t.add_literal(spec.url.authority());
    t.add_literal("\r\n");
  }
  for (const auto& [name, value] : spec.headers) {
    t.add_literal(name);
    t.add_literal(": ");
    t.add_expanded(value, /*in_body=*/false);
    t.add_literal("\r\n");
  }
  // The body's pieces are built first into a scratch template so the Content-Length slot (which
  // precedes the body on the wire) knows whether the body has placeholders.
  RequestTemplate body;
  body.add_expanded(spec.body, /*in_body=*/true);
  if (send_content_length) {
    t.add_literal("Content-Length: ");
    if (body.has_placeholders_) {
      t.add_slot(PieceKind::kContentLength);
    } else {
      t.add_literal(std::to_string(spec.body.size()));
    }
    t.add_literal("\r\n");
  }
  if (!user_agent) {
    t.add_literal("User-Agent: ");
    t.add_literal(kUserAgent);
    t.add_literal("\r\n");
  }
  t.add_literal("\r\n");
  for (const Piece& piece : body.pieces_) {
    if (piece.kind == PieceKind::kLiteral) {
      t.add_literal(std::string_view(body.text_).substr(piece.offset, piece.size));
    } else {
      t.add_slot(piece.kind);
    }
  }
  t.body_literal_bytes_ = body.body_literal_bytes_;
  t.body_conn_slots_ = body.body_conn_slots_;
  t.body_seq_slots_ = body.body_seq_slots_;
  t.uses_shipment_ = t.uses_shipment_ || body.uses_shipment_;
  return t;
}

void RequestTemplate::render(uint64_t conn, uint64_t seq, std::string& out,
                             uint64_t shipment) const {
  out.clear();
  if (!has_placeholders_) {
    out.append(text_);
    return;
  }
  for (const Piece& piece : pieces_) {
    switch (piece.kind) {
      case PieceKind::kLiteral:
        out.append(text_, piece.offset, piece.size);
        break;
      case PieceKind::kConn:
        append_decimal(out, conn);
        break;
      case PieceKind::kSeq:
        append_decimal(out, seq);
        break;
      case PieceKind::kShipment:
        append_tracking_number(out, shipment);
        break;
      case PieceKind::kContentLength:
        append_decimal(out, body_literal_bytes_ + body_conn_slots_ * decimal_digits(conn) +
                                body_seq_slots_ * decimal_digits(seq));
        break;
    }
  }
}

const std::string& RequestTemplate::fixed() const {
  static const std::string kEmpty;
  assert(!has_placeholders_ && "fixed() needs a template without placeholders; use render()");
  return has_placeholders_ ? kEmpty : text_;
}

}  // namespace knee::http
