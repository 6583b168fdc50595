#include "engine/load.h"

#include <fmt/format.h>

#include <memory>
#include <thread>
#include <vector>

#include "engine/closed_loop.h"
#include "net/socket.h"

namespace knee::engine {

using core::Result;
using core::Status;

Status LoadOptions::validate() const {
  if (connections < 1) {
    return Status::invalid_argument(
        fmt::format("-c/--connections: {} is below 1; give a positive number", connections));
  }
  if (threads < 1 || threads > connections) {
    return Status::invalid_argument(
        fmt::format("-t/--threads: {} must be between 1 and the number of connections ({})",
                    threads, connections));
  }
  if (duration.count() <= 0) {
    return Status::invalid_argument("-d/--duration: must be above 0, e.g. 2s or 500ms");
  }
  if (warmup.count() < 0) {
    return Status::invalid_argument("-w/--warmup: must be 0 or more, e.g. 1s");
  }
  if (timeout.count() <= 0) {
    return Status::invalid_argument("--timeout: must be above 0, e.g. 10s");
  }
  if (request.url.scheme != "http") {
    return Status::invalid_argument(fmt::format(
        "URL {}: only http:// is supported so far (https is planned)", request.url.to_string()));
  }
  return Status::ok();
}

Result<core::RunResult> run_load(const LoadOptions& options, const RunControl& control) {
  if (Status s = options.validate(); !s) return s;
  auto compiled = http::RequestTemplate::compile(options.request);
  if (!compiled) return compiled.status();
  const http::RequestTemplate request = std::move(compiled).value();

  const http::Url& url = options.request.url;
  auto address = net::resolve(url.host, url.port);
  if (!address) {
    return Status::unavailable(
        fmt::format("cannot reach {}: {}", url.to_string(), address.status().message()));
  }
  core::Nanos preflight = std::min<core::Nanos>(options.timeout, std::chrono::seconds(3));
  if (Status s = net::check_reachable(*address, preflight); !s) {
    return Status::unavailable(fmt::format("cannot reach {}: {}", url.to_string(), s.message()));
  }

  const core::ClockSource& clock = *control.clock;
  Phases phases;
  phases.start = clock.now();
  phases.measure_from = phases.start + options.warmup;
  phases.measure_until = phases.measure_from + options.duration;
  phases.grace = options.grace_or_default();

  std::vector<std::unique_ptr<ClosedLoopWorker>> workers;
  uint64_t next_connection = 0;
  for (int t = 0; t < options.threads; ++t) {
    WorkerConfig cfg;
    cfg.address = *address;
    cfg.request = &request;
    cfg.connections =
        options.connections / options.threads + (t < options.connections % options.threads ? 1 : 0);
    cfg.first_connection = next_connection;
    next_connection += static_cast<uint64_t>(cfg.connections);
    cfg.timeout = options.timeout;
    cfg.phases = phases;
    cfg.clock = &clock;
    cfg.interrupt = control.interrupt;
    workers.push_back(std::make_unique<ClosedLoopWorker>(cfg));
  }

  std::vector<Status> outcomes(workers.size());
  {
    std::vector<std::jthread> threads;
    for (size_t t = 1; t < workers.size(); ++t) {
      threads.emplace_back([&, t] { outcomes[t] = workers[t]->run(); });
    }
    outcomes[0] = workers[0]->run();
  }  // joins

  core::RunResult result;
  result.concurrency = options.connections;
  result.threads = options.threads;
  result.duration_s = std::chrono::duration<double>(options.duration).count();
  for (size_t t = 0; t < workers.size(); ++t) {
    if (!outcomes[t]) return outcomes[t];
    result.stats.merge(workers[t]->stats());
    result.interrupted = result.interrupted || workers[t]->interrupted();
  }
  return result;
}

}  // namespace knee::engine
