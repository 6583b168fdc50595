// Fuzz target: report/hlog's readers, which take files other tools wrote (HdrHistogram's
// HistogramLogWriter, wrk2-style logs, knee's own --hlog): the V2 histogram decoder, compressed
// or not, and the interval log reader around it.
//
// Input: byte 0 picks the reader: even, the rest is one encoded histogram for decode(); odd, the
// rest is an interval log's text for read_hlog(). Checks (abort on failure):
//   - a decoded histogram re-encodes (encode_v2 and encode_compressed_v2) to bytes that decode
//     to the same count, min, max and counters;
//   - a rejected input says why.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <sstream>
#include <string>

#include "report/hlog.h"

namespace {

namespace hlog = knee::report;

void check(bool ok) {
  if (!ok) std::abort();
}

void same_counts(const knee::core::Histogram& a, const knee::core::Histogram& b) {
  check(a.count() == b.count());
  check(a.min() == b.min() && a.max() == b.max());
  check(a.counts_length() == b.counts_length());
  for (size_t i = 0; i < a.counts_length(); ++i) check(a.count_at_index(i) == b.count_at_index(i));
}

void fuzz_decode(std::span<const uint8_t> bytes) {
  auto h = hlog::decode(bytes);
  if (!h) {
    check(!h.status().message().empty());
    return;
  }
  for (const auto& encoded : {hlog::encode_v2(*h), hlog::encode_compressed_v2(*h)}) {
    auto again = hlog::decode(encoded);
    check(again.has_value());
    same_counts(*h, *again);
  }
}

void fuzz_log(std::span<const uint8_t> bytes) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  auto intervals = hlog::read_hlog(in);
  if (!intervals) check(!intervals.status().message().empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::span<const uint8_t> rest(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    fuzz_decode(rest);
  } else {
    fuzz_log(rest);
  }
  return 0;
}
