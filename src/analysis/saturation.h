// The saturated resource of one measurement level: which of client, CPU, disk or network
// limited the throughput, named beside the figure (seed 004: "name the saturated resource
// alongside any throughput figure ... flat throughput with nothing saturated means the client is
// not asking for more"), from the utilisation and saturation figures of the USE method
// (core::ResourceUse, measured by probes/use.h) and the client's own CPU (core::ClientUse).
//
// The rule, applied in this order; the first resource that qualifies is named:
//   1. client   the busiest client worker thread used >= client_thread_cpu_share of a core (90 %).
//               It comes first because it invalidates the rest: the level measured knee's own
//               limit, not the server's ("client-bound: these numbers measure knee, not the
//               server").
//   2. cpu      any one CPU >= cpu_busy_pct busy (90 %), or the server process used
//               >= server_cpu_pct_per_core (90 %) of one core times min(its threads, the CPUs),
//               or its busiest thread >= server_cpu_pct_per_core of one core (an event loop at
//               100 % is saturated while other cores idle).
//   3. disk     a disk's %util >= disk_util_pct (90 %), or its aqu-sz >= disk_queue_size (1)
//               while its await (reads and writes together) grew by >= disk_await_growth (1.5x)
//               since the previous level; %util alone misleads on devices that serve requests
//               in parallel (SSD, NVMe, RAID), which the queue and await catch. Without a
//               previous level only %util counts.
//   4. network  an interface >= net_link_util_pct (80 %) of its known link speed, or packets
//               dropped, TCP segments retransmitted, or listen-queue overflows or drops per
//               second above their thresholds (0: any).
//   5. none     "no hardware resource saturated: a software or concurrency limit (pool, lock,
//               connection cap), or the client is not asking for more".
// Utilisation thresholds count from "at or above"; error rates from "above". Unknown (NaN)
// figures never qualify. The host figures are those of the machine knee runs on: for a server on
// another host only the client and network verdicts speak about the path to it.
//
// Pure functions: no I/O, no clock, no shared state; safe to call from any thread.
#pragma once

#include <string>
#include <vector>

#include "core/resource_use.h"

namespace knee::analysis {

struct SaturationThresholds {
  // Busiest client worker thread's CPU time over wall time, 0..1, at or above which the level is
  // client-bound.
  double client_thread_cpu_share = 0.90;
  // Busy % of any one CPU at or above which the CPU is saturated.
  double cpu_busy_pct = 90;
  // % of one core per usable core (min(server threads, CPUs)) at or above which the server
  // process is CPU-bound; also the limit for its busiest thread alone.
  double server_cpu_pct_per_core = 90;
  // iostat %util at or above which a disk is saturated.
  double disk_util_pct = 90;
  // iostat aqu-sz at or above which a disk is saturated when its await also grew by
  // disk_await_growth (a ratio) since the previous level.
  double disk_queue_size = 1;
  double disk_await_growth = 1.5;
  // % of the known link speed (sar's %ifutil) at or above which an interface is saturated.
  double net_link_util_pct = 80;
  // Error rates, per second, above which the network counts as saturated: packets dropped on
  // any interface, TCP segments retransmitted, listen-queue overflows or drops. On a lossy
  // network where a few retransmits are normal, raise them.
  double net_drops_per_s = 0;
  double tcp_retrans_per_s = 0;
  double listen_overflows_per_s = 0;
};

struct SaturationVerdict {
  // "client", "cpu", "disk", "network" or "none".
  std::string resource;
  // Plain words with the figures, e.g. "server process at 99% of one core (CPU 0 98% busy)";
  // for "none" the sentence of rule 5.
  std::string detail;
  // Every figure that crossed a threshold, the named resource's first, then the others in rule
  // order ("cpu: CPU 0 98% busy (>= 90%)"), then pressure stall figures where the host has PSI;
  // for "none", the highest figure of each resource instead of crossings.
  std::vector<std::string> evidence;
  // The rule in words with the thresholds used, printed beside the result.
  std::string rule;
};

// Names the resource that limited the level whose host figures are `use` and client figures
// `client`. previous_level: the figures of the level before (lower concurrency or rate), for
// the disk's "await growing" condition; nullptr for the first level.
SaturationVerdict name_saturated_resource(const core::ResourceUse& use,
                                          const core::ClientUse& client,
                                          const SaturationThresholds& thresholds = {},
                                          const core::ResourceUse* previous_level = nullptr);

}  // namespace knee::analysis
