// Fuzz target: http::RequestParser, the bytes anyone on the lab server's port may send.
//
// Input: byte 0 picks the split (feed the growing buffer in steps of 1..256 bytes), byte 1 the
// header-section limit (256 + 64 * byte: 256..16576, capped at kMaxHeaderSectionLimit, so that
// inputs of libFuzzer's usual size reach it); the rest is the connection's first bytes. The head is
// parsed from the whole buffer and, resumably, from a buffer that grows step by step, as the lab
// server reads. Checks (abort on failure):
//   - both ways reach the same outcome, and once decided the outcome does not change;
//   - an error outcome maps to a 4xx/5xx status (error_status), a complete one to 0;
//   - a complete head lies inside the buffer (head_bytes <= size), its views point into it, and
//     field() lookups stay inside `fields`.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http/request_parser.h"

namespace {

using knee::http::ParseOutcome;
using knee::http::RequestParser;

void check(bool ok) {
  if (!ok) std::abort();
}

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t step = 1 + data[0];
  const size_t limit = std::min(knee::http::kMaxHeaderSectionLimit, size_t{256} + 64 * data[1]);
  const std::string_view buffer(reinterpret_cast<const char*>(data + 2), size - 2);

  RequestParser whole(limit);
  const ParseOutcome once = whole.parse(buffer);
  check(whole.parse(buffer) == once);  // decided outcomes stay; kNeedMore stays on equal input
  const int status = knee::http::error_status(once);
  if (once == ParseOutcome::kComplete || once == ParseOutcome::kNeedMore) {
    check(status == 0);
  } else {
    check(status >= 400 && status <= 599);
    check(!whole.error().empty());
  }
  if (once == ParseOutcome::kComplete) {
    const auto& h = whole.head();
    check(h.head_bytes <= buffer.size());
    check(inside(h.method, buffer) && inside(h.target, buffer) && inside(h.fields, buffer));
    for (std::string_view name : {"host", "content-length", "connection", "x"}) {
      if (auto v = h.field(name)) check(inside(*v, h.fields));
    }
  }

  RequestParser grown(limit);
  ParseOutcome last = ParseOutcome::kNeedMore;
  for (size_t n = 0; n < buffer.size();) {
    n = std::min(buffer.size(), n + step);
    last = grown.parse(buffer.substr(0, n));
    if (last != ParseOutcome::kNeedMore) break;
  }
  if (buffer.empty()) last = grown.parse(buffer);
  check(last == once);
  if (once == ParseOutcome::kComplete) {
    check(grown.head().head_bytes == whole.head().head_bytes);
    check(grown.head().content_length == whole.head().content_length);
    check(grown.head().keep_alive == whole.head().keep_alive);
    check(grown.head().target == whole.head().target);
  }
  return 0;
}
