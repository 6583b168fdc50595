// The --mix and --stages flags into engine::LoadOptions (cli/load_flags.h).
#include <fmt/core.h>
#include <strings.h>

#include <algorithm>

#include "cli/load_flags.h"
#include "core/files.h"
#include "engine/mix.h"

namespace knee::cli {

using core::Result;
using core::Status;

bool LoadFlags::open_loop() const {
  if (rate_given || !stages.empty()) return true;
  if (mix.empty()) return false;
  auto parsed = engine::parse_mix(mix);
  return parsed && parsed->rates;
}

Result<std::optional<double>> LoadFlags::mix_options(engine::LoadOptions& o) const {
  std::optional<double> mix_rate;
  if (mix.empty()) return mix_rate;
  if (method != "GET" || !body.empty() || !body_file.empty()) {
    return Status::invalid_argument(
        "--mix with -m, --body or --body-file: each endpoint of the mix names its own method "
        "and body (METHOD /target @BODY_FILE=WEIGHT); drop them");
  }
  auto parsed_mix = engine::parse_mix(mix);
  if (!parsed_mix) return parsed_mix.status();
  for (const engine::MixText& e : parsed_mix->entries) {
    engine::MixEndpoint endpoint{e.name, o.request, e.weight};
    endpoint.request.method = e.method;
    endpoint.request.url.target = e.target;
    endpoint.request.body.clear();
    if (!e.body_file.empty()) {
      auto read = core::read_text_file(fmt::format("--mix {}", e.name), e.body_file);
      if (!read) return read.status();
      endpoint.request.body = std::move(read).value();
      // A .json body is sent as JSON unless -H names the type (curl --json does the same).
      const bool typed = std::any_of(
          o.request.headers.begin(), o.request.headers.end(),
          [](const auto& h) { return strcasecmp(h.first.c_str(), "Content-Type") == 0; });
      if (!typed && e.body_file.ends_with(".json")) {
        endpoint.request.headers.emplace_back("Content-Type", "application/json");
      }
    }
    o.mix.push_back(std::move(endpoint));
  }
  if (parsed_mix->rates) mix_rate = parsed_mix->total_weight();
  return mix_rate;
}

Status LoadFlags::stage_options(engine::LoadOptions& o) const {
  if (stages.empty()) return Status::success();
  if (rate_given || duration_given || requests_given) {
    return Status::invalid_field(
        "stages", "not with -r, -d or -n: the stages set the rate and how long the run lasts");
  }
  auto parsed_stages = engine::parse_stages(stages);
  if (!parsed_stages) return parsed_stages.status();
  const engine::RateProfile profile(*parsed_stages);
  if (o.warmup >= profile.total()) {
    return Status::invalid_field(
        "warmup", fmt::format("-w {} leaves nothing of the stages' {:.3f} s to measure", warmup,
                              std::chrono::duration<double>(profile.total()).count()));
  }
  o.stages = std::move(parsed_stages).value();
  o.rate_rps = profile.peak_rps();
  o.duration = profile.total() - o.warmup;
  o.interval = std::chrono::seconds(1);  // the report's timeline
  if (connections_given) o.max_connections = connections;
  return Status::success();
}

}  // namespace knee::cli
