// Scenarios: several load tests run at once, each with its own target, load model and report.
// `knee run --scenario 'name=fast url=http://127.0.0.1:8080/fast c=10' --scenario 'name=slow
// url=http://127.0.0.1:8080/slow-sync?ms=20 c=4'` measures /fast while /slow-sync loads the same
// server: the interference experiment of seed 002, section 2.2.
//
// Scenario text: space-separated key=value pairs; values may not contain spaces.
//   name=NAME      required, unique among the scenarios: the report's heading and JSON key
//   url=URL        required, http://HOST[:PORT]/PATH, {conn} and {seq} expand as in `knee run URL`
//   c=N            connections (closed loop: the N of N = X * R; open loop: the pool's limit),
//                  default 10, or in open loop enough for the rate at 250 ms of latency
//   r=RATE         open loop at RATE requests/s (> 0); absent: closed loop
//   t=THREADS      worker threads, 1..connections, default 1
//   m=METHOD       HTTP method, default GET
//   arrival=KIND   open loop: uniform (default) or poisson
// The shared flags -d, -w, --timeout, --grace, -H, --body and --body-file apply to every
// scenario; scenario i (from 0, in command-line order) uses the Poisson seed --seed + i, so two
// open-loop scenarios do not draw the same arrivals. The per-scenario flags (-c, -t, -m, -r,
// --arrival) and the positional URL may not be given outside the scenarios.
//
// The scenarios run at once through the engine's plan runner (engine/plan.h).
// Thread-safety: parsing is a pure function of its inputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/load_flags.h"
#include "core/status.h"
#include "engine/load.h"

namespace knee::cli {

// The accepted form, quoted in every parse error and in --help.
inline constexpr std::string_view kScenarioForm =
    "'name=NAME url=URL [c=N] [r=RATE] [t=THREADS] [m=METHOD] [arrival=uniform|poisson]' "
    "(space-separated key=value, values without spaces)";

struct Scenario {
  std::string name;
  std::string url;  // as typed, placeholders unexpanded (the report's URL template)
  engine::LoadOptions options;
};

// Parses every --scenario text, in order, into load options: the scenario's keys over the shared
// flags, parsed by LoadFlags::to_options. Errors (kInvalidArgument, one line): a text that is not
// key=value pairs, an unknown or repeated key, a bad value (the message quotes --scenario, the
// text, the key and kScenarioForm), a missing name or url, a name used twice, a per-scenario flag
// or the positional URL given beside --scenario, and any error of the shared flags as
// to_options reports it; kIoError when --body-file cannot be read. `texts` must not be empty.
core::Result<std::vector<Scenario>> parse_scenarios(const std::vector<std::string>& texts,
                                                    const LoadFlags& shared);

}  // namespace knee::cli
