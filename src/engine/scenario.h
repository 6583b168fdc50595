// Scenarios: several load tests run at once (engine/plan.h), each with its own target, load model
// and report. `knee run --scenario 'name=fast url=http://127.0.0.1:8080/fast c=10' --scenario
// 'name=slow url=http://127.0.0.1:8080/slow-sync?ms=20 c=4'` measures /fast while /slow-sync
// loads the same server: the interference experiment of seed 002, section 2.2.
//
// Scenario text: space-separated key=value pairs; values may not contain spaces.
//   name=NAME      required, unique among the scenarios: the report's heading and JSON key
//   url=URL        required, http://HOST[:PORT]/PATH, {conn} and {seq} expand as in `knee run URL`
//   c=N            connections (closed loop: the N of N = X * R; open loop: the pool's cap),
//                  default 10, or in open loop the engine's default pool for the rate
//   r=RATE         open loop at RATE requests/s (> 0); absent: closed loop
//   t=THREADS      worker threads, 1..connections, default 1
//   m=METHOD       HTTP method, default GET
//   arrival=KIND   open loop: uniform (default) or poisson
// Everything else (phases, timeout, grace, headers, body) comes from the shared options; scenario
// i (from 0, in the order given) uses the Poisson seed base.seed + i, so two open-loop scenarios
// do not draw the same arrivals.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "engine/load.h"

namespace knee::engine {

// The accepted form, quoted in every parse error and in --help.
inline constexpr std::string_view kScenarioForm =
    "'name=NAME url=URL [c=N] [r=RATE] [t=THREADS] [m=METHOD] [arrival=uniform|poisson]' "
    "(space-separated key=value, values without spaces)";

struct Scenario {
  std::string name;
  std::string url;  // as typed, placeholders unexpanded (the report's URL template)
  LoadOptions options;
};

// Parses every text, in order, over `base`. Errors (kInvalidArgument, one line quoting
// --scenario, the text and kScenarioForm): a text that is not key=value pairs, an unknown or
// repeated key, a bad value, a missing name or url, a name used twice, and any option error of
// the scenario's own keys (named as the key: "c=: ..."); an error of a shared option is returned
// as LoadOptions::validate() gives it.
core::Result<std::vector<Scenario>> parse_scenarios(const std::vector<std::string>& texts,
                                                    const LoadOptions& base);

}  // namespace knee::engine
