#include "analysis/saturation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <optional>
#include <utility>

namespace knee::analysis {
namespace {

using core::is_known;

constexpr double kBytesPerMb = 1e6;

// The sentence of rule 5.
constexpr const char* kNoneDetail =
    "no hardware resource saturated: a software or concurrency limit (pool, lock, connection "
    "cap), or the client is not asking for more";

// "none" when the host was not sampled: no hardware figure was seen, so none is ruled out.
constexpr const char* kNotSampledDetail =
    "nothing knee can see saturated: the host was not sampled, so only knee's own figures were "
    "checked (connections, its CPU, its sends) and none reached a limit";

// What one rule found: whether it qualifies, its words, and the figures behind them.
struct Finding {
  bool saturated = false;
  std::string detail;                  // when saturated
  std::vector<std::string> crossings;  // figures over a threshold
  std::vector<std::string> highest;    // the resource's highest figures, for "none"
  std::vector<std::string> warnings;   // what weakens the level without naming the resource
};

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

// "2.40 ms", "812 us".
std::string ms_text(double ns) {
  return ns >= 1e6 ? fmt::format("{:.2f} ms", ns / 1e6) : fmt::format("{:.0f} us", ns / 1e3);
}

// Rates and counts printed beside a "> 0" threshold keep their significant digits, so 1 in a
// minute reads 0.0167/s, never 0.0/s.
std::string rate_text(double per_s) { return fmt::format("{:.3g}", per_s); }

Finding check_unreachable(const core::ClientUse& client) {
  Finding f;
  if (!is_known(client.unreachable_since_s)) return f;
  f.saturated = true;
  const std::string cause =
      client.connect_failure_cause.empty() ? "" : " (" + client.connect_failure_cause + ")";
  // Since 0: no answer in the measured phase at all (regression: "failed after its last answer"
  // of a target that never answered).
  f.detail = client.unreachable_since_s <= 0
                 ? fmt::format(
                       "target unreachable for the whole measured phase: {} connects failed{} "
                       "and it answered nothing",
                       client.connect_failures_since, cause)
                 : fmt::format(
                       "target unreachable since {:.1f} s: {} connects failed after its "
                       "last answer{}",
                       client.unreachable_since_s, client.connect_failures_since, cause);
  f.crossings.push_back("unreachable: " + f.detail);
  return f;
}

// The pool was exhausted (every connection busy or connecting) long enough that late sends
// waited for the server's responses, not for the client.
bool pool_bound(const core::ClientUse& c, const SaturationThresholds& t) {
  return is_known(c.pool_full_share) && c.pool_full_share >= t.pool_full_share;
}

Finding check_client(const core::ClientUse& client, const SaturationThresholds& t) {
  Finding f;
  const double share = client.max_thread_cpu_share;
  if (is_known(share)) {
    const std::string figure =
        fmt::format("busiest client thread at {:.0f}% of one core", share * 100);
    if (share >= t.client_thread_cpu_share) {
      f.saturated = true;
      f.detail = "client-bound: these numbers measure knee, not the server (" + figure + ")";
      f.crossings.push_back(
          fmt::format("client: {} (>= {:.0f}%)", figure, t.client_thread_cpu_share * 100));
    } else {
      f.highest.push_back("client: " + figure);
    }
  }
  // Unknown (a result without the count) keeps the rule as it was before the count existed.
  const double own_late = client.late_with_connection_free_share;
  if (client.open_loop && is_known(client.send_lag_p99_ns) &&
      client.send_lag_p99_ns > t.max_send_lag_ns && !pool_bound(client, t) &&
      (!is_known(own_late) || own_late > t.client_late_share)) {
    const std::string lag = fmt::format(
        "send lag p99 {} (> {}) with connections free{}: the client could not keep its schedule",
        ms_text(client.send_lag_p99_ns), ms_text(t.max_send_lag_ns),
        is_known(own_late) ? fmt::format(" ({:.1f}% of sends)", own_late * 100) : "");
    f.crossings.push_back("client: " + lag);
    // The detail is printed after the resource ("client: ..."): it does not name it again.
    if (!f.saturated) f.detail = lag + "; these numbers measure knee, not the server";
    f.saturated = true;
  }
  return f;
}

Finding check_pool(const core::ClientUse& c, const SaturationThresholds& t) {
  Finding f;
  if (!c.open_loop || !is_known(c.send_lag_p99_ns) || c.send_lag_p99_ns <= t.max_send_lag_ns ||
      !pool_bound(c, t)) {
    return f;
  }
  f.saturated = true;
  // Regression (a new user's trial): with no response completed the median was "nan us".
  const std::string why =
      is_known(c.service_p50_ns)
          ? fmt::format("responses took {} (median service time)", ms_text(c.service_p50_ns))
          : std::string("no response completed (every request failed or timed out)");
  f.detail = fmt::format(
      "pool of {} connections exhausted because {}: every connection was busy {:.0f}% of the "
      "time{}, so the server's latency, not the client, held requests back",
      c.pool_connections, why, c.pool_full_share * 100,
      c.pool_full_busiest_second ? " in the busiest second" : "");
  f.crossings.push_back("pool: " + f.detail);
  return f;
}

// One process of the target against its CPU limit: the process over min(threads, CPUs it may
// run on), or its busiest thread over one core.
struct ProcessCpu {
  std::string process, thread;  // "server process at 97% of one core", "app2's busiest ..."
  std::string process_crossing, thread_crossing;  // empty: not crossed
  double heat = 0;  // the larger of cpu / limit and busiest thread / threshold
  int usable = 1;   // cores it can use
};

ProcessCpu process_cpu(const core::ProcessUse& s, int known_cpus, const SaturationThresholds& t) {
  ProcessCpu out;
  const int threads = s.threads;
  // The CPUs it may run on: the host's, or fewer when its affinity says so (taskset -c 0: one).
  // Regression: a server of 6 threads pinned to one CPU at 99% was "none" (limit 2 cores).
  const int cpus = s.cpus_allowed > 0 && (known_cpus == 0 || s.cpus_allowed < known_cpus)
                       ? s.cpus_allowed
                       : known_cpus;
  if (threads > 0 && cpus > 0) {
    out.usable = std::min(threads, cpus);
  } else if (threads > 0 || cpus > 0) {
    out.usable = std::max(threads, cpus);
  }
  const std::string who = s.name.empty() ? "server process" : s.name;
  out.process = fmt::format("{} at {:.0f}% of one core", who, s.cpu_pct);
  const double limit = t.server_cpu_pct_per_core * out.usable;
  out.heat = s.cpu_pct / limit;
  if (s.cpu_pct >= limit) {
    out.process_crossing = fmt::format("cpu: {} (>= {:.0f}% x {} = min({} threads, {} CPUs{}))",
                                       out.process, t.server_cpu_pct_per_core, out.usable,
                                       threads > 0 ? std::to_string(threads) : std::string("?"),
                                       cpus, cpus < known_cpus ? " its affinity allows" : "");
  }
  if (is_known(s.busiest_thread_cpu_pct)) {
    out.thread = fmt::format("{}'s busiest thread at {:.0f}% of one core",
                             s.name.empty() ? "server" : s.name, s.busiest_thread_cpu_pct);
    out.heat = std::max(out.heat, s.busiest_thread_cpu_pct / t.server_cpu_pct_per_core);
    if (s.busiest_thread_cpu_pct >= t.server_cpu_pct_per_core) {
      out.thread_crossing =
          fmt::format("cpu: {} (>= {:.0f}%)", out.thread, t.server_cpu_pct_per_core);
    }
  }
  return out;
}

// The target's processes whose CPU is known: the server first, then those behind it.
std::vector<const core::ProcessUse*> known_processes(const core::ResourceUse& use) {
  std::vector<const core::ProcessUse*> out;
  if (use.server && is_known(use.server->cpu_pct)) out.push_back(&*use.server);
  for (const core::ProcessUse& b : use.backends) {
    if (is_known(b.cpu_pct)) out.push_back(&b);
  }
  return out;
}

Finding check_cpu(const core::ResourceUse& use, const core::ClientUse& client,
                  const SaturationThresholds& t) {
  Finding f;
  std::optional<size_t> busiest;
  int known_cpus = 0;
  for (size_t i = 0; i < use.cpu_busy_pct.size(); ++i) {
    const double busy = use.cpu_busy_pct[i];
    if (!is_known(busy)) continue;
    ++known_cpus;
    if (!busiest || busy > use.cpu_busy_pct[*busiest]) busiest = i;
  }
  const std::string busiest_cpu =
      busiest ? fmt::format("CPU {} {:.0f}% busy", *busiest, use.cpu_busy_pct[*busiest]) : "";
  const std::vector<const core::ProcessUse*> processes = known_processes(use);
  if (processes.empty()) {
    // The host's CPUs say nothing about a server knee does not know.
    if (!busiest_cpu.empty()) {
      f.highest.push_back(
          "cpu: the server's CPU is unknown (no server process: give "
          "--server-pid); busiest CPU of this host " +
          busiest_cpu);
      // Regression (a new user's trial): a CPU kept busy by knee's own --spin was put down to
      // "processes knee cannot tell apart". A client using 80 % of that CPU's busy time or more
      // is named as the likely cause.
      const double busy = use.cpu_busy_pct[*busiest];
      if (busy >= t.cpu_busy_pct && is_known(client.cpu_cores) &&
          client.cpu_cores * 100 >= 0.8 * busy) {
        f.warnings.push_back(fmt::format(
            "the server's CPU is unknown (no server process; give --server-pid PID): {}, about "
            "what knee's own client used ({:.2f} cores, busy-polling included), so that CPU is "
            "likely knee's and cpu was not named",
            busiest_cpu, client.cpu_cores));
      } else if (busy >= t.cpu_busy_pct) {
        f.warnings.push_back(fmt::format(
            "the server's CPU is unknown (no server process; give --server-pid PID): {}, by "
            "processes knee cannot tell apart, so cpu was not named",
            busiest_cpu));
      }
    }
    return f;
  }

  // Each process against its own limit; the hottest one is named.
  std::vector<ProcessCpu> each;
  size_t hottest = 0;
  double total_pct = 0;
  int total_usable = 0;
  for (const core::ProcessUse* p : processes) {
    each.push_back(process_cpu(*p, known_cpus, t));
    if (each.back().heat > each[hottest].heat) hottest = each.size() - 1;
    total_pct += p->cpu_pct;
    total_usable += each.back().usable;
  }
  for (const ProcessCpu& c : each) {
    if (!c.process_crossing.empty()) f.crossings.push_back(c.process_crossing);
    if (!c.thread_crossing.empty()) f.crossings.push_back(c.thread_crossing);
  }
  const ProcessCpu& hot = each[hottest];
  const bool process_hot = !hot.process_crossing.empty();
  const bool thread_hot = !hot.thread_crossing.empty();

  // Together: several processes (a balancer and its replicas on one host) share the host's
  // CPUs and can fill them while none is at its own limit. Full: the CPUs they may use are
  // >= cpu_busy_pct busy on average, and the target's processes used >= stack_cpu_share of
  // what was busy beside knee's client (the rest is the kernel's network work on their behalf,
  // which no process is billed for, and other processes: host contention).
  std::string together;
  bool together_hot = false;
  if (processes.size() > 1 && known_cpus > 0) {
    double busy_cores = 0;
    for (double b : use.cpu_busy_pct) busy_cores += is_known(b) ? b / 100 : 0;
    const double client_cores = is_known(client.cpu_cores) ? client.cpu_cores : 0;
    const int cpus = std::min(total_usable, known_cpus);
    const double busy_pct = 100 * busy_cores / known_cpus;
    std::vector<std::string> parts;
    for (const core::ProcessUse* p : processes) {
      parts.push_back(
          fmt::format("{} {:.2f}", p->name.empty() ? "server" : p->name, p->cpu_pct / 100));
    }
    together = fmt::format(
        "the target's {} processes together at {:.2f} cores ({}), the host's {} CPUs {:.0f}% "
        "busy, knee's client {:.2f} cores",
        processes.size(), total_pct / 100, join(parts, ", "), known_cpus, busy_pct, client_cores);
    const double beside_client = busy_cores - client_cores;
    together_hot = cpus == known_cpus && busy_pct >= t.cpu_busy_pct && beside_client > 0 &&
                   total_pct / 100 >= t.stack_cpu_share * beside_client;
    if (together_hot) {
      f.crossings.push_back(fmt::format("cpu: {} (>= {:.0f}% busy, the target >= {:.0f}% of it)",
                                        together, t.cpu_busy_pct, 100 * t.stack_cpu_share));
    }
  }

  f.saturated = process_hot || thread_hot || together_hot;
  std::vector<std::string> context;
  if (process_hot) {
    f.detail = hot.process;
    if (!busiest_cpu.empty()) context.push_back(busiest_cpu);
  } else if (thread_hot) {
    f.detail = hot.thread;
    context.push_back(hot.process);
    if (!busiest_cpu.empty()) context.push_back(busiest_cpu);
  } else if (together_hot) {
    f.detail = together;
    if (!busiest_cpu.empty()) context.push_back(busiest_cpu);
  }
  if (!context.empty()) f.detail += " (" + join(context, ", ") + ")";
  if (!f.saturated) {
    for (const ProcessCpu& c : each) {
      f.highest.push_back("cpu: " + c.process);
      if (!c.thread.empty()) f.highest.push_back("cpu: " + c.thread);
    }
    if (!together.empty()) f.highest.push_back("cpu: " + together);
    if (!busiest_cpu.empty()) f.highest.push_back("cpu: busiest CPU " + busiest_cpu);
  }
  return f;
}

// Other processes' CPU: the host's busy cores less the server's and knee's, when it is enough
// to matter.
std::optional<std::string> host_contention(const core::ResourceUse& use,
                                           const core::ClientUse& client,
                                           const SaturationThresholds& t) {
  double busy_cores = 0;
  bool any = false;
  std::optional<size_t> busiest;
  for (size_t i = 0; i < use.cpu_busy_pct.size(); ++i) {
    if (!is_known(use.cpu_busy_pct[i])) continue;
    busy_cores += use.cpu_busy_pct[i] / 100;
    any = true;
    if (!busiest || use.cpu_busy_pct[i] > use.cpu_busy_pct[*busiest]) busiest = i;
  }
  // Without the server's own CPU, other processes cannot be told from the server.
  const bool server_known = use.server && is_known(use.server->cpu_pct);
  if (!any || !server_known || !is_known(client.cpu_cores)) return std::nullopt;
  double target_cores = 0;
  for (const core::ProcessUse* p : known_processes(use)) target_cores += p->cpu_pct / 100;
  const double others = busy_cores - target_cores - client.cpu_cores;
  if (others < t.contention_cores) return std::nullopt;
  return fmt::format(
      "host contention: other processes used {:.2f} cores while this level ran (CPU {} {:.0f}% "
      "busy); they shared the CPUs with the server and knee, so the level's figures are weaker "
      "for it",
      others, *busiest, use.cpu_busy_pct[*busiest]);
}

// Mean time per I/O of reads and writes together (iostat's await), ms; NaN when unknown.
double await_ms(const core::DiskUse& d) {
  const double ios = d.reads_per_s + d.writes_per_s;
  if (!is_known(ios) || !is_known(d.read_await_ms) || !is_known(d.write_await_ms)) {
    return core::kUnknown;
  }
  if (!(ios > 0)) return 0;
  return (d.read_await_ms * d.reads_per_s + d.write_await_ms * d.writes_per_s) / ios;
}

const core::DiskUse* find_disk(const core::ResourceUse* use, const std::string& device) {
  if (use == nullptr) return nullptr;
  for (const core::DiskUse& d : use->disks) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

Finding check_disk(const core::ResourceUse& use, const SaturationThresholds& t,
                   const core::ResourceUse* previous) {
  Finding f;
  const core::DiskUse* named = nullptr;
  std::string named_detail;
  const core::DiskUse* highest = nullptr;
  for (const core::DiskUse& d : use.disks) {
    if (is_known(d.util_pct) && (highest == nullptr || d.util_pct > highest->util_pct)) {
      highest = &d;
    }
    const bool util_hot = is_known(d.util_pct) && d.util_pct >= t.disk_util_pct;
    if (util_hot) {
      f.crossings.push_back(fmt::format("disk: {} %util {:.0f}% (>= {:.0f}%)", d.device, d.util_pct,
                                        t.disk_util_pct));
    }
    bool queue_hot = false;
    double growth = 0, before = 0, now = 0;
    const core::DiskUse* prev = find_disk(previous, d.device);
    if (prev != nullptr && is_known(d.queue_size) && d.queue_size >= t.disk_queue_size) {
      before = await_ms(*prev);
      now = await_ms(d);
      if (is_known(before) && is_known(now) && before > 0) {
        growth = now / before;
        queue_hot = growth >= t.disk_await_growth;
      }
    }
    if (queue_hot) {
      f.crossings.push_back(fmt::format(
          "disk: {} aqu-sz {:.2f} (>= {:.2f}) with await {:.1f}x the previous level's "
          "({:.2f} -> {:.2f} ms, >= {:.1f}x)",
          d.device, d.queue_size, t.disk_queue_size, growth, before, now, t.disk_await_growth));
    }
    if (!util_hot && !queue_hot) continue;
    // Name the busiest saturated device.
    if (named != nullptr && !(is_known(d.util_pct) && d.util_pct > named->util_pct)) continue;
    named = &d;
    if (util_hot) {
      named_detail = fmt::format(
          "disk {} at {:.0f}% util (iostat %util), aqu-sz {:.2f}, r_await {:.2f} ms, w_await "
          "{:.2f} ms",
          d.device, d.util_pct, d.queue_size, d.read_await_ms, d.write_await_ms);
    } else {
      named_detail = fmt::format(
          "disk {} aqu-sz {:.2f} with await up {:.1f}x since the previous level ({:.2f} -> "
          "{:.2f} ms), {:.0f}% util",
          d.device, d.queue_size, growth, before, now, d.util_pct);
    }
  }
  f.saturated = named != nullptr;
  f.detail = named_detail;
  if (!f.saturated && highest != nullptr) {
    f.highest.push_back(fmt::format("disk: busiest disk {} at {:.0f}% util, aqu-sz {:.2f}",
                                    highest->device, highest->util_pct, highest->queue_size));
  }
  return f;
}

std::string mb_per_s(double bytes_per_s) {
  return fmt::format("{:.1f} MB/s", bytes_per_s / kBytesPerMb);
}

Finding check_network(const core::ResourceUse& use, const core::ClientUse& client,
                      const SaturationThresholds& t) {
  Finding f;
  std::vector<std::string> details;  // in priority order: link, listen queue, drops, retransmits

  const core::NetUse* busiest_link = nullptr;
  const core::NetUse* busiest_traffic = nullptr;
  for (const core::NetUse& n : use.nets) {
    const double traffic = std::max(n.rx_bytes_per_s, n.tx_bytes_per_s);
    if (is_known(traffic) &&
        (busiest_traffic == nullptr ||
         traffic > std::max(busiest_traffic->rx_bytes_per_s, busiest_traffic->tx_bytes_per_s))) {
      busiest_traffic = &n;
    }
    if (!is_known(n.util_pct)) continue;
    if (busiest_link == nullptr || n.util_pct > busiest_link->util_pct) busiest_link = &n;
    if (n.util_pct >= t.net_link_util_pct) {
      f.crossings.push_back(
          fmt::format("network: {} at {:.0f}% of its {:.0f} Mbit/s link (>= {:.0f}%)", n.interface,
                      n.util_pct, n.speed_mbit, t.net_link_util_pct));
    }
  }
  if (busiest_link != nullptr && busiest_link->util_pct >= t.net_link_util_pct) {
    details.push_back(fmt::format("{} at {:.0f}% of its {:.0f} Mbit/s link (rx {}, tx {})",
                                  busiest_link->interface, busiest_link->util_pct,
                                  busiest_link->speed_mbit, mb_per_s(busiest_link->rx_bytes_per_s),
                                  mb_per_s(busiest_link->tx_bytes_per_s)));
  }

  const double overflows = use.listen_overflows_per_s, listen_drops = use.listen_drops_per_s;
  const bool overflow_hot = is_known(overflows) && overflows > t.listen_overflows_per_s;
  const bool listen_drop_hot = is_known(listen_drops) && listen_drops > t.listen_overflows_per_s;
  if (overflow_hot || listen_drop_hot) {
    const std::string figures = fmt::format("{} overflows/s, {} listen drops/s",
                                            rate_text(is_known(overflows) ? overflows : 0),
                                            rate_text(is_known(listen_drops) ? listen_drops : 0));
    f.crossings.push_back(
        fmt::format("network: TCP listen queue {} (> {:g}/s)", figures, t.listen_overflows_per_s));
    details.push_back("TCP listen queue overflowing (" + figures +
                      "): connections arrive faster than the server accepts them");
  }

  const core::NetUse* dropping = nullptr;
  for (const core::NetUse& n : use.nets) {
    if (!is_known(n.drops_per_s) || !(n.drops_per_s > t.net_drops_per_s)) continue;
    f.crossings.push_back(fmt::format("network: {} dropped {} packets/s (> {:g}/s)", n.interface,
                                      rate_text(n.drops_per_s), t.net_drops_per_s));
    if (dropping == nullptr || n.drops_per_s > dropping->drops_per_s) dropping = &n;
  }
  if (dropping != nullptr) {
    details.push_back(fmt::format("{} dropping {} packets/s", dropping->interface,
                                  rate_text(dropping->drops_per_s)));
  }

  // This run's traffic: segments retransmitted on knee's own connections. The host-wide counter
  // (other connections too) is context only.
  if (client.own_segments_out > 0) {
    const double share =
        static_cast<double>(client.own_retransmits) / static_cast<double>(client.own_segments_out);
    const std::string figure =
        fmt::format("{:.3g}% of the segments knee's connections sent were retransmitted ({} of {})",
                    100 * share, client.own_retransmits, client.own_segments_out);
    if (share > t.tcp_retrans_share) {
      f.crossings.push_back(
          fmt::format("network: {} (> {:g}%)", figure, 100 * t.tcp_retrans_share));
      details.push_back(figure);
    } else if (client.own_retransmits > 0) {
      f.highest.push_back("network: " + figure);
    }
  }
  if (is_known(use.tcp_retrans_per_s) && use.tcp_retrans_per_s > 0) {
    f.highest.push_back(fmt::format("network: host-wide TCP retransmits {}/s (all connections)",
                                    rate_text(use.tcp_retrans_per_s)));
  }

  f.saturated = !details.empty();
  if (f.saturated) f.detail = details.front();
  if (!f.saturated) {
    if (busiest_link != nullptr) {
      f.highest.push_back(fmt::format("network: busiest link {} at {:.0f}% of {:.0f} Mbit/s",
                                      busiest_link->interface, busiest_link->util_pct,
                                      busiest_link->speed_mbit));
    } else if (busiest_traffic != nullptr) {
      f.highest.push_back(fmt::format(
          "network: busiest interface {} rx {}, tx {} (speed unknown)", busiest_traffic->interface,
          mb_per_s(busiest_traffic->rx_bytes_per_s), mb_per_s(busiest_traffic->tx_bytes_per_s)));
    }
  }
  return f;
}

std::string pressure_line(const core::ResourceUse& use) {
  std::vector<std::string> parts;
  if (is_known(use.cpu_pressure_some_pct)) {
    parts.push_back(fmt::format("cpu {:.1f}%", use.cpu_pressure_some_pct));
  }
  if (is_known(use.io_pressure_some_pct)) {
    parts.push_back(fmt::format("io {:.1f}%", use.io_pressure_some_pct));
  }
  if (is_known(use.memory_pressure_some_pct)) {
    parts.push_back(fmt::format("memory {:.1f}%", use.memory_pressure_some_pct));
  }
  if (parts.empty()) return "";
  return "pressure (PSI some, share of time a task waited): " + join(parts, ", ");
}

// The first finding that qualifies names the verdict's resource and words; nullptr when none.
template <size_t N>
const Finding* name_first(const std::pair<const char*, Finding> (&findings)[N],
                          SaturationVerdict& v) {
  for (const auto& [resource, finding] : findings) {
    if (!finding.saturated) continue;
    v.resource = resource;
    v.detail = finding.detail;
    return &finding;
  }
  return nullptr;
}

std::string rule_text(const SaturationThresholds& t) {
  return fmt::format(
      "rule, first match wins: unreachable if connects failed from the target's last answer to "
      "the end, for at least {:g} s ({:g}% of a phase under {:g} s) and {:g}% of the phase; client "
      "if the busiest client thread demands >= {:.0f}% of a core, or a paced client's send lag "
      "p99 exceeds {} while connections were free, more than {:g}% of its sends that late "
      "counted from when a connection was idle for them (then the numbers measure knee, not "
      "the server); else cpu if the server process uses >= {:g}% of a core x min(its threads, "
      "CPUs), or its busiest thread >= {:g}% of a core, or, with processes behind it "
      "(--stack), the host's CPUs are >= {:.0f}% busy and the target's processes used >= {:.0f}% "
      "of that beside knee's client (the target's CPU only: other processes are host "
      "contention, a warning); else disk if %util >= {:.0f}%, or aqu-sz >= {:g} while "
      "await grows >= {:g}x over the previous level; else network if a link carries >= {:.0f}% "
      "of its known speed, or drops > {:g}/s, listen-queue overflows > {:g}/s or more than {:g}% "
      "of knee's own segments retransmitted; else pool if the pool was exhausted at least {:g}% "
      "of the time (the server's latency); else none: {}",
      t.unreachable_min_s, 100 * t.unreachable_short_share,
      t.unreachable_min_s / t.unreachable_short_share, 100 * t.unreachable_min_share,
      t.client_thread_cpu_share * 100, ms_text(t.max_send_lag_ns), 100 * t.client_late_share,
      t.server_cpu_pct_per_core, t.server_cpu_pct_per_core, t.cpu_busy_pct, 100 * t.stack_cpu_share,
      t.disk_util_pct, t.disk_queue_size, t.disk_await_growth, t.net_link_util_pct,
      t.net_drops_per_s, t.listen_overflows_per_s, 100 * t.tcp_retrans_share,
      100 * t.pool_full_share, kNoneDetail);
}

}  // namespace

std::optional<double> unreachable_since(double duration_s, double last_ok_s,
                                        uint64_t connect_failures_after,
                                        const SaturationThresholds& t) {
  if (connect_failures_after == 0 || !(duration_s > 0)) return std::nullopt;
  const double since_s = last_ok_s < 0 ? 0.0 : last_ok_s;
  assert(t.unreachable_short_share > 0);  // the rule's text divides by it
  const double floor_s = std::min(t.unreachable_min_s, t.unreachable_short_share * duration_s);
  if (duration_s - since_s < std::max(floor_s, t.unreachable_min_share * duration_s)) {
    return std::nullopt;
  }
  return since_s;
}

SaturationVerdict name_saturated_resource(const core::ResourceUse& use,
                                          const core::ClientUse& client,
                                          const SaturationThresholds& thresholds,
                                          const core::ResourceUse* previous_level,
                                          const core::ResourceUse* means) {
  std::pair<const char*, Finding> findings[] = {
      {"unreachable", check_unreachable(client)},
      {"client", check_client(client, thresholds)},
      {"cpu", check_cpu(use, client, thresholds)},
      {"disk", check_disk(use, thresholds, previous_level)},
      {"network", check_network(use, client, thresholds)},
      {"pool", check_pool(client, thresholds)},
  };

  SaturationVerdict v;
  v.rule = rule_text(thresholds);
  v.resource = "none";
  v.detail = kNoneDetail;
  const Finding* named = name_first(findings, v);

  if (named != nullptr) {
    v.evidence = named->crossings;
    for (const auto& [resource, finding] : findings) {
      if (&finding == named) continue;
      v.evidence.insert(v.evidence.end(), finding.crossings.begin(), finding.crossings.end());
    }
  } else {
    if (use.intervals == 0) v.evidence.push_back("no host figures were measured");
    for (const auto& [resource, finding] : findings) {
      v.evidence.insert(v.evidence.end(), finding.highest.begin(), finding.highest.end());
    }
  }
  if (std::string pressure = pressure_line(use); !pressure.empty()) {
    v.evidence.push_back(std::move(pressure));
  }
  for (const auto& [resource, finding] : findings) {
    v.warnings.insert(v.warnings.end(), finding.warnings.begin(), finding.warnings.end());
  }
  const core::ResourceUse& over_phase = means != nullptr ? *means : use;
  const std::optional<std::string> contention = host_contention(over_phase, client, thresholds);
  if (contention) v.warnings.push_back(*contention);
  // A client late by its send lag alone, its own thread far from a core, on a host whose CPUs
  // others kept busy, was most likely waiting for a CPU: the detail says so, where it read as
  // knee's own limit (a new user's trial: 3.79 ms of lag at 10% of a core, a build filling both
  // CPUs).
  const bool lag_only = named == &findings[1].second &&
                        !(client.max_thread_cpu_share >= thresholds.client_thread_cpu_share);
  if (lag_only && contention) {
    v.detail +=
        "; other processes kept the host's CPUs busy (host contention, see the warning), "
        "so knee likely waited for a CPU: rerun on a quieter host";
  } else if (lag_only && !(use.server && is_known(use.server->cpu_pct)) &&
             is_known(over_phase.cpu_busy_all_pct) &&
             over_phase.cpu_busy_all_pct >= thresholds.cpu_busy_pct) {
    v.detail += fmt::format(
        "; the host's CPUs were {:.0f}% busy, so knee likely waited for a CPU that the server or "
        "other processes held (--server-pid PID tells them apart)",
        over_phase.cpu_busy_all_pct);
  }
  if (named == nullptr && use.intervals == 0) {
    v.detail = kNotSampledDetail;
  } else if (named == nullptr && (!use.server || !is_known(use.server->cpu_pct))) {
    v.detail = std::string(
                   "nothing knee can see saturated (the server's CPU is unknown without "
                   "--server-pid): ") +
               kNoneDetail;
  }
  return v;
}

namespace {

std::string external_rule_text(const SaturationThresholds& t) {
  return fmt::format(
      "rule, first match wins: client if the benchmark's own job uses >= {:.0f}% of a core, or "
      "the command >= {:.0f}% of a core per thread (it measures itself); else cpu if the "
      "target's process (--server-pid) uses >= {:g}% of a core x min(its threads, CPUs) or its "
      "busiest thread >= {:g}%, or the host's CPUs are >= {:.0f}% busy; else disk if, on the "
      "device behind the files, await grew >= {:g}x over the previous level while its "
      "operations per second grew less than {:g}x, with aqu-sz >= {:g}; else network if a link "
      "carries >= {:.0f}% of its known speed; else none: the benchmark's own concurrency is the "
      "limit",
      t.client_thread_cpu_share * 100, t.client_thread_cpu_share * 100, t.server_cpu_pct_per_core,
      t.server_cpu_pct_per_core, t.cpu_busy_pct, t.disk_await_growth, kExternalDiskFlatGrowth,
      t.disk_queue_size, t.net_link_util_pct);
}

Finding check_external_client(const ExternalLevelUse& l, const SaturationThresholds& t) {
  Finding f;
  const double limit = t.client_thread_cpu_share * 100;
  if (is_known(l.busiest_job_cpu_pct)) {
    f.highest.push_back(fmt::format("client: {}'s busiest job at {:.0f}% of a core", l.tool,
                                    l.busiest_job_cpu_pct));
    if (l.busiest_job_cpu_pct >= limit) {
      f.saturated = true;
      f.detail = fmt::format(
          "{} itself: a job used {:.0f}% of a core (its usr + sys CPU), so the benchmark, not the "
          "device or server, is the limit",
          l.tool, l.busiest_job_cpu_pct);
      f.crossings.push_back(fmt::format("client: {}'s job at {:.0f}% of a core (>= {:.0f}%)",
                                        l.tool, l.busiest_job_cpu_pct, limit));
    }
  }
  if (is_known(l.tool_cpu_cores)) {
    f.highest.push_back(fmt::format("client: {} used {:.2f} cores", l.tool, l.tool_cpu_cores));
    if (l.tool_threads > 0 && l.tool_cpu_cores * 100 >= limit * l.tool_threads) {
      if (!f.saturated) {
        f.saturated = true;
        f.detail = fmt::format(
            "{} itself: it used {:.2f} cores with {} thread{}, so the benchmark, not the device "
            "or server, is the limit",
            l.tool, l.tool_cpu_cores, l.tool_threads, l.tool_threads == 1 ? "" : "s");
      }
      f.crossings.push_back(fmt::format("client: {} at {:.2f} cores (>= {:.0f}% x {} threads)",
                                        l.tool, l.tool_cpu_cores, limit, l.tool_threads));
    }
  }
  return f;
}

Finding check_external_cpu(const core::ResourceUse& use, const ExternalLevelUse& l,
                           const SaturationThresholds& t) {
  if (!known_processes(use).empty()) {
    Finding f = check_cpu(use, core::ClientUse{}, t);
    if (f.saturated) return f;
  }
  Finding f;
  if (!is_known(use.cpu_busy_all_pct)) return f;
  f.highest.push_back(fmt::format("cpu: the host's CPUs {:.0f}% busy", use.cpu_busy_all_pct));
  if (use.cpu_busy_all_pct < t.cpu_busy_pct) return f;
  const double busy_cores = use.cpu_busy_all_pct / 100 *
                            static_cast<double>(std::max<size_t>(1, use.cpu_busy_pct.size()));
  const double tool = is_known(l.tool_cpu_cores) ? l.tool_cpu_cores : 0;
  const bool server_known = use.server && is_known(use.server->cpu_pct);
  const double target = tool + (server_known ? use.server->cpu_pct / 100 : 0);
  const std::string crossing = fmt::format("cpu: the host's CPUs {:.0f}% busy (>= {:.0f}%)",
                                           use.cpu_busy_all_pct, t.cpu_busy_pct);
  if (server_known && target < t.stack_cpu_share * busy_cores) {
    // The benchmark and its known target used too little of the busy time to be what filled it.
    f.warnings.push_back(fmt::format(
        "host contention: the CPUs were {:.0f}% busy, but the benchmark and the server used only "
        "{:.2f} of the {:.2f} busy cores; other processes filled them, so cpu was not named",
        use.cpu_busy_all_pct, target, busy_cores));
    return f;
  }
  f.saturated = true;
  f.crossings.push_back(crossing);
  f.detail = fmt::format(
      "the host's CPUs at {:.0f}% busy on average, shared by the benchmark and its target",
      use.cpu_busy_all_pct);
  if (!server_known && is_known(l.tool_cpu_cores)) {
    f.warnings.push_back(fmt::format(
        "the benchmark used {:.2f} of the {:.2f} busy cores; the rest were its target's or other "
        "processes' (give --server-pid to tell them apart)",
        tool, busy_cores));
  }
  return f;
}

Finding check_external_disk(const core::ResourceUse& use, const ExternalLevelUse& l,
                            const core::ResourceUse* previous, const SaturationThresholds& t) {
  Finding f;
  for (const core::DiskUse& d : use.disks) {
    if (!l.device.empty() && d.device != l.device) continue;
    if (l.device.empty() && l.files_in_memory) continue;
    const double ops = d.reads_per_s + d.writes_per_s;
    const double now = await_ms(d);
    f.highest.push_back(
        fmt::format("disk: {} {:.0f} ops/s, %util {:.0f}%, aqu-sz {:.2f}, await {:.2f} ms",
                    d.device, ops, d.util_pct, d.queue_size, now));
    const core::DiskUse* prev = find_disk(previous, d.device);
    if (prev == nullptr || !is_known(now) || !is_known(d.queue_size)) continue;
    const double before = await_ms(*prev);
    const double prev_ops = prev->reads_per_s + prev->writes_per_s;
    if (!is_known(before) || !(before > 0) || !(prev_ops > 0) || !is_known(ops)) continue;
    const double await_growth = now / before, ops_growth = ops / prev_ops;
    if (await_growth >= t.disk_await_growth && ops_growth < kExternalDiskFlatGrowth &&
        d.queue_size >= t.disk_queue_size) {
      f.crossings.push_back(fmt::format(
          "disk: {} await {:.1f}x the previous level's ({:.2f} -> {:.2f} ms, >= {:g}x) while its "
          "ops/s grew {:.2f}x (< {:g}x), aqu-sz {:.2f}",
          d.device, await_growth, before, now, t.disk_await_growth, ops_growth,
          kExternalDiskFlatGrowth, d.queue_size));
      if (!f.saturated) {
        f.saturated = true;
        f.detail = fmt::format(
            "disk {}: {:.0f} ops/s, {:.2f}x the previous level's, while await grew {:.1f}x "
            "({:.2f} -> {:.2f} ms) with {:.1f} I/Os queued (aqu-sz), {:.0f}% util: more in flight "
            "only waits",
            d.device, ops, ops_growth, await_growth, before, now, d.queue_size, d.util_pct);
      }
    }
  }
  return f;
}

}  // namespace

SaturationVerdict name_external_limit(const core::ResourceUse& use, const ExternalLevelUse& level,
                                      const core::ResourceUse* previous_use,
                                      const SaturationThresholds& thresholds) {
  core::ResourceUse net_only;  // the network rule's link figures, none of knee's own sockets
  net_only.nets = use.nets;
  Finding network = check_network(net_only, core::ClientUse{}, thresholds);
  network.crossings.erase(
      std::remove_if(network.crossings.begin(), network.crossings.end(),
                     [](const std::string& c) { return c.find("link") == std::string::npos; }),
      network.crossings.end());
  network.saturated = !network.crossings.empty();
  std::pair<const char*, Finding> findings[] = {
      {"client", check_external_client(level, thresholds)},
      {"cpu", check_external_cpu(use, level, thresholds)},
      {"disk", check_external_disk(use, level, previous_use, thresholds)},
      {"network", std::move(network)},
  };
  SaturationVerdict v;
  v.rule = external_rule_text(thresholds);
  v.resource = "none";
  v.detail = is_known(level.in_flight)
                 ? fmt::format(
                       "nothing saturated: the benchmark's own concurrency ({:g} in flight) is "
                       "the limit",
                       level.in_flight)
                 : std::string("nothing saturated: the benchmark's own concurrency is the limit");
  if (is_known(level.in_flight) && is_known(level.x_times_mean_r) &&
      level.x_times_mean_r < 0.5 * level.in_flight) {
    v.detail = fmt::format(
        "nothing saturated: the benchmark kept {:.2f} of its {:g} in flight busy (X * mean R), "
        "so its own pacing (a rate cap, think time) is the limit",
        level.x_times_mean_r, level.in_flight);
  }
  const Finding* named = name_first(findings, v);
  for (const auto& [resource, finding] : findings) {
    if (named == nullptr) {
      v.evidence.insert(v.evidence.end(), finding.highest.begin(), finding.highest.end());
    } else if (&finding == named) {
      v.evidence.insert(v.evidence.begin(), finding.crossings.begin(), finding.crossings.end());
    } else {
      v.evidence.insert(v.evidence.end(), finding.crossings.begin(), finding.crossings.end());
    }
  }
  for (const auto& [resource, finding] : findings) {
    v.warnings.insert(v.warnings.end(), finding.warnings.begin(), finding.warnings.end());
  }
  if (level.files_in_memory) {
    v.evidence.push_back("disk: the files are in memory (tmpfs or ramfs): no device behind them");
  }
  if (use.intervals == 0) v.evidence.push_back("no host figures were measured");
  if (std::string pressure = pressure_line(use); !pressure.empty()) {
    v.evidence.push_back(std::move(pressure));
  }
  return v;
}

}  // namespace knee::analysis
