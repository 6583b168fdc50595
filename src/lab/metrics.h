// The lab server's /metrics in Prometheus's text exposition format (version 0.0.4,
// prometheus.io/docs/instrumenting/exposition_formats): requests by route and status, requests
// in flight, a latency histogram per route, and (lab/shipment_service.h) the shipment service's
// cache, commits, batch sizes and store latency.
//
// A worker's request figures (WorkerMetrics) are written by that worker alone; the service's are
// written by its store threads; all with relaxed atomics, read by whichever thread renders
// /metrics, so a scrape sees each value whole but not all of them at one instant, as with any
// Prometheus client.
#pragma once

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "lab/endpoints.h"

namespace knee::lab {

// Upper bounds of the latency buckets, in seconds (100 us to 10 s; +Inf is implied).
inline constexpr std::array<double, 16> kLatencyBucketsS = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

// A histogram with fixed bounds, counts per bucket (the last is +Inf) and the sum, in the unit the
// caller records (ns for latency, events for batch sizes).
template <size_t N>
struct Histogram {
  std::array<std::atomic<uint64_t>, N + 1> counts{};
  std::atomic<uint64_t> sum{0};
  // Adds one observation of `value` in the bounds' unit times `scale` (bounds in s, values in ns:
  // scale 1e9). Any thread; relaxed.
  void observe(const std::array<double, N>& bounds, double scale, uint64_t value) {
    size_t i = 0;
    while ((i < N) && (static_cast<double>(value) > bounds[i] * scale)) ++i;
    counts[i].fetch_add(1, std::memory_order_relaxed);
    sum.fetch_add(value, std::memory_order_relaxed);
  }
};

// The statuses counted by their own label; any other counts as "other".
inline constexpr std::array<int, 15> kCountedStatuses = {200, 201, 400, 404, 405, 408, 409, 413,
                                                         414, 431, 500, 501, 503, 505, 0};
inline constexpr size_t kRoutes = static_cast<size_t>(Route::kCount);

// One worker's request figures, by route.
struct alignas(64) WorkerMetrics {
  struct PerRoute {
    std::array<std::atomic<uint64_t>, kCountedStatuses.size()> by_status{};
    Histogram<kLatencyBucketsS.size()> latency_ns;
  };
  std::array<PerRoute, kRoutes> routes;

  // One answered request: its route, status and time from parse to response queued.
  void observe(Route route, int status, core::Nanos latency);
};

// The label /metrics gives a route ("/tracking/{no}", "other" for unknown paths).
std::string_view route_label(Route route);

// The requests part of /metrics, summed over `workers`: knee_lab_requests_total{route,status},
// knee_lab_requests_in_flight, knee_lab_request_duration_seconds{route}.
void append_request_metrics(std::string& out, const WorkerMetrics* workers, size_t count,
                            int64_t in_flight);

// Formats a sample value as Prometheus reads it (Go's strconv.ParseFloat): integers as integers,
// others with enough digits to round-trip.
std::string sample_value(double v);

// Appends the lines of one histogram: name_bucket{labels,le="..."} (cumulative), name_sum (the
// recorded sum divided by `scale`: seconds for ns with 1e9), name_count. `labels` is empty or
// like `route="/fast"`; the # HELP and # TYPE lines are the caller's.
template <size_t N>
inline void append_histogram(std::string& out, std::string_view name, std::string_view labels,
                             const std::array<double, N>& bounds, double scale,
                             const Histogram<N>& h) {
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= N; ++i) {
    cumulative += h.counts[i].load(std::memory_order_relaxed);
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep,
                   i < N ? sample_value(bounds[i]) : "+Inf", cumulative);
  }
  const std::string braces = labels.empty() ? "" : fmt::format("{{{}}}", labels);
  fmt::format_to(std::back_inserter(out), "{}_sum{} {}\n{}_count{} {}\n", name, braces,
                 sample_value(static_cast<double>(h.sum.load(std::memory_order_relaxed)) / scale),
                 name, braces, cumulative);
}

}  // namespace knee::lab
