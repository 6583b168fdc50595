// Fuzz target: the lab server's reading of a request past its head (lab/endpoints.h,
// lab/shipment_service.h): the request-target split into path and query, the route, query
// parameters, /slow-*'s ms=, the JSON string a decoded parameter is echoed as, and POST /events'
// JSON body.
//
// Input: byte 0 picks the use: even, the rest is a request-target; odd, an /events body.
// Checks (abort on failure):
//   - split_target's path is never empty and, like the query, lies inside the target (or is the
//     "/" an empty path becomes);
//   - a parsed ms= is within 0..kMaxSlowMs;
//   - append_json_string always writes one valid JSON string (nlohmann rejects invalid UTF-8),
//     equal to the bytes when they were valid UTF-8 (JSON.stringify's behaviour);
//   - an accepted event has fields of 1..64 bytes and a step in 1..1000; a rejected one says why.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "lab/endpoints.h"
#include "lab/shipment_service.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

bool valid_utf8(std::string_view s) {
  try {
    (void)nlohmann::json(std::string(s)).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

void fuzz_target(std::string_view target) {
  const knee::lab::Target t = knee::lab::split_target(target);
  check(!t.path.empty() && (inside(t.path, target) || t.path == "/"));
  check(inside(t.query, target));
  (void)knee::lab::route_of(t.path);
  (void)knee::lab::shipment_of(t.path);
  std::string value;
  for (std::string_view name : {"ms", "no", "every", "for", "date", "method"}) {
    if (!knee::lab::find_query_param(t.query, name, value)) continue;
    if (name == "ms") {
      if (auto ms = knee::lab::parse_ms(value)) check(*ms >= 0 && *ms <= knee::lab::kMaxSlowMs);
    }
    std::string json;
    knee::lab::append_json_string(json, value);
    nlohmann::json parsed;
    try {
      parsed = nlohmann::json::parse(json);
    } catch (const nlohmann::json::exception&) {
      std::abort();
    }
    check(parsed.is_string());
    if (valid_utf8(value)) check(parsed.get<std::string>() == value);
  }
}

void fuzz_event(std::string_view body) {
  auto event = knee::lab::parse_event(body);
  if (!event) {
    check(!event.status().message().empty());
    return;
  }
  for (const std::string* field : {&event->tracking_no, &event->state, &event->zone}) {
    check(!field->empty() && field->size() <= 64);
  }
  check(event->step >= 1 && event->step <= 1000);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) == 0) {
    fuzz_target(rest);
  } else {
    fuzz_event(rest);
  }
  return 0;
}
