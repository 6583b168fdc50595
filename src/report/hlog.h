// HdrHistogram interval logs ("hlog"): the V2 binary encoding of a core::Histogram, its zlib
// compressed form, and the text log of per-interval histograms that HdrHistogram's own tools
// (HistogramLogReader, HistogramLogProcessor, HistogramLogAnalyzer) read and write.
//
// Sources (formats written from their descriptions; no code taken from them), HdrHistogram 2.1.11
// as shipped by Debian's libhdrhistogram-java:
//   - AbstractHistogram.java, encodeIntoByteBuffer / encodeIntoCompressedByteBuffer and
//     decodeFromByteBuffer: the V2 layout, all integers big-endian:
//       int32 cookie 0x1c849313, int32 payload length (bytes after this 40-byte header),
//       int32 normalizing index offset (0), int32 significant digits,
//       int64 lowest discernible value, int64 highest trackable value,
//       float64 integer-to-double conversion ratio (1.0),
//       then counts[0 .. last non-zero index] as ZigZag LEB128 varints, where a run of n >= 2
//       zero counters is written as the single value -n (one zero counter is written as 0).
//     Compressed: int32 cookie 0x1c849314, int32 length of what follows, then the V2 bytes
//     deflated by zlib (RFC 1950 stream; level 9, Z_BEST_COMPRESSION, as HistogramLogWriter).
//   - ZigZagEncoding.java: zigzag ((v << 1) ^ (v >> 63)), then little-endian groups of 7 bits
//     with the high bit set on all but the last byte; at most 9 bytes, the 9th byte holding the
//     remaining 8 bits whole (so INT64_MIN is nine 0xff bytes).
//   - HistogramLogWriter.java / HistogramLogReader.java: the text log, format version 1.3:
//       #[Histogram log format version 1.3]
//       #[StartTime: 1700000000.123 (seconds since epoch), Tue Nov 14 22:13:20 UTC 2023]
//       #[BaseTime: 1700000000.123 (seconds since epoch)]                      (optional)
//       "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//       [Tag=<tag>,]<start s>,<length s>,<max / max_value_unit_ratio>,<base64 of compressed V2>
//     Numbers with 3 decimals; base64 is RFC 4648's standard alphabet with padding.
//
// Units: start and length in seconds (double, named _s); histogram values in the histogram's own
// unit (ns for core::Histogram::for_latency()). The Interval_Max column is max() divided by
// max_value_unit_ratio (default 1e6, HistogramLogWriter's: ns -> ms); readers ignore it.
//
// What V2 keeps: the layout (lowest, highest, digits) and every counter. It does not keep the
// exact min and max, nor clamped_count(): decode() gives min() = lowest equivalent value of the
// first non-zero counter and max() = highest equivalent value of the last one (capped at
// highest_trackable_value()), which is what HdrHistogram's getMinNonZeroValue() and getMaxValue()
// report for the same counts. So decode(encode_v2(h)) == h (operator==) exactly when h's min()
// and max() already are those bucket bounds and nothing was clamped; otherwise the counts, count()
// and every percentile below the last bucket are equal.
//
// Thread-safety: the functions are pure and thread-safe; an HlogWriter is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/histogram.h"
#include "core/run_stats.h"
#include "core/status.h"

namespace knee::report {

// --- V2 binary encoding (AbstractHistogram.java) ---

inline constexpr int32_t kV2EncodingCookie = 0x1c849313;
inline constexpr int32_t kV2CompressedEncodingCookie = 0x1c849314;
inline constexpr size_t kV2HeaderBytes = 40;

// The V2 encoding of h: the 40-byte header, then counts up to the last non-zero counter (one
// zero counter for an empty histogram), byte for byte what AbstractHistogram.encodeIntoByteBuffer
// writes for the same layout and counts.
std::vector<uint8_t> encode_v2(const core::Histogram& h);

// The compressed V2 encoding of h: cookie 0x1c849314, length, zlib level 9 of encode_v2(h).
std::vector<uint8_t> encode_compressed_v2(const core::Histogram& h);

// Decodes a V2 encoding, compressed or not (told apart by the cookie), into a histogram of the
// encoded layout, with min and max as explained at the top. Counters whose lowest value is above
// the highest trackable value (HdrHistogram records there; we clamp) are recorded as it and
// counted in clamped_count(). Errors (kParseError, naming what was wrong): a cookie that is not
// V2 (V0/V1 encodings are named as unsupported), input shorter than its header or lengths that do
// not match the input's size (trailing bytes included), a layout core::Histogram cannot hold
// (e.g. 0 significant digits), a normalizing index offset other than 0 or a conversion ratio
// other than 1.0 (DoubleHistogram internals), a zlib stream that is corrupt or does not end where
// the header says, a truncated varint, counts past the layout's counters, and counts whose sum
// overflows int64.
core::Result<core::Histogram> decode(std::span<const uint8_t> bytes);

// RFC 4648 base64, standard alphabet with padding (the hlog's histogram column, and the record's
// histograms: report/record.h). Decoding accepts nothing else: no whitespace, no missing
// padding (kParseError naming the offset).
std::string base64_encode(std::span<const uint8_t> bytes);
core::Result<std::vector<uint8_t>> base64_decode(std::string_view text);

// Building blocks of the encoding, exposed for tests. Appends the ZigZag LEB128 bytes of value.
void put_zigzag_varint(int64_t value, std::vector<uint8_t>& out);
// Reads one ZigZag LEB128 value at bytes[pos] and advances pos past it; nullopt (pos unchanged)
// when the input ends inside the value.
std::optional<int64_t> get_zigzag_varint(std::span<const uint8_t> bytes, size_t& pos);

// --- Interval log writer (HistogramLogWriter.java) ---

struct HlogWriterOptions {
  // Interval_Max column = max() / max_value_unit_ratio; 1e6 prints ns histograms' max in ms.
  double max_value_unit_ratio = 1e6;
  // Also write "#[BaseTime: <start time>]", stating that interval timestamps are relative to the
  // start time (readers infer it anyway when timestamps are far below the start time).
  bool write_base_time = false;
};

// Writes one interval log to a stream it does not own (which must outlive it). The constructor
// writes the header (version, StartTime, optional BaseTime, legend); each write_interval() adds
// one line. Not thread-safe: one writer per stream, used by one thread.
class HlogWriter {
 public:
  // start_time_epoch_s: the run's start in seconds since the Unix epoch (wall clock, >= 0), the
  // origin of every interval's start_s; its date is written in UTC in Java's Date.toString()
  // layout ("Tue Nov 14 22:13:20 UTC 2023").
  HlogWriter(std::ostream& out, double start_time_epoch_s, HlogWriterOptions options = {});

  // Writes one interval: [Tag=<tag>,]<start_s>,<length_s>,<max / ratio>,<base64>. start_s is
  // seconds since the start time, length_s the interval's length in seconds; an empty tag writes
  // no Tag= field. Errors: kInvalidArgument for a non-finite time, a negative length or a tag
  // holding a comma, space or line break (HdrHistogram's rule); kIoError when the stream has
  // failed (including while writing the header).
  core::Status write_interval(double start_s, double length_s, const core::Histogram& h,
                              std::string_view tag = {});

 private:
  std::ostream& out_;
  HlogWriterOptions options_;
};

// The tag of a run's intervals in knee's logs (knee run/sweep --hlog): a run none, or r<k> with
// repeats; a sweep's levels c<N> (closed loop, N = connections), or rate<R> (open loop,
// rate_rps), with -r<k> for repeats. repeat counts from 0.
std::string interval_log_tag(bool sweep, std::optional<double> rate_rps, int connections,
                             int repeat, int repeats);

// --- Interval log reader (HistogramLogReader.java) ---

struct HlogInterval {
  std::string tag;  // "" when the line has no Tag= field
  double start_s;   // seconds since the log's StartTime (see read_hlog)
  double length_s;  // the interval's length, seconds
  core::Histogram histogram;
};

// Reads every interval of a log, in file order. Comment lines (#...), blank lines and the legend
// line are skipped; "#[StartTime: s" and "#[BaseTime: s" comments set the start and base times,
// as HistogramLogReader does: an interval's absolute start is its timestamp + base time, and
// start_s = absolute start - start time. Without a BaseTime line, the base is deduced from the
// first interval: its timestamp more than a year below the start time means relative stamps
// (base = start time), otherwise absolute ones (base = 0). Without a StartTime line, the first
// interval's timestamp is the start time. Interval lines need exactly four fields after the
// optional Tag=; the Interval_Max field must be a number but is otherwise ignored; the histogram
// may be compressed or not. Lines may end in CRLF.
// Errors: kParseError "hlog line N: ..." naming the field and what was wrong (decode()'s message
// included); kIoError when the stream fails other than at its end.
core::Result<std::vector<HlogInterval>> read_hlog(std::istream& in);

// Merges the histograms of the intervals whose start_s lies in [from_s, to_s] (both inclusive, as
// HistogramLogReader's range; an absent bound is open) and whose tag equals `tag` ("" selects
// untagged intervals; nullopt selects every tag). Intervals of several logs may be concatenated:
// with matching layouts the merge is exact (core::Histogram::merge). The result has the layout of
// the span's first interval (core::Histogram::for_latency() for an empty span) and is empty when
// nothing is selected.
core::Histogram merge_intervals(std::span<const HlogInterval> intervals,
                                std::optional<double> from_s = std::nullopt,
                                std::optional<double> to_s = std::nullopt,
                                std::optional<std::string_view> tag = std::nullopt);

// The intervals' tags, each once, in order of first appearance; "" stands for untagged ones.
std::vector<std::string> interval_tags(std::span<const HlogInterval> intervals);

// What `knee report FILE.hlog...` prints: how many intervals from how many files, then count,
// min, mean, p50, p90, p99, p99.9, p99.99 and max (ms) per tag (when the logs hold several and no
// tag was asked for), in order of first appearance, and of everything selected.
std::string render_hlog_summary(std::span<const HlogInterval> intervals, size_t files,
                                std::optional<double> from_s, std::optional<double> to_s,
                                std::optional<std::string_view> tag);

}  // namespace knee::report
