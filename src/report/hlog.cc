#include "report/hlog.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#define ZLIB_CONST  // z_stream::next_in is a pointer to const
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <ctime>
#include <istream>
#include <limits>
#include <new>
#include <ostream>
#include <utility>

namespace knee::report {

namespace {

using core::Histogram;
using core::Result;
using core::Status;

// Cookie bases: the cookie with its word-size nibble (bits 4..7) cleared.
constexpr uint32_t kCookieBaseMask = ~uint32_t{0xf0};
constexpr uint32_t kV2CookieBase = 0x1c849303;
constexpr uint32_t kV2CompressedCookieBase = 0x1c849304;
constexpr uint32_t kV1CookieBase = 0x1c849301;
constexpr uint32_t kV1CompressedCookieBase = 0x1c849302;
constexpr uint32_t kV0CookieBase = 0x1c849308;
constexpr uint32_t kV0CompressedCookieBase = 0x1c849309;

constexpr size_t kMaxVarintBytes = 9;
constexpr size_t kCompressedHeaderBytes = 8;  // cookie, length
// HistogramLogReader: a first timestamp more than a year below StartTime means relative stamps.
constexpr double kOneYearS = 365.0 * 24 * 3600;
constexpr std::string_view kLegend =
    R"("StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram")";

Status decode_error(std::string_view what) {
  return Status::parse_error(fmt::format("hdr decode: {}", what));
}

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

void put_be64(std::vector<uint8_t>& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

void patch_be32(std::vector<uint8_t>& out, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) out[at + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

uint32_t get_be32(std::span<const uint8_t> b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | b[at + i];
  return v;
}

uint64_t get_be64(std::span<const uint8_t> b, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | b[at + i];
  return v;
}

// Reads the 40-byte V2 header (cookie already checked) and builds the empty histogram of its
// layout; payload_bytes receives the payload length, checked against what the layout can hold.
Result<Histogram> histogram_for_header(std::span<const uint8_t> header, size_t& payload_bytes) {
  const auto payload_length = static_cast<int32_t>(get_be32(header, 4));
  const auto normalizing_offset = static_cast<int32_t>(get_be32(header, 8));
  const auto digits = static_cast<int32_t>(get_be32(header, 12));
  const auto lowest = static_cast<int64_t>(get_be64(header, 16));
  const auto highest = static_cast<int64_t>(get_be64(header, 24));
  const auto ratio = std::bit_cast<double>(get_be64(header, 32));
  if (payload_length < 0) {
    return decode_error(fmt::format("payload length {} is negative", payload_length));
  }
  if (normalizing_offset != 0) {
    return decode_error(
        fmt::format("normalizing index offset {} is not 0 (shifted histograms are not supported)",
                    normalizing_offset));
  }
  if (ratio != 1.0) {
    return decode_error(
        fmt::format("integer-to-double conversion ratio {} is not 1.0 (DoubleHistogram payloads "
                    "are not supported)",
                    ratio));
  }
  Result<Histogram> h = Histogram::create(lowest, highest, digits);
  if (!h) return decode_error(fmt::format("layout: {}", h.status().message()));
  const size_t max_payload = h->counts_length() * kMaxVarintBytes;
  if (static_cast<size_t>(payload_length) > max_payload) {
    return decode_error(fmt::format("payload length {} exceeds the {} bytes that {} counters take",
                                    payload_length, max_payload, h->counts_length()));
  }
  payload_bytes = static_cast<size_t>(payload_length);
  return h;
}

// Records one decoded counter. The first non-zero counter is recorded at its lowest value and the
// last at its highest (capped at the highest trackable value), so min() and max() are the bucket
// bounds HdrHistogram reports; a counter above the highest trackable value is clamped by record().
void record_counter(Histogram& h, size_t index, int64_t count, bool first, bool last) {
  const int64_t lowest = h.value_from_index(index);
  if (lowest > h.highest_trackable_value() || !last) {
    h.record(lowest, count);
    return;
  }
  const int64_t highest = std::min(h.highest_equivalent_value(lowest), h.highest_trackable_value());
  if (first && count > 1) {
    h.record(lowest, 1);
    h.record(highest, count - 1);
  } else {
    h.record(highest, count);  // a lone sample is placed at the top: max() matters more
  }
}

// Decodes the counts payload into h (empty, of the header's layout).
Status decode_counts(std::span<const uint8_t> payload, Histogram& h) {
  const size_t n = h.counts_length();
  std::vector<std::pair<size_t, int64_t>> non_zero;
  size_t index = 0;
  int64_t total = 0;
  size_t pos = 0;
  while (pos < payload.size()) {
    const size_t at = pos;
    const std::optional<int64_t> v = get_zigzag_varint(payload, pos);
    if (!v) return decode_error(fmt::format("payload byte {}: truncated varint", at));
    if (*v < 0) {
      if (*v == std::numeric_limits<int64_t>::min()) {
        return decode_error(fmt::format("payload byte {}: zero run {} is out of range", at, *v));
      }
      const auto run = static_cast<uint64_t>(-*v);
      if (run > n - index) {
        return decode_error(
            fmt::format("payload byte {}: a run of {} zero counters at index {} passes the "
                        "layout's {} counters",
                        at, run, index, n));
      }
      index += static_cast<size_t>(run);
      continue;
    }
    if (index >= n) {
      return decode_error(fmt::format(
          "payload byte {}: a count at index {} is past the layout's {} counters", at, index, n));
    }
    if (*v > 0) {
      if (*v > std::numeric_limits<int64_t>::max() - total) {
        return decode_error(fmt::format("payload byte {}: the total count overflows int64", at));
      }
      total += *v;
      non_zero.emplace_back(index, *v);
    }
    ++index;
  }
  for (size_t k = 0; k < non_zero.size(); ++k) {
    record_counter(h, non_zero[k].first, non_zero[k].second, k == 0, k + 1 == non_zero.size());
  }
  return Status::success();
}

Result<Histogram> decode_plain(std::span<const uint8_t> bytes) {
  if (bytes.size() < kV2HeaderBytes) {
    return decode_error(fmt::format("{} bytes is shorter than the {}-byte V2 header", bytes.size(),
                                    kV2HeaderBytes));
  }
  size_t payload_bytes = 0;
  Result<Histogram> h = histogram_for_header(bytes.first(kV2HeaderBytes), payload_bytes);
  if (!h) return h;
  if (bytes.size() - kV2HeaderBytes != payload_bytes) {
    return decode_error(
        fmt::format("payload length {} does not match the {} bytes after the header", payload_bytes,
                    bytes.size() - kV2HeaderBytes));
  }
  Status s = decode_counts(bytes.subspan(kV2HeaderBytes), *h);
  if (!s) return s;
  return h;
}

// An inflate stream over one input, ended by the destructor.
class Inflater {
 public:
  explicit Inflater(std::span<const uint8_t> input) {
    z_.next_in = input.data();
    z_.avail_in = static_cast<uInt>(input.size());
    ok_ = inflateInit(&z_) == Z_OK;
  }
  ~Inflater() {
    if (ok_) inflateEnd(&z_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates exactly out.size() bytes; `what` names the part for errors.
  Status read(std::span<uint8_t> out, std::string_view what) {
    if (!ok_) return Status::internal("hdr decode: zlib inflateInit failed");
    z_.next_out = out.data();
    z_.avail_out = static_cast<uInt>(out.size());
    while (z_.avail_out > 0 && !ended_) {
      const int ret = inflate(&z_, Z_NO_FLUSH);
      if (ret == Z_STREAM_END) {
        ended_ = true;
      } else if (ret != Z_OK) {
        return error(ret, what);
      }
    }
    if (z_.avail_out > 0) {
      return decode_error(
          fmt::format("zlib stream ended {} bytes short of the {}", z_.avail_out, what));
    }
    return Status::success();
  }

  // Checks that the stream ends here and that no input follows it.
  Status finish() {
    if (!ended_) {
      uint8_t extra = 0;
      z_.next_out = &extra;
      z_.avail_out = 1;
      const int ret = inflate(&z_, Z_NO_FLUSH);
      if (z_.avail_out == 0) {
        return decode_error("zlib stream holds more bytes than the header's payload length");
      }
      if (ret != Z_STREAM_END) return error(ret, "stream end");
      ended_ = true;
    }
    if (z_.avail_in != 0) {
      return decode_error(fmt::format("{} bytes follow the zlib stream", z_.avail_in));
    }
    return Status::success();
  }

 private:
  Status error(int ret, std::string_view what) const {
    if (ret == Z_BUF_ERROR) {
      return decode_error(fmt::format("zlib stream truncated in the {}", what));
    }
    return decode_error(fmt::format("zlib error in the {}: {} ({})", what,
                                    z_.msg != nullptr ? z_.msg : "no message", ret));
  }

  z_stream z_{};
  bool ok_ = false;
  bool ended_ = false;
};

Result<Histogram> decode_compressed(std::span<const uint8_t> bytes) {
  const auto length = static_cast<int32_t>(get_be32(bytes, 4));
  const size_t follow = bytes.size() - kCompressedHeaderBytes;
  if (length < 0 || static_cast<size_t>(length) != follow) {
    return decode_error(
        fmt::format("compressed length {} does not match the {} bytes after the 8-byte header",
                    length, follow));
  }
  Inflater inflater(bytes.subspan(kCompressedHeaderBytes));
  std::vector<uint8_t> plain(kV2HeaderBytes);
  Status s = inflater.read(plain, "V2 header");
  if (!s) return s;
  const uint32_t inner_cookie = get_be32(plain, 0);
  if ((inner_cookie & kCookieBaseMask) != kV2CookieBase) {
    return decode_error(fmt::format(
        "the compressed data starts with cookie {:#010x}, not a V2 encoding", inner_cookie));
  }
  size_t payload_bytes = 0;
  Result<Histogram> h = histogram_for_header(plain, payload_bytes);
  if (!h) return h;
  plain.resize(kV2HeaderBytes + payload_bytes);
  s = inflater.read(std::span<uint8_t>(plain).subspan(kV2HeaderBytes), "counts payload");
  if (!s) return s;
  s = inflater.finish();
  if (!s) return s;
  s = decode_counts(std::span<const uint8_t>(plain).subspan(kV2HeaderBytes), *h);
  if (!s) return s;
  return h;
}

// Java's Date.toString() layout, in UTC: "Tue Nov 14 22:13:20 UTC 2023".
std::string java_date_utc(double epoch_s) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const auto t = static_cast<std::time_t>(std::floor(epoch_s));
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "?";
  return fmt::format("{} {} {:02} {:02}:{:02}:{:02} UTC {}", kDays[tm.tm_wday % 7],
                     kMonths[tm.tm_mon % 12], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     tm.tm_year + 1900);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A finite decimal number filling all of `text`.
std::optional<double> parse_double(std::string_view text) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The number after "#[StartTime:" or "#[BaseTime:", up to the next space, comma or ']'.
std::optional<double> parse_time_comment(std::string_view rest) {
  rest = trim(rest);
  const size_t end = rest.find_first_of(" ,]");
  return parse_double(rest.substr(0, end));
}

Status line_error(size_t line_no, std::string_view what) {
  return Status::parse_error(fmt::format("hlog line {}: {}", line_no, what));
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> fields;
  while (true) {
    const size_t comma = s.find(',');
    fields.push_back(trim(s.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return fields;
}

}  // namespace

std::string base64_encode(std::span<const uint8_t> bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

static bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

// Standard base64 with padding, nothing else (EVP_DecodeBlock alone would skip whitespace and
// keep the padding's zero bytes).
Result<std::vector<uint8_t>> base64_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) {
    return Status::parse_error(
        fmt::format("base64 length {} is not a positive multiple of 4", text.size()));
  }
  size_t padding = 0;
  if (text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    if (!is_base64_char(text[i])) {
      return Status::parse_error(
          fmt::format("base64 character '{}' at offset {} is invalid", text[i], i));
    }
  }
  std::vector<uint8_t> out(text.size() / 4 * 3);
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0 || static_cast<size_t>(n) != out.size()) {
    return Status::parse_error("base64 text is invalid");
  }
  out.resize(out.size() - padding);
  return out;
}

void put_zigzag_varint(int64_t value, std::vector<uint8_t>& out) {
  uint64_t z = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  for (size_t i = 0; i + 1 < kMaxVarintBytes; ++i) {
    if (z < 0x80) {
      out.push_back(static_cast<uint8_t>(z));
      return;
    }
    out.push_back(static_cast<uint8_t>((z & 0x7f) | 0x80));
    z >>= 7;
  }
  out.push_back(static_cast<uint8_t>(z));  // the 9th byte carries the last 8 bits whole
}

std::optional<int64_t> get_zigzag_varint(std::span<const uint8_t> bytes, size_t& pos) {
  uint64_t z = 0;
  size_t p = pos;
  for (size_t i = 0; i < kMaxVarintBytes; ++i) {
    if (p >= bytes.size()) return std::nullopt;
    const uint8_t b = bytes[p++];
    if (i + 1 == kMaxVarintBytes) {
      z |= uint64_t{b} << 56;
      break;
    }
    z |= uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) break;
  }
  pos = p;
  return static_cast<int64_t>((z >> 1) ^ (uint64_t{0} - (z & 1)));
}

std::vector<uint8_t> encode_v2(const Histogram& h) {
  // Counters up to the last non-zero one (the counter of max()); one zero counter when empty.
  size_t relevant = 1;
  for (size_t i = h.counts_length(); i > 0; --i) {
    if (h.count_at_index(i - 1) != 0) {
      relevant = i;
      break;
    }
  }
  std::vector<uint8_t> out;
  out.reserve(kV2HeaderBytes + 2 * relevant);
  put_be32(out, static_cast<uint32_t>(kV2EncodingCookie));
  put_be32(out, 0);  // payload length, patched below
  put_be32(out, 0);  // normalizing index offset
  put_be32(out, static_cast<uint32_t>(h.significant_digits()));
  put_be64(out, static_cast<uint64_t>(h.lowest_discernible_value()));
  put_be64(out, static_cast<uint64_t>(h.highest_trackable_value()));
  put_be64(out, std::bit_cast<uint64_t>(1.0));  // integer-to-double conversion ratio
  for (size_t i = 0; i < relevant;) {
    const int64_t count = h.count_at_index(i);
    if (count != 0) {
      put_zigzag_varint(count, out);
      ++i;
      continue;
    }
    size_t run = 1;
    while (i + run < relevant && h.count_at_index(i + run) == 0) ++run;
    put_zigzag_varint(run == 1 ? 0 : -static_cast<int64_t>(run), out);
    i += run;
  }
  const size_t payload = out.size() - kV2HeaderBytes;
  assert(payload <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
  patch_be32(out, 4, static_cast<uint32_t>(payload));
  return out;
}

std::vector<uint8_t> encode_compressed_v2(const Histogram& h) {
  const std::vector<uint8_t> plain = encode_v2(h);
  uLongf compressed_length = compressBound(static_cast<uLong>(plain.size()));
  std::vector<uint8_t> out(kCompressedHeaderBytes + compressed_length);
  const int ret = compress2(out.data() + kCompressedHeaderBytes, &compressed_length, plain.data(),
                            static_cast<uLong>(plain.size()), Z_BEST_COMPRESSION);
  if (ret == Z_MEM_ERROR) throw std::bad_alloc();
  assert(ret == Z_OK && "compress2 into compressBound bytes cannot fail otherwise");
  out.resize(kCompressedHeaderBytes + compressed_length);
  patch_be32(out, 0, static_cast<uint32_t>(kV2CompressedEncodingCookie));
  patch_be32(out, 4, static_cast<uint32_t>(compressed_length));
  return out;
}

core::Result<core::Histogram> decode(std::span<const uint8_t> bytes) {
  if (bytes.size() < kCompressedHeaderBytes) {
    return decode_error(
        fmt::format("{} bytes is shorter than the 8-byte cookie and length", bytes.size()));
  }
  const uint32_t cookie = get_be32(bytes, 0);
  switch (cookie & kCookieBaseMask) {
    case kV2CookieBase:
      return decode_plain(bytes);
    case kV2CompressedCookieBase:
      return decode_compressed(bytes);
    case kV1CookieBase:
    case kV1CompressedCookieBase:
    case kV0CookieBase:
    case kV0CompressedCookieBase:
      return decode_error(
          fmt::format("cookie {:#010x} is a V0/V1 encoding; only V2 is supported", cookie));
    default:
      return decode_error(fmt::format("cookie {:#010x} is not an HdrHistogram encoding", cookie));
  }
}

HlogWriter::HlogWriter(std::ostream& out, double start_time_epoch_s, HlogWriterOptions options)
    : out_(out), options_(options) {
  assert(std::isfinite(start_time_epoch_s) && start_time_epoch_s >= 0);
  assert(std::isfinite(options_.max_value_unit_ratio) && options_.max_value_unit_ratio > 0);
  out_ << "#[Histogram log format version 1.3]\n"
       << fmt::format("#[StartTime: {:.3f} (seconds since epoch), {}]\n", start_time_epoch_s,
                      java_date_utc(start_time_epoch_s));
  if (options_.write_base_time) {
    out_ << fmt::format("#[BaseTime: {:.3f} (seconds since epoch)]\n", start_time_epoch_s);
  }
  out_ << kLegend << '\n';
}

core::Status HlogWriter::write_interval(double start_s, double length_s, const Histogram& h,
                                        std::string_view tag) {
  if (!std::isfinite(start_s) || !std::isfinite(length_s) || length_s < 0) {
    return Status::invalid_argument(
        fmt::format("hlog: interval start {} s and length {} s must be finite, the length >= 0",
                    start_s, length_s));
  }
  if (tag.find_first_of(", \r\n") != std::string_view::npos) {
    return Status::invalid_argument(
        fmt::format("hlog: tag '{}' holds a comma, space or line break", tag));
  }
  std::string line;
  if (!tag.empty()) line = fmt::format("Tag={},", tag);
  line += fmt::format("{:.3f},{:.3f},{:.3f},{}\n", start_s, length_s,
                      static_cast<double>(h.max()) / options_.max_value_unit_ratio,
                      base64_encode(encode_compressed_v2(h)));
  out_ << line;
  if (!out_) {
    return Status::io_error(fmt::format("hlog: writing the interval at {:.3f} s failed", start_s));
  }
  return Status::success();
}

core::Result<std::vector<HlogInterval>> read_hlog(std::istream& in) {
  std::vector<HlogInterval> intervals;
  double start_time_s = 0;
  double base_time_s = 0;
  bool have_start_time = false;
  bool have_base_time = false;
  std::string raw;
  size_t line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    if (line.starts_with('#')) {
      constexpr std::string_view kStart = "#[StartTime:";
      constexpr std::string_view kBase = "#[BaseTime:";
      if (line.starts_with(kStart)) {
        const std::optional<double> t = parse_time_comment(line.substr(kStart.size()));
        if (!t) return line_error(line_no, "StartTime is not a number");
        start_time_s = *t;
        have_start_time = true;
      } else if (line.starts_with(kBase)) {
        const std::optional<double> t = parse_time_comment(line.substr(kBase.size()));
        if (!t) return line_error(line_no, "BaseTime is not a number");
        base_time_s = *t;
        have_base_time = true;
      }
      continue;
    }
    if (line.starts_with(R"("StartTimestamp")")) continue;

    std::vector<std::string_view> fields = split_commas(line);
    std::string tag;
    if (fields.front().starts_with("Tag=")) {
      tag = fields.front().substr(4);
      fields.erase(fields.begin());
    }
    if (fields.size() != 4) {
      return line_error(line_no,
                        fmt::format("{} fields after the tag, expected 4 (start, length, max, "
                                    "histogram)",
                                    fields.size()));
    }
    const std::optional<double> timestamp_s = parse_double(fields[0]);
    if (!timestamp_s) {
      return line_error(line_no, fmt::format("start timestamp '{}' is not a number", fields[0]));
    }
    const std::optional<double> length_s = parse_double(fields[1]);
    if (!length_s) {
      return line_error(line_no, fmt::format("interval length '{}' is not a number", fields[1]));
    }
    if (!parse_double(fields[2])) {
      return line_error(line_no, fmt::format("interval max '{}' is not a number", fields[2]));
    }
    Result<std::vector<uint8_t>> bytes = base64_decode(fields[3]);
    if (!bytes) return line_error(line_no, bytes.status().message());
    Result<Histogram> h = decode(*bytes);
    if (!h) return line_error(line_no, h.status().message());

    if (!have_start_time) {
      start_time_s = *timestamp_s;
      have_start_time = true;
    }
    if (!have_base_time) {
      base_time_s = *timestamp_s < start_time_s - kOneYearS ? start_time_s : 0.0;
      have_base_time = true;
    }
    // (timestamp + base) - start, grouped so that base == start gives the timestamp exactly.
    const double start_s = *timestamp_s + (base_time_s - start_time_s);
    intervals.push_back(HlogInterval{std::move(tag), start_s, *length_s, std::move(*h)});
  }
  if (in.bad()) {
    return Status::io_error(fmt::format("hlog: reading line {} failed", line_no + 1));
  }
  return intervals;
}

core::Histogram merge_intervals(std::span<const HlogInterval> intervals,
                                std::optional<double> from_s, std::optional<double> to_s,
                                std::optional<std::string_view> tag) {
  Histogram merged = intervals.empty() ? Histogram::for_latency() : intervals.front().histogram;
  merged.reset();
  for (const HlogInterval& interval : intervals) {
    if (from_s && interval.start_s < *from_s) continue;
    if (to_s && interval.start_s > *to_s) continue;
    if (tag && interval.tag != *tag) continue;
    merged.merge(interval.histogram);
  }
  return merged;
}

namespace {

std::string summary_line(const core::Histogram& h) {
  auto ms = [&](double p) { return static_cast<double>(h.value_at_percentile(p)) / 1e6; };
  return fmt::format(
      "{:>9}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}  {:>9.3f}",
      h.count(), static_cast<double>(h.min()) / 1e6, h.count() ? h.mean() / 1e6 : 0.0, ms(50),
      ms(90), ms(99), ms(99.9), ms(99.99), static_cast<double>(h.max()) / 1e6);
}

}  // namespace

std::string interval_log_tag(bool sweep, std::optional<double> rate_rps, int connections,
                             int repeat, int repeats) {
  std::string tag;
  if (sweep) {
    tag = rate_rps ? fmt::format("rate{:.0f}", *rate_rps) : fmt::format("c{}", connections);
  }
  if (repeats > 1) tag += fmt::format("{}r{}", sweep ? "-" : "", repeat + 1);
  return tag;
}

std::vector<std::string> interval_tags(std::span<const HlogInterval> intervals) {
  std::vector<std::string> tags;
  for (const HlogInterval& i : intervals) {
    if (std::find(tags.begin(), tags.end(), i.tag) == tags.end()) tags.push_back(i.tag);
  }
  return tags;
}

std::string render_hlog_summary(std::span<const HlogInterval> intervals, size_t files,
                                std::optional<double> from_s, std::optional<double> to_s,
                                std::optional<std::string_view> tag) {
  std::string out = fmt::format("{} interval{} from {} file{}\n", intervals.size(),
                                intervals.size() == 1 ? "" : "s", files, files == 1 ? "" : "s");
  out += fmt::format("{:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}   (ms)\n",
                     "count", "min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max");
  const std::vector<std::string> tags = interval_tags(intervals);
  if (tags.size() > 1 && !tag) {
    for (const std::string& t : tags) {
      out += fmt::format(
          "{}  {}\n", summary_line(merge_intervals(intervals, from_s, to_s, std::string_view(t))),
          t.empty() ? "(untagged)" : t);
    }
  }
  out += fmt::format("{}  {}\n", summary_line(merge_intervals(intervals, from_s, to_s, tag)),
                     tag ? std::string(*tag) : "all");
  return out;
}

}  // namespace knee::report
