// Deterministic result models for renderer tests (golden files, compare): synthetic runs with
// fixed histograms, counters, resource samples and host context, analysed by the real
// report::analyse_run / analyse_sweep. Same input, same model, so the renderers' output is
// byte-for-byte stable.
//
// The synthetic server: 3 ms of wait plus 0.25 ms of CPU per request on one thread, so
// throughput grows with N up to about 4,000 req/s and the knee falls at N = 16.
#pragma once

#include <string>
#include <utility>

#include "core/run_stats.h"
#include "probes/host_context.h"
#include "report/analyse.h"

namespace knee::testing {

// A fixed host: every field set, one warning.
probes::HostContext fixed_host();

// One closed-loop run of `concurrency` connections over 2 s at `throughput_rps`, latencies
// spread around `mean_ms` (50 % at 0.9x, 40 % at 1.0x, 9 % at 1.3x, 1 % at 2.0x), `timeouts`
// timeout errors, and the server at `server_cpu_pct` of one core (negative: not sampled).
core::RunResult synthetic_closed_run(int concurrency, double throughput_rps, double mean_ms,
                                     uint64_t timeouts, double server_cpu_pct);

// One open-loop run at `rate_rps` over 2 s that kept its schedule, latencies around `mean_ms`.
core::RunResult synthetic_open_run(double rate_rps, double mean_ms);

// `knee run -c 10 --repeat 3` against the synthetic server.
report::RunDocument golden_run_report();
// `knee run https://... --h2 -c 4 --streams 10` against a server that allows 8 streams and sent
// one GOAWAY: the protocol lines, the HTTP/2 connects line and the max-streams note.
report::RunDocument golden_h2_run_report();
// `knee run -r 1000` (open loop, one run).
report::RunDocument golden_open_run_report();
// An open-loop run in --stages of a two-endpoint --mix (reads and writes of the shipment
// service), with its per-second timeline.
report::RunDocument golden_mix_run_report();
// `knee sweep --levels 1,2,4,8,16,32`, one run per level, server sampled, 2 timeouts at 32.
report::SweepDocument golden_sweep_report();
// golden_sweep_report() as the two parts (--part 0/2 and 1/2) of one load: part 1 measured on
// host `host` and began every run `skew_s` seconds later by its clock.
std::pair<report::SweepDocument, report::SweepDocument> golden_sweep_parts(double skew_s,
                                                                           std::string host);

// A ladder of three measured rungs, SQLite's plans, a disk behind /tmp and two network floors.
report::LadderDocument golden_ladder();
// A probe of 5 attempts, 4 complete (200) and one closed before a response.
report::ProbeDocument golden_probe();
// A capacity search: bracket 100, 200, 400 (fails), bisect 300, confirm 300.
report::CapacityDocument golden_capacity();

}  // namespace knee::testing
