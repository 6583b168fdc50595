#include "lab/endpoints.h"

#include <charconv>
#include <cmath>

namespace knee::lab {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes one form-urlencoded component into out (replacing its contents).
void form_decode(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%' && i + 2 < in.size() && hex_value(in[i + 1]) >= 0 &&
               hex_value(in[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
}

// Length of the valid UTF-8 sequence at the front of s (1-4), or 0 when invalid; on 0,
// `maximal` is the length of the maximal subpart to replace with one U+FFFD (Unicode §3.9).
size_t utf8_sequence(std::string_view s, size_t& maximal) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = b(0);
  size_t need = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    maximal = 1;
    return 0;
  }
  for (size_t k = 1; k <= need; ++k) {
    unsigned char min = k == 1 ? lo : 0x80;
    unsigned char max = k == 1 ? hi : 0xBF;
    if (k >= s.size() || b(k) < min || b(k) > max) {
      maximal = k;
      return 0;
    }
  }
  return need + 1;
}

}  // namespace

Target split_target(std::string_view target) {
  // absolute-form: scheme "://" authority path-abempty [ "?" query ]
  size_t scheme_end = target.find("://");
  if (!target.empty() && target.front() != '/' && scheme_end != std::string_view::npos) {
    size_t path_start = target.find_first_of("/?#", scheme_end + 3);
    target = path_start == std::string_view::npos ? std::string_view() : target.substr(path_start);
  }
  size_t hash = target.find('#');
  if (hash != std::string_view::npos) target = target.substr(0, hash);
  Target out;
  size_t q = target.find('?');
  out.path = target.substr(0, q);
  if (q != std::string_view::npos) out.query = target.substr(q + 1);
  if (out.path.empty()) out.path = "/";
  return out;
}

Route route_of(std::string_view path) {
  if (path == "/tracking") return Route::kTracking;
  if (path == "/fast") return Route::kFast;
  if (path == "/slow-async") return Route::kSlowAsync;
  if (path == "/slow-sync") return Route::kSlowSync;
  if (path == "/stall") return Route::kStall;
  if (path == "/health") return Route::kHealth;
  if (path == "/events") return Route::kEvents;
  if (path == "/billing/run") return Route::kBilling;
  if (path == "/metrics") return Route::kMetrics;
  if (!shipment_of(path).empty()) return Route::kShipment;
  return Route::kNone;
}

std::string_view shipment_of(std::string_view path) {
  constexpr std::string_view kPrefix = "/tracking/";
  if (!path.starts_with(kPrefix)) return {};
  const std::string_view no = path.substr(kPrefix.size());
  return no.find('/') == std::string_view::npos ? no : std::string_view();
}

bool find_query_param(std::string_view query, std::string_view name, std::string& out) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    // Most keys need no decoding; compare them as they are.
    if (key.find_first_of("%+") == std::string_view::npos) {
      if (key != name) continue;
    } else {
      form_decode(key, out);
      if (out != name) continue;
    }
    form_decode(value, out);
    return true;
  }
  return false;
}

std::optional<double> parse_ms(std::string_view text) {
  if (text.empty()) return kDefaultSlowMs;
  if (text.size() > 16) return std::nullopt;
  int dots = 0;
  for (char c : text) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  if (dots > 1 || text.front() == '.' || text.back() == '.') return std::nullopt;
  double ms = 0;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), ms, std::chars_format::fixed);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  if (!(ms >= 0 && ms <= kMaxSlowMs)) return std::nullopt;
  return ms;
}

core::Nanos ms_to_nanos(double ms) { return core::Nanos(std::llround(ms * 1e6)); }

void append_json_string(std::string& out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t i = 0;
  while (i < bytes.size()) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\b':
          out.append("\\b");
          break;
        case '\f':
          out.append("\\f");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        default:
          if (c < 0x20) {
            out.append("\\u00");
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xF]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    size_t maximal = 0;
    size_t len = utf8_sequence(bytes.substr(i), maximal);
    if (len == 0) {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      i += maximal;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  out.push_back('"');
}

void burn_thread_cpu(core::Nanos cpu) {
  if (cpu <= core::Nanos::zero()) return;
  const core::Nanos start = core::thread_cpu_time();
  while (core::thread_cpu_time() - start < cpu) {
  }
}

core::Nanos stall_delay(core::Nanos since_start, core::Nanos period, core::Nanos window,
                        core::Nanos answer) {
  const core::Nanos phase = since_start % period;
  if (phase >= period - window) return period - phase;
  return answer;
}

}  // namespace knee::lab
