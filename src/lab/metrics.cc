#include "lab/metrics.h"

#include <fmt/format.h>

#include <cmath>

namespace knee::lab {

std::string_view route_label(Route route) {
  switch (route) {
    case Route::kTracking:
      return "/tracking";
    case Route::kFast:
      return "/fast";
    case Route::kSlowAsync:
      return "/slow-async";
    case Route::kSlowSync:
      return "/slow-sync";
    case Route::kHealth:
      return "/health";
    case Route::kStall:
      return "/stall";
    case Route::kShipment:
      return "/tracking/{no}";
    case Route::kEvents:
      return "/events";
    case Route::kBilling:
      return "/billing/run";
    case Route::kMetrics:
      return "/metrics";
    case Route::kNone:
    case Route::kCount:
      break;
  }
  return "other";
}

void WorkerMetrics::observe(Route route, int status, core::Nanos latency) {
  PerRoute& r = routes[static_cast<size_t>(route)];
  size_t i = 0;
  while (i + 1 < kCountedStatuses.size() && kCountedStatuses[i] != status) ++i;
  r.by_status[i].fetch_add(1, std::memory_order_relaxed);
  r.latency_ns.observe(kLatencyBucketsS, 1e9,
                       static_cast<uint64_t>(std::max<int64_t>(0, latency.count())));
}

std::string sample_value(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15) {
    return fmt::format("{}", static_cast<int64_t>(v));
  }
  return fmt::format("{}", v);  // shortest round-trip form
}

void append_request_metrics(std::string& out, const WorkerMetrics* workers, size_t count,
                            int64_t in_flight) {
  out.append(
      "# HELP knee_lab_requests_total Requests answered, by route and status.\n"
      "# TYPE knee_lab_requests_total counter\n");
  for (size_t r = 0; r < kRoutes; ++r) {
    for (size_t s = 0; s < kCountedStatuses.size(); ++s) {
      uint64_t n = 0;
      for (size_t w = 0; w < count; ++w) {
        n += workers[w].routes[r].by_status[s].load(std::memory_order_relaxed);
      }
      if (n == 0) continue;
      fmt::format_to(
          std::back_inserter(out), "knee_lab_requests_total{{route=\"{}\",status=\"{}\"}} {}\n",
          route_label(static_cast<Route>(r)),
          kCountedStatuses[s] == 0 ? std::string("other") : std::to_string(kCountedStatuses[s]), n);
    }
  }
  fmt::format_to(std::back_inserter(out),
                 "# HELP knee_lab_requests_in_flight Requests routed and not yet answered.\n"
                 "# TYPE knee_lab_requests_in_flight gauge\nknee_lab_requests_in_flight {}\n",
                 in_flight);
  out.append(
      "# HELP knee_lab_request_duration_seconds Time from a request's parse to its response "
      "queued, by route.\n"
      "# TYPE knee_lab_request_duration_seconds histogram\n");
  for (size_t r = 0; r < kRoutes; ++r) {
    Histogram<kLatencyBucketsS.size()> sum;
    for (size_t w = 0; w < count; ++w) {
      const auto& h = workers[w].routes[r].latency_ns;
      for (size_t i = 0; i < h.counts.size(); ++i) {
        sum.counts[i].fetch_add(h.counts[i].load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
      }
      sum.sum.fetch_add(h.sum.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    uint64_t total = 0;
    for (const auto& c : sum.counts) total += c.load(std::memory_order_relaxed);
    if (total == 0) continue;
    append_histogram(out, "knee_lab_request_duration_seconds",
                     fmt::format("route=\"{}\"", route_label(static_cast<Route>(r))),
                     kLatencyBucketsS, 1e9, sum);
  }
}

}  // namespace knee::lab
