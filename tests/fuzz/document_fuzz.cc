// Fuzz target: report::parse_document, the reader of every result file knee writes (run, sweep,
// capacity, ladder, probe, model, merged parts), which `knee report`, `knee compare`, `knee
// model --from` and `knee report merge` take from users' folders.
// Checks (abort on failure): a rejected file says why; an accepted one writes back (to_json,
// dumped to text as knee writes files) to a file that reads again, and writing that gives the
// same text (a fixed point: nothing read is lost or changed by a second round).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "report/document.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = knee::report::parse_document(text, "fuzz.json");
  if (!doc) {
    if (doc.status().message().empty()) std::abort();
    return 0;
  }
  const std::string once = knee::report::to_json(*doc).dump();
  auto again = knee::report::parse_document(once, "fuzz.json");
  if (!again) std::abort();
  if (knee::report::to_json(*again).dump() != once) std::abort();
  return 0;
}
