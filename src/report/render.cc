#include "report/render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/units.h"
#include "report/analyse.h"
#include "report/capacity.h"
#include "report/compare.h"
#include "report/external.h"
#include "report/ladder.h"
#include "report/probe.h"
#include "report/queueing.h"

namespace knee::report {

namespace {

double ms(double ns) { return ns / 1e6; }

std::string errors_text(const RunFigures& r) {
  if (r.total_errors() == 0) return "none";
  std::string out;
  for (const auto& [cause, count] : r.error_causes) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} x{}", cause, count);
  }
  return out;
}

// "812 B", "1.50 KiB", "23.84 MiB", "1.02 GiB": binary units, as wrk's Transfer/sec.
std::string bytes_text(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024.0 * 1024) return fmt::format("{:.2f} KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.2f} MiB", b / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
}

// Counts by kind, "timeout x2, eof_mid_body x1"; "" when there are none.
std::string kinds_text(const std::map<std::string, uint64_t>& by_kind) {
  std::string out;
  for (const auto& [kind, count] : by_kind) {
    if (count == 0) continue;
    out += fmt::format("{}{} x{}", out.empty() ? "" : ", ", kind, count);
  }
  return out;
}

std::string warmup_text(const WarmupFigures& w) {
  std::string out = "  warm-up      ";
  if (w.scheduled) {
    out += fmt::format("{} scheduled, {} never sent; ", *w.scheduled, w.never_sent.value_or(0));
  }
  out += fmt::format("{} sent: {} completed, {} failed", w.sent, w.completed, w.failed);
  const std::string kinds = kinds_text(w.errors);
  if (!kinds.empty()) out += " (" + kinds + ")";
  out += fmt::format(", {} aborted; {} carried over into the measured phase\n", w.aborted,
                     w.carried_over);
  return out;
}

std::string transfer_text(const ByteFigures& b) {
  return fmt::format("  transfer     {}/s received, {}/s sent ({} in, {} of it body; {} out)\n",
                     bytes_text(b.received_per_s), bytes_text(b.sent_per_s),
                     bytes_text(static_cast<double>(b.received)),
                     bytes_text(static_cast<double>(b.received_body)),
                     bytes_text(static_cast<double>(b.sent)));
}

// Connections opened and, for https, what their handshakes agreed on and cost: kept apart from
// request latency, as h2load's "time for connect" and curl's time_appconnect are.
std::string connects_text(const ConnectFigures& c) {
  std::string out = fmt::format(
      "  connects     {} opened, warm-up included; TCP connect p50 {:.3f} ms  p99 {:.3f} ms\n",
      c.opened, ms(static_cast<double>(c.tcp_ns.p50)), ms(static_cast<double>(c.tcp_ns.p99)));
  if (c.h2) {
    const H2Figures& h = *c.h2;
    out += fmt::format(
        "  HTTP/2       server's max concurrent streams {}; {} GOAWAY received{}{}\n",
        h.server_max_streams ? std::to_string(*h.server_max_streams) : "not set", h.goaways,
        h.goaways > 0 ? " (last error " + h.goaway_error + ")" : "",
        h.resent > 0 ? fmt::format("; {} requests it refused sent again", h.resent) : "");
  }
  if (c.tls) {
    const TlsFigures& t = *c.tls;
    out += fmt::format(
        "  TLS          {} {}{}; {} full handshake{}, {} resumed; handshake p50 {:.3f} ms  p99 "
        "{:.3f} ms\n",
        t.version, t.cipher, t.alpn.empty() ? "" : ", ALPN " + t.alpn, t.full,
        t.full == 1 ? "" : "s", t.resumed, ms(static_cast<double>(t.handshake_ns.p50)),
        ms(static_cast<double>(t.handshake_ns.p99)));
  }
  return out;
}

std::string percentiles_ms(const LatencySummary& h) {
  if (h.count == 0) return "none";
  return fmt::format("p50 {:.3f}  p99 {:.3f}  p99.9 {:.3f}  max {:.3f}",
                     ms(static_cast<double>(h.p50)), ms(static_cast<double>(h.p99)),
                     ms(static_cast<double>(h.p999)), ms(static_cast<double>(h.max)));
}

bool kept_schedule(const RunFigures& r) {
  return !r.open || r.duration_s <= 0 ||
         r.open->achieved_rate_rps * r.duration_s >= 0.99 * static_cast<double>(r.open->scheduled);
}

std::string open_loop_text(const RunFigures& r) {
  const OpenLoopFigures& o = *r.open;
  std::string out;
  out += fmt::format(
      "  rate         {:.1f} req/s achieved of {:.1f} target; {} sent over 1 ms late; "
      "largest backlog {}\n",
      o.achieved_rate_rps, o.target_rate_rps, o.late, o.max_backlog);
  if (!kept_schedule(r)) {
    out += "  WARNING: RATE NOT ACHIEVED (see the note below)\n";
  }
  out += fmt::format("  service (ms) {}   (from the actual send)\n",
                     percentiles_ms(o.service_time_ns));
  out +=
      fmt::format("  send lag(ms) {}   (actual - intended send)\n", percentiles_ms(o.send_lag_ns));
  return out;
}

// "4251" or, over repeats, "4251 (4100-4300)".
std::string ranged(const Range& r, int repeats, double scale, int decimals) {
  if (repeats <= 1) return fmt::format("{:.{}f}", r.median * scale, decimals);
  return fmt::format("{:.{}f} ({:.{}f}-{:.{}f})", r.median * scale, decimals, r.min * scale,
                     decimals, r.max * scale, decimals);
}

std::string pct_text(std::optional<double> v) {
  return v && std::isfinite(*v) ? fmt::format("{:.0f}%", *v) : "-";
}

int connections_of(const RunFigures& r) {
  return r.concurrency ? *r.concurrency : r.max_connections.value_or(0);
}

// A sweep level by what it set: "rate 2000 req/s" or "concurrency 16".
std::string level_label(const RunFigures& r) {
  return r.open ? fmt::format("rate {:.0f} req/s", r.open->target_rate_rps)
                : fmt::format("concurrency {}", connections_of(r));
}

// --no-keepalive: what a latency then holds.
std::string keepalive_text(const LoadParams& params, bool open) {
  if (!params.new_connection_per_request.value_or(false)) return "";
  return open ? "  a new connection per request (--no-keepalive): latency from the intended send "
                "includes the TCP connect and any TLS handshake\n"
              : "  a new connection per request (--no-keepalive): latency runs from the connect's "
                "start, so it includes the TCP connect and any TLS handshake\n";
}

// HTTP/2 or HTTP/1.1 pipelining: how requests shared the connections; "" for one request at a
// time over HTTP/1.1.
std::string protocol_text(const LoadParams& params, bool open) {
  const int per = params.per_connection.value_or(1);
  if (!params.protocol && per <= 1) return "";
  std::string out = "  " + protocol_name(params, nullptr);
  if (!open && per > 1) out += fmt::format("; N = connections x {}", per);
  return out + "\n";
}

// An https sweep: what the handshakes agreed on and how many there were, over every level (the
// median runs'; per level in JSON).
std::string sweep_tls_text(const SweepDocument& doc) {
  const TlsFigures* first = nullptr;
  uint64_t full = 0, resumed = 0;
  for (const LevelFigures& level : doc.levels) {
    const auto& c = level.median.connects;
    if (!c || !c->tls) continue;
    if (first == nullptr) first = &*c->tls;
    full += c->tls->full;
    resumed += c->tls->resumed;
  }
  if (first == nullptr) return "";
  return fmt::format(
      "TLS: {} {}{}; {} full handshakes and {} resumed over the levels, warm-ups "
      "included (per level in JSON: connects)\n",
      first->version, first->cipher, first->alpn.empty() ? "" : ", ALPN " + first->alpn, full,
      resumed);
}

// An HTTP/2 sweep: what the servers said about its connections, over every level (the median
// runs'; per level in JSON: connects.h2).
std::string sweep_h2_text(const SweepDocument& doc) {
  std::optional<uint32_t> max_streams;
  uint64_t goaways = 0, resent = 0;
  bool any = false;
  for (const LevelFigures& level : doc.levels) {
    const auto& c = level.median.connects;
    if (!c || !c->h2) continue;
    any = true;
    goaways += c->h2->goaways;
    resent += c->h2->resent;
    if (c->h2->server_max_streams) {
      max_streams =
          std::min(max_streams.value_or(*c->h2->server_max_streams), *c->h2->server_max_streams);
    }
  }
  if (!any) return "";
  return fmt::format(
      "HTTP/2: server's max concurrent streams {}; {} GOAWAY received and {} requests they "
      "refused sent again over the levels, warm-ups included (per level in JSON: connects)\n",
      max_streams ? std::to_string(*max_streams) : "not set", goaways, resent);
}

}  // namespace

std::string io_text(const std::optional<std::string>& io) {
  if (io.value_or("epoll") == "epoll") return "";
  return fmt::format(
      "  requests written through {} (--io {}): many connections' writes per system call, a "
      "lone one by send(2)\n",
      *io == "uring" ? "io_uring" : *io, *io);
}

std::string protocol_name(const LoadParams& params, const ConnectFigures* connects) {
  const int per = params.per_connection.value_or(1);
  std::string out;
  if (params.protocol) {
    out = *params.protocol == "h2" ? "HTTP/2 over TLS"
                                   : "HTTP/2 over cleartext (h2c, prior knowledge)";
    out += fmt::format(", {} stream{} per connection", per, per == 1 ? "" : "s");
  } else {
    out = params.tls ? "HTTP/1.1 over TLS" : "HTTP/1.1";
    if (per > 1) {
      out +=
          fmt::format(" pipelined, {} requests in flight per connection, answered in order", per);
    }
  }
  if (connects != nullptr && connects->tls && !connects->tls->version.empty()) {
    out += fmt::format(" ({} {})", connects->tls->version, connects->tls->cipher);
  }
  return out;
}

std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& left) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      std::string pad(width[c] - row[c].size(), ' ');
      line += c < left.size() && left[c] ? row[c] + pad : pad + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// A mix's endpoints, one row each: share, requests, throughput, latency, errors.
std::string endpoints_text(const std::vector<EndpointFigures>& endpoints, std::string_view indent) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({std::string(indent) + "endpoint", "share", "sent", "ok", "req/s", "p50(ms)",
                  "p99(ms)", "max(ms)", "errors"});
  for (const EndpointFigures& e : endpoints) {
    const bool timed = e.latency_ns.count > 0;
    auto cell = [&](int64_t ns) {
      return timed ? fmt::format("{:.3f}", ms(static_cast<double>(ns))) : std::string("-");
    };
    std::string errors;
    for (const auto& [kind, n] : e.errors) {
      errors += fmt::format("{}{} {}", errors.empty() ? "" : ", ", n, kind);
    }
    rows.push_back({std::string(indent) + e.name, fmt::format("{:.1f}%", 100 * e.share),
                    std::to_string(e.sent), std::to_string(e.ok),
                    fmt::format("{:.1f}", e.throughput_rps), cell(e.latency_ns.p50),
                    cell(e.latency_ns.p99), cell(e.latency_ns.max), errors.empty() ? "0" : errors});
  }
  return render_table(rows, {true});
}

// The target's processes (--stack): the server first, then those behind it, with their CPU and,
// for the replicas, the requests each answered and its share of them (seed 002: balanced
// counts are no proof of balanced latency). Empty without processes behind the server.
std::string processes_text(const std::optional<ResourceFigures>& resources,
                           std::string_view indent) {
  if (!resources || resources->backends.empty()) return "";
  double total = 0;
  for (const ServerFigures& b : resources->backends) total += b.requests.value_or(0);
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
      {std::string(indent) + "process", "pid", "CPU", "busiest thread", "requests", "share"});
  auto row = [&](const ServerFigures& p, bool counted) {
    const bool known = counted && p.requests;
    rows.push_back({std::string(indent) + p.name.value_or("server"), std::to_string(p.pid),
                    pct_text(p.cpu_pct), pct_text(p.busiest_thread_cpu_pct),
                    known ? fmt::format("{:.0f}", *p.requests) : "-",
                    known && total > 0 ? fmt::format("{:.1f}%", 100 * *p.requests / total) : "-"});
  };
  if (resources->server) row(*resources->server, false);
  for (const ServerFigures& b : resources->backends) row(b, true);
  return render_table(rows, {true});
}

// The followed server process (--server-pid, or the built-in server) beside the client's line:
// its CPU (U, % of one core), its busiest thread, and its CPU per successful response (the
// service demand D = U / X of the utilisation law, Denning and Buzen 1978; docs/models.md §7), so
// a run says what each response cost the server, not only a sweep's footer.
std::string server_cpu_text(const ServerFigures& s, double throughput_rps) {
  const auto at_peak = [](const std::optional<double>& peak) {
    return peak ? fmt::format(" ({} in its busiest sample)", pct_text(peak)) : std::string();
  };
  std::string out = fmt::format("  server CPU   pid {}: {} of a core{}", s.pid, pct_text(s.cpu_pct),
                                at_peak(s.cpu_max_pct));
  if (s.threads > 1) {
    out += fmt::format(" over {} threads, busiest {}{}", s.threads,
                       pct_text(s.busiest_thread_cpu_pct), at_peak(s.busiest_thread_cpu_max_pct));
  }
  if (s.cpu_pct && throughput_rps > 0) {
    out += fmt::format("; service demand D = U / X = {} per response",
                       core::format_duration_ns(*s.cpu_pct / 100 / throughput_rps * 1e9));
  }
  return out + "\n";
}

// "uniform arrivals", or "poisson arrivals, seed 7" (the seed when recorded).
std::string arrival_text(const LoadParams& params) {
  std::string out = params.arrival + " arrivals";
  if (params.seed) out += fmt::format(", seed {}", *params.seed);
  return out;
}

std::string load_line(const LoadParams& params) {
  if (params.mix) return fmt::format("--mix '{}' {}", *params.mix, params.url);
  return fmt::format("{} {}", params.method, params.url);
}

std::string shipments_text(const LoadParams& params) {
  if (!params.shipments) return "";
  return fmt::format("  {{shipment}}   ids 1..{} drawn {}\n", *params.shipments,
                     params.zipf ? fmt::format("by Zipf's law, s = {:g}", *params.zipf)
                                 : std::string("uniformly"));
}

// The per-second timeline of a --stages or --timeline run: intended rate (stages), throughput,
// latency and errors over the measured phase, in at most 30 rows (seconds grouped when the run
// was longer).
std::string timeline_text(const LoadParams& params, const RunFigures& r) {
  if ((!params.stages && !params.timeline) || r.intervals.empty()) return "";
  const bool staged = params.stages.has_value();
  const size_t per_row = (r.intervals.size() + 29) / 30;
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"    t(s)", "throughput(req/s)", "p50(ms)", "p99(ms)", "errors"});
  if (staged) rows[0].insert(rows[0].begin() + 1, "target(req/s)");
  for (size_t at = 0; at < r.intervals.size(); at += per_row) {
    const size_t end = std::min(r.intervals.size(), at + per_row);
    double length = 0, target = 0, p50 = 0, p99 = 0;
    int64_t responses = 0, errors = 0;
    for (size_t i = at; i < end; ++i) {
      const IntervalFigures& f = r.intervals[i];
      length += f.length_s;
      target += f.target_rps.value_or(0) * f.length_s;
      responses += f.responses;
      errors += f.errors.value_or(0);
      // A group's percentiles: the worst second's (the per-second histograms are not kept).
      p50 = std::max(p50, static_cast<double>(f.p50_ns));
      p99 = std::max(p99, static_cast<double>(f.p99_ns));
    }
    std::vector<std::string> row = {
        fmt::format("    {:.0f}", r.intervals[at].start_s),
        fmt::format("{:.0f}", length > 0 ? static_cast<double>(responses) / length : 0),
        responses > 0 ? fmt::format("{:.3f}", ms(p50)) : "-",
        responses > 0 ? fmt::format("{:.3f}", ms(p99)) : "-", std::to_string(errors)};
    if (staged)
      row.insert(row.begin() + 1, fmt::format("{:.0f}", length > 0 ? target / length : 0));
    rows.push_back(std::move(row));
  }
  return fmt::format("  timeline{}:\n",
                     per_row > 1
                         ? fmt::format(" ({} s a row, latency of its worst second)", per_row)
                         : "") +
         render_table(rows, {true});
}

namespace {

// A merged result's parts, one row each (with the level first in a sweep): what each process
// drove, measured and concluded about itself. The indent is a prefix of every first cell (right-
// aligned, so every row keeps it).
std::string parts_text(const std::vector<const LevelFigures*>& levels, std::string_view indent) {
  const bool sweep = levels.size() > 1;
  bool clocks = false;
  for (const LevelFigures* level : levels) {
    for (const PartFigures& p : level->parts) clocks = clocks || p.clock_offset_ms.has_value();
  }
  std::vector<std::string> head;
  if (sweep) head.push_back(levels.front()->median.open ? "rate" : "N");
  for (const char* h : {"part", "host", "load", "req/s", "errors", "client cores", "start +ms"}) {
    head.push_back(h);
  }
  if (clocks) head.push_back("clock ms");
  head.push_back("saturated");
  head.front() = std::string(indent) + head.front();
  std::vector<std::vector<std::string>> rows = {head};
  for (const LevelFigures* level : levels) {
    for (const PartFigures& p : level->parts) {
      std::vector<std::string> row;
      if (sweep) {
        row.push_back(level->median.open
                          ? fmt::format("{:.0f}", level->median.open->target_rate_rps)
                          : std::to_string(connections_of(level->median)));
      }
      row.push_back(std::to_string(p.part));
      row.push_back(p.host.empty() ? "?" : p.host);
      row.push_back(p.rate_rps ? fmt::format("{:.0f} req/s", *p.rate_rps)
                               : fmt::format("{} conn", p.connections));
      row.push_back(fmt::format("{:.1f}", p.throughput_rps));
      row.push_back(std::to_string(p.errors));
      row.push_back(fmt::format("{:.2f}", p.client_cpu_cores));
      row.push_back(fmt::format("{:.1f}", p.start_offset_ms));
      if (clocks) row.push_back(fmt::format("{:+.3f}", p.clock_offset_ms.value_or(0)));
      row.push_back(p.saturated);
      row.front() = std::string(indent) + row.front();
      rows.push_back(std::move(row));
    }
  }
  std::vector<bool> left(head.size(), false);
  left[sweep ? 2 : 1] = left.back() = true;
  return render_table(rows, left);
}

}  // namespace

std::string render_run_text(const RunDocument& doc) {
  const LevelFigures& level = doc.level;
  const RunFigures& r = level.median;
  const LatencySummary& h = r.latency_ns;
  const int k = level.repeats;
  const char* threads = r.threads == 1 ? "thread" : "threads";
  const int connections = connections_of(r);
  // Regression (a trial): Ctrl-C in the warm-up printed "0.00 s measured after 3.00 s warm-up".
  std::string measured =
      fmt::format("{:.2f} s measured after {:.2f} s warm-up", r.duration_s, doc.params.warmup_s);
  if (r.interrupted && r.duration_s == 0) {
    measured = doc.params.warmup_s > 0
                   ? fmt::format("interrupted in the {:.2f} s warm-up: nothing measured",
                                 doc.params.warmup_s)
                   : "interrupted before measuring began";
  }
  std::string out;
  out += fmt::format("knee run {}\n", load_line(doc.params));
  if (r.open && doc.params.stages) {
    out += fmt::format(
        "  open loop in stages {} ({}), {} req/s intended on average, up to {} "
        "connections, {} {}, {}\n",
        *doc.params.stages, arrival_text(doc.params), rate_text(r.open->target_rate_rps),
        connections, r.threads, threads, measured);
  } else if (r.open) {
    out += fmt::format(
        "  open loop: {} req/s target ({}), up to {} connections{}, {} "
        "{}, {}\n",
        rate_text(r.open->target_rate_rps), arrival_text(doc.params), connections,
        doc.params.per_connection.value_or(1) > 1
            ? fmt::format(" x {} per connection", *doc.params.per_connection)
            : "",
        r.threads, threads, measured);
  } else {
    const int per = doc.params.per_connection.value_or(1);
    const int opened = connections / per;
    out +=
        fmt::format("  closed loop: {} connection{}{}, {} {}, {}\n", opened, opened == 1 ? "" : "s",
                    per > 1 ? fmt::format(" x {} = {} in flight", per, connections) : "", r.threads,
                    threads, measured);
  }
  out += keepalive_text(doc.params, r.open.has_value());
  out += protocol_text(doc.params, r.open.has_value());
  out += io_text(doc.params.io);
  out += shipments_text(doc.params);
  if (k > 1) {
    out += fmt::format(
        "  {} repeats: figures are the median (min-max); details of the median "
        "run\n",
        k);
  }
  if (r.interrupted && r.duration_s == 0) {
    // Regression (a trial): below that heading it printed every figure of the empty measured
    // phase ("latency no successful response" after 100k warm-up answers) and a verdict.
    out += "  INTERRUPTED before measuring began: no figures, no verdict\n";
    if (r.warmup.sent > 0 || r.warmup.scheduled.value_or(0) > 0) out += warmup_text(r.warmup);
    for (const std::string& note : level.notes) out += fmt::format("  note: {}\n", note);
    return out;
  }
  if (r.interrupted) out += "  INTERRUPTED: the run was stopped early; figures cover part of it\n";
  out += "  requests     ";
  if (r.open) {
    out += fmt::format("{} scheduled, {} never sent; ", r.open->scheduled, r.open->never_sent);
  }
  out += fmt::format("{} sent: {} completed ({} ok), {} failed, {} aborted; {} reconnects\n",
                     r.sent, r.requests, r.ok, r.request_failures(), r.aborted, r.reconnects);
  if (r.warmup.sent > 0 || r.warmup.scheduled.value_or(0) > 0) out += warmup_text(r.warmup);
  out += fmt::format("  throughput   {} req/s\n", ranged(level.ranges.throughput_rps, k, 1, 1));
  const LatencyRanges& lr = level.ranges.latency_ns;
  if (h.count > 0) {
    const LatencyExtremes extremes = latency_extremes(level);
    out +=
        fmt::format("  latency (ms) {}min {:.3f}  max {:.3f}{}\n",
                    r.open ? "from intended send: " : "", ms(static_cast<double>(extremes.min_ns)),
                    ms(static_cast<double>(extremes.max_ns)), k > 1 ? " (of all runs)" : "");
    out += fmt::format("    mean {}  p50 {}  p90 {}\n", ranged(lr.mean, k, 1e-6, 3),
                       ranged(lr.p50, k, 1e-6, 3), ranged(lr.p90, k, 1e-6, 3));
    out += fmt::format("    p99 {}  p99.9 {}\n", ranged(lr.p99, k, 1e-6, 3),
                       ranged(lr.p999, k, 1e-6, 3));
  } else {
    out += "  latency      no successful response\n";
  }
  out += fmt::format("  errors       {}\n", errors_text(r));
  if (r.endpoints) {
    out += fmt::format("  per endpoint{}:\n", k > 1 ? " (the median run)" : "");
    out += endpoints_text(*r.endpoints, "    ");
  }
  if (std::string procs = processes_text(r.resources, "    "); !procs.empty()) {
    out +=
        fmt::format("  per process{} (CPU in % of one core):\n", k > 1 ? " (the median run)" : "");
    out += procs;
  }
  out += transfer_text(r.bytes);
  if (r.connects && r.connects->opened > 0) out += connects_text(*r.connects);
  if (r.open) out += open_loop_text(r);
  out += timeline_text(doc.params, r);
  const LittleFigures& little = level.little;
  if (r.open) {
    out += fmt::format("  Little's law mean in system L = {:.2f}, X * mean R = {:.2f}\n",
                       r.open->mean_in_system, r.throughput_rps * h.mean / 1e9);
  } else if (little.ratio) {
    out += fmt::format(
        "  Little's law N = {}, X * mean R = {:.2f} ({})\n", connections,
        little.x_times_mean_r.value_or(NAN),
        little.holds ? "holds within 5%"
        : level.little_flagged
            ? (reconnect_bound(r)
                   ? fmt::format("below 0.9 N: connections were reopened {} times, and the time "
                                 "spent connecting is outside latency",
                                 r.reconnects)
                   : std::string("below 0.9 N: fewer than N requests were in flight, or many "
                                 "failed or timed out"))
            : std::string("differs by more than 5%"));
  }
  const std::string busiest_second = r.client_max_thread_cpu_demand_1s
                                         ? fmt::format(" ({:.0f}% in its busiest second)",
                                                       100 * *r.client_max_thread_cpu_demand_1s)
                                         : "";
  out += fmt::format(
      "  client CPU   {:.2f} cores; busiest thread used {:.0f}% of a core and "
      "asked for {:.0f}%{}; event loop woke {} late at p99\n",
      r.client_cpu_cores, 100 * r.client_max_thread_cpu, 100 * r.client_max_thread_cpu_demand,
      busiest_second, core::format_duration_ns(static_cast<double>(r.loop_lag_ns.p99)));
  if (r.resources && r.resources->server && r.resources->backends.empty()) {
    out += server_cpu_text(*r.resources->server, r.throughput_rps);
  }
  if (r.client_spin_ns > 0) {
    out += fmt::format(
        "  client spin  {:.2f} s of busy-polling before sends (--spin, auto by default), counted "
        "in client CPU "
        "cores but not in the busiest thread's share\n",
        static_cast<double>(r.client_spin_ns) / 1e9);
  }
  if (!level.parts.empty()) {
    out += fmt::format("  merged from {} parts (each its own figures; its verdict on its host):\n",
                       level.parts.size());
    out += parts_text({&level}, "    ");
  }
  if (level.saturated) {
    out +=
        fmt::format("  saturated    {}: {}\n", level.saturated->resource, level.saturated->detail);
    for (const std::string& w : level.saturated->warnings) out += fmt::format("  warning: {}\n", w);
  }
  for (const std::string& note : level.notes) out += fmt::format("  note: {}\n", note);
  return out;
}

std::string render_sweep_text(const SweepDocument& doc) {
  std::string out;
  const bool open = doc.mode() == LoopMode::kOpen;
  out += sweep_heading(doc.params, doc.target, doc.levels.size(), open) + "\n";
  if (doc.levels.empty()) {
    // Regression (a trial): a sweep interrupted in its first level printed an empty table, "no
    // knee within the sweep" and "Little's law ... holds at every level" of no level.
    out += "no level was measured: no table, no knee\n";
    for (const std::string& w : doc.warnings) out += fmt::format("warning: {}\n", w);
    for (const std::string& w : doc.host.warnings) out += fmt::format("host: {}\n", w);
    return out;
  }
  // One latency unit for the table: microseconds when every level answered within 1 ms, else
  // milliseconds. The decimals are enough for the smallest figure printed to keep two
  // significant digits (up to 0.1 us): a 12 us median in a table of milliseconds prints
  // 0.012, not 0.01. Regression: a sweep from 8 us to 3 ms printed its fast levels as 0.01.
  bool micro = true;
  double smallest_ns = INFINITY;
  for (const LevelFigures& level : doc.levels) {
    if (level.median.latency_ns.count == 0) continue;
    if (level.median.latency_ns.max >= 1'000'000) micro = false;
    smallest_ns = std::min(smallest_ns, level.ranges.latency_ns.p50.min);
  }
  const char* unit = micro ? "us" : "ms";
  const double scale = micro ? 1e-3 : 1e-6;
  int decimals = micro ? 1 : 2;
  if (!micro && std::isfinite(smallest_ns) && smallest_ns > 0) {
    const int needed = static_cast<int>(std::ceil(-std::log10(smallest_ns * scale))) + 1;
    decimals = std::clamp(needed, decimals, 4);
  }
  const std::string median = fmt::format("median({})", unit), p99 = fmt::format("p99({})", unit),
                    max = fmt::format("max({})", unit);
  std::vector<std::vector<std::string>> rows;
  if (open) {
    rows.push_back({"rate(req/s)", "achieved", "requests", "throughput(req/s)", median, p99, max,
                    "L in system", "X*meanR", "errors", "received", "server CPU", "client CPU",
                    "saturated"});
  } else {
    rows.push_back({"concurrency", "requests", "throughput(req/s)", median, p99, max,
                    "X*meanR (=N?)", "errors", "received", "server CPU", "client CPU",
                    "saturated"});
  }
  for (size_t i = 0; i < doc.levels.size(); ++i) {
    const LevelFigures& level = doc.levels[i];
    const RunFigures& r = level.median;
    const int k = level.repeats;
    std::string server_cpu = "-";
    if (r.resources && r.resources->server) server_cpu = pct_text(r.resources->server->cpu_pct);
    std::string saturated = level.saturated ? level.saturated->resource : "-";
    const bool knee = doc.knee.index && *doc.knee.index == i;
    const LatencyRanges& lr = level.ranges.latency_ns;
    // A level without a successful response has no latency to show.
    const bool timed = r.latency_ns.count > 0;
    const std::string p50_cell = timed ? ranged(lr.p50, k, scale, decimals) : "-";
    const std::string p99_cell = timed ? ranged(lr.p99, k, scale, decimals) : "-";
    const std::string max_cell =
        timed ? fmt::format("{:.{}f}", static_cast<double>(r.latency_ns.max) * scale, decimals)
              : "-";
    const std::string received = bytes_text(r.bytes.received_per_s) + "/s";  // like wrk
    if (r.open) {
      rows.push_back({fmt::format("{:.0f}", r.open->target_rate_rps),
                      fmt::format("{:.0f}", r.open->achieved_rate_rps), std::to_string(r.requests),
                      ranged(level.ranges.throughput_rps, k, 1, 0), p50_cell, p99_cell, max_cell,
                      fmt::format("{:.2f}", r.open->mean_in_system),
                      fmt::format("{:.2f}", r.throughput_rps * r.latency_ns.mean / 1e9),
                      std::to_string(r.total_errors()), received, server_cpu,
                      pct_text(100 * r.client_max_thread_cpu_demand),
                      saturated + (knee ? "  <- knee" : "")});
      continue;
    }
    rows.push_back({std::to_string(connections_of(r)), std::to_string(r.requests),
                    ranged(level.ranges.throughput_rps, k, 1, 0), p50_cell, p99_cell, max_cell,
                    timed ? fmt::format("{:.2f}", level.little.x_times_mean_r.value_or(NAN)) : "-",
                    std::to_string(r.total_errors()), received, server_cpu,
                    pct_text(100 * r.client_max_thread_cpu_demand),
                    saturated + (knee ? "  <- knee" : "")});
  }
  out += render_table(rows);
  if (!doc.levels.empty() && doc.levels.front().median.endpoints) {
    out += "per endpoint at each level (its median run):\n";
    for (const LevelFigures& level : doc.levels) {
      if (!level.median.endpoints) continue;
      out += fmt::format("  {}\n", level_label(level.median));
      out += endpoints_text(*level.median.endpoints, "    ");
    }
  }
  if (!doc.levels.empty() && doc.levels.front().median.resources &&
      !doc.levels.front().median.resources->backends.empty()) {
    out += "per process at each level (its median run; CPU in % of one core):\n";
    for (const LevelFigures& level : doc.levels) {
      out += fmt::format("  {}\n", level_label(level.median));
      out += processes_text(level.median.resources, "    ");
    }
  }
  out += sweep_tls_text(doc);
  out += sweep_h2_text(doc);
  for (const LevelFigures& level : doc.levels) {
    for (const std::string& note : level.notes) {
      out += fmt::format("note at {}: {}\n", level_label(level.median), note);
    }
  }
  out += "\n";
  out += fmt::format("knee: {}\n", doc.knee.summary);
  out += fmt::format("  rule: {}\n", doc.knee.rule);
  if (!doc.levels.empty()) {
    const size_t at =
        doc.knee.saturated_index.value_or(doc.knee.index ? *doc.knee.index : doc.levels.size() - 1);
    const LevelFigures& level = doc.levels[at < doc.levels.size() ? at : doc.levels.size() - 1];
    if (level.saturated) {
      const RunFigures& run = level.median;
      const char* where = !doc.knee.index ? "at the last level"
                          : doc.knee.saturated_index && *doc.knee.saturated_index != *doc.knee.index
                              ? "where the server fell behind"
                              : "at the knee";
      out += fmt::format("saturated resource {} ({}): {}: {}\n", where, level_label(run),
                         level.saturated->resource, level.saturated->detail);
      out += fmt::format("  {}\n", level.saturated->rule);
    }
  }
  out += usl_text(doc.usl, doc.usl_error, "req/s");
  if (doc.kneedle) out += fmt::format("Kneedle: {}\n", doc.kneedle->summary);
  if (doc.service_demand) {
    double best = 0;
    for (const LevelFigures& level : doc.levels) {
      best = std::max(best, level.ranges.throughput_rps.median);
    }
    const DemandFigures& sd = *doc.service_demand;
    const std::string where = sd.level_index && *sd.level_index < doc.levels.size()
                                  ? " at " + level_label(doc.levels[*sd.level_index].median)
                                  : "";
    out += fmt::format(
        "{} CPU service demand D = U / X = {:.3f} ms per request{}: bound 1/D = {:.0f} req/s "
        "(measured maximum {:.0f} req/s)\n",
        sd.process ? "busiest process's (" + *sd.process + ")" : std::string("server"),
        sd.cpu_demand_ns / 1e6, where, sd.cpu_bound_rps, best);
    if (sd.total_cpu_demand_ns && sd.total_cpu_bound_rps) {
      out += fmt::format(
          "  all the stack's processes together: sum D = {:.3f} ms per request; the host's CPUs "
          "bound them at {:.0f} req/s\n",
          *sd.total_cpu_demand_ns / 1e6, *sd.total_cpu_bound_rps);
    }
  }
  bool all_hold = true;
  for (const LevelFigures& level : doc.levels) all_hold = all_hold && level.little.holds;
  out +=
      fmt::format("Little's law {} (R = mean latency): {}\n", open ? "L = X * R" : "N = X * R",
                  all_hold ? (open ? "X * mean R is within 5% of the mean in system at every level"
                                   : "X * mean R is within 5% of N at every level")
                           : "does NOT hold at every level; see warnings");
  std::vector<const LevelFigures*> merged;
  for (const LevelFigures& level : doc.levels) {
    if (!level.parts.empty()) merged.push_back(&level);
  }
  if (!merged.empty()) {
    out += fmt::format("merged from {} parts ({}); each part's own figures and verdict:\n",
                       merged.front()->parts.size(), fmt::join(doc.params.merged_from, ", "));
    out += parts_text(merged, "  ");
  }
  for (const std::string& w : doc.warnings) out += fmt::format("warning: {}\n", w);
  for (const std::string& w : doc.host.warnings) out += fmt::format("host: {}\n", w);
  return out;
}

std::string usl_text(const std::optional<UslFigures>& usl, const std::optional<std::string>& error,
                     std::string_view unit) {
  if (!usl) return error ? fmt::format("USL fit: none ({})\n", *error) : "";
  const UslFigures& u = *usl;
  std::string out = fmt::format("USL fit: sigma {:.4f}, kappa {:.6f}, lambda {:.1f} {}, R^2 {:.3f}",
                                u.sigma, u.kappa, u.lambda_rps, unit, u.r_squared.value_or(NAN));
  if (u.peak_concurrency && u.peak_throughput_rps) {
    out += fmt::format("; peak N* = {:.1f} at X(N*) = {:.0f} {}", *u.peak_concurrency,
                       *u.peak_throughput_rps, unit);
  }
  out += "\n";
  for (const std::string& f : u.flags) out += fmt::format("  USL: {}\n", f);
  return out;
}

std::string render_scenarios_text(const ScenariosDocument& doc) {
  std::string out;
  for (const std::string& name : doc.order) {
    auto it = doc.scenarios.find(name);
    if (it == doc.scenarios.end()) continue;
    out += fmt::format("{}== scenario {} ==\n{}", out.empty() ? "" : "\n", name,
                       render_run_text(it->second));
  }
  return out;
}

std::string render_text(const Document& doc) {
  struct Text {
    std::string operator()(const RunDocument& d) const { return render_run_text(d); }
    std::string operator()(const SweepDocument& d) const { return render_sweep_text(d); }
    std::string operator()(const ScenariosDocument& d) const { return render_scenarios_text(d); }
    std::string operator()(const CapacityDocument& d) const { return render_capacity_text(d); }
    std::string operator()(const LadderDocument& d) const { return render_ladder_text(d); }
    std::string operator()(const ProbeDocument& d) const { return render_probe_text(d); }
    std::string operator()(const LittleDocument& d) const { return render_little_text(d); }
    std::string operator()(const Mm1Document& d) const { return render_mm1_text(d); }
    std::string operator()(const MmcDocument& d) const { return render_mmc_text(d); }
    std::string operator()(const UslDocument& d) const { return render_usl_text(d); }
    std::string operator()(const ComparisonDocument& d) const { return render_compare_text(d); }
    std::string operator()(const ExternalSweepDocument& d) const {
      return render_external_sweep_text(d);
    }
    std::string operator()(const LatencyReportDocument& d) const {
      const LatencySummary& l = d.latency_ns;
      return fmt::format(
          "{} responses; latency (ms) min {:.3f}  mean {:.3f}  p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  "
          "p99.9 {:.3f}  max {:.3f}\n",
          l.count, ms(static_cast<double>(l.min)), ms(l.mean), ms(static_cast<double>(l.p50)),
          ms(static_cast<double>(l.p90)), ms(static_cast<double>(l.p99)),
          ms(static_cast<double>(l.p999)), ms(static_cast<double>(l.max)));
    }
  };
  return std::visit(Text{}, doc);
}

std::string sweep_heading(const LoadParams& params, const std::string& target, size_t levels,
                          bool open) {
  std::string out = fmt::format("knee sweep: {}\n", load_line(params));
  if (target != params.url) out += fmt::format("  target: {}\n", target);
  // Regression (a new user's trial): with -n the heading said "600.00 s measured", -d's bound.
  std::string measured = fmt::format("{:.2f} s measured", params.duration_s);
  if (params.requests) {
    measured = fmt::format("{} requests measured", *params.requests);
    if (!open) measured += fmt::format(" (at most {:.0f} s)", params.duration_s);
  }
  out += fmt::format(
      "  {} level{}, {}, {} after {:.2f} s warm-up each, {} client thread{}{}\n", levels,
      levels == 1 ? "" : "s", open ? "open loop (latency from the intended send)" : "closed loop",
      measured, params.warmup_s, params.threads, params.threads == 1 ? "" : "s",
      params.repeats > 1 ? fmt::format(", {} repeats per level: median (min-max)", params.repeats)
                         : "");
  out += keepalive_text(params, open);
  out += protocol_text(params, open);
  out += io_text(params.io);
  out += shipments_text(params);
  return out;
}

std::string live_sweep_header(bool by_rate) {
  return fmt::format("{:>11}  {:>8}  {:>17}  {:>10}  {:>8}  {:>6}",
                     by_rate ? "rate(req/s)" : "concurrency", "requests", "throughput(req/s)",
                     "median(ms)", "p99(ms)", "errors");
}

std::string live_sweep_row(const std::vector<core::RunResult>& repeats, bool by_rate) {
  if (repeats.empty()) return "";
  const core::RunResult& r = repeats[median_index(repeats)];
  const core::Histogram& h = r.stats.latency_ns;
  return fmt::format(
      "{:>11}  {:>8}  {:>17.0f}  {:>10.2f}  {:>8.2f}  {:>6}",
      by_rate ? fmt::format("{:.0f}", r.target_rate_rps) : std::to_string(r.concurrency()),
      r.stats.completed, r.throughput_rps(), static_cast<double>(h.value_at_percentile(50)) / 1e6,
      static_cast<double>(h.value_at_percentile(99)) / 1e6, r.stats.total_errors());
}

}  // namespace knee::report
