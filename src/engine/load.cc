#include "engine/load.h"

#include <fmt/format.h>
#include <strings.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "engine/load_worker.h"
#include "engine/mix.h"
#include "net/socket.h"
#include "net/write_path.h"

namespace knee::engine {

namespace {
constexpr uint64_t kMaxRequests = 1'000'000'000'000;  // -n: a trillion, beyond any run
}  // namespace

using core::Result;
using core::Status;

bool LoadOptions::draws_shipments() const {
  const auto holds = [](const http::RequestSpec& r) {
    return r.url.target.find("{shipment}") != std::string::npos ||
           r.body.find("{shipment}") != std::string::npos;
  };
  return holds(request) || std::any_of(mix.begin(), mix.end(),
                                       [&](const MixEndpoint& e) { return holds(e.request); });
}

Status LoadOptions::validate() const {
  if (!open_loop() && connections < 1) {
    return Status::invalid_field("connections",
                                 fmt::format("{} is below 1; give a positive number", connections));
  }
  if (share.count < 1 || share.index < 0 || share.index >= share.count) {
    return Status::invalid_field("part",
                                 fmt::format("{}/{} is not a part", share.index, share.count));
  }
  if (max_connections && *max_connections < 1) {
    return Status::invalid_field(
        "max_connections", fmt::format("{} is below 1; give a positive number", *max_connections));
  }
  if (rate_rps && !(*rate_rps > 0 && *rate_rps <= kMaxRateRps)) {
    return Status::invalid_field("rate_rps",
                                 "must be a number of requests per second above 0 and at most 1e6");
  }
  const int slots = connection_slots();
  if (threads < 1 || threads > slots) {
    return Status::invalid_field(
        "threads",
        fmt::format("{} must be between 1 and the number of connections ({})", threads, slots));
  }
  if (requests && (*requests < 1 || *requests > kMaxRequests)) {
    return Status::invalid_field(
        "requests", fmt::format("{} requests; give a count from 1 to {}", *requests, kMaxRequests));
  }
  if (per_connection < 1 || per_connection > kMaxPerConnection) {
    return Status::invalid_field("per_connection",
                                 fmt::format("{} requests in flight per connection; give 1 to {}",
                                             per_connection, kMaxPerConnection));
  }
  if (h2 && !keepalive) {
    return Status::invalid_field(
        "h2",
        "HTTP/2 keeps its connections open for many streams; --no-keepalive (a new connection "
        "per request) is an HTTP/1.1 load: drop one of them");
  }
  if (per_connection > 1 && !keepalive) {
    return Status::invalid_field(
        "per_connection",
        "more than one request per connection needs connections that stay open; drop "
        "--no-keepalive");
  }
  if (duration.count() <= 0) {
    return Status::invalid_field("duration", "must be above 0, e.g. 2s or 500ms");
  }
  if (warmup.count() < 0) return Status::invalid_field("warmup", "must be 0 or more, e.g. 1s");
  if (timeout.count() <= 0) return Status::invalid_field("timeout", "must be above 0, e.g. 10s");
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_max != RLIM_INFINITY &&
      static_cast<rlim_t>(slots) + 32 > files.rlim_max) {
    return Status::invalid_field(
        open_loop() ? "max_connections" : "connections",
        fmt::format("{} connections need as many file descriptors, but this process may open at "
                    "most {} (ulimit -Hn); lower it or raise the limit",
                    slots, files.rlim_max));
  }
  if (spin && (spin->count() < 0 || *spin > std::chrono::milliseconds(10))) {
    return Status::invalid_field("spin", "must be from 0 to 10ms, e.g. 200us");
  }
  if (spin && spin->count() > 0 && !rate_rps) {
    return Status::invalid_field(
        "spin", "only in open loop (with -r RATE): it busy-polls before intended send times");
  }
  if (request.url.scheme != "http" && request.url.scheme != "https") {
    return Status::invalid_field(
        "url", fmt::format("{}: knee speaks http:// and https://", request.url.to_string()));
  }
  if (io == net::IoPath::kUring && request.url.scheme == "https") {
    return Status::invalid_field(
        "io", "uring is for plain http:// (TLS writes through OpenSSL); leave --io at epoll");
  }
  if (!stages.empty()) {
    const RateProfile profile(stages);
    if (!rate_rps || *rate_rps != profile.peak_rps()) {
      return Status::invalid_field("stages", "the open loop's rate must be the stages' peak");
    }
    if (warmup + duration != profile.total()) {
      return Status::invalid_field(
          "stages", fmt::format("warm-up and measured phase must last the stages' {:.3f} s",
                                std::chrono::duration<double>(profile.total()).count()));
    }
    if (requests) return Status::invalid_field("stages", "not with -n: the stages set the length");
  }
  if (Status s = check_placeholders(request.url.target, "url"); !s) return s;
  if (Status s = shipments.validate(); !s) return s;
  if (mix.size() > kMaxMixEntries) {
    return Status::invalid_field(
        "mix", fmt::format("{} endpoints; give at most {}", mix.size(), kMaxMixEntries));
  }
  for (const MixEndpoint& e : mix) {
    if (!(e.weight > 0) || !std::isfinite(e.weight)) {
      return Status::invalid_field(
          "mix", fmt::format("{}: weight {} is not a number above 0", e.name, e.weight));
    }
    if (Status s = check_placeholders(e.request.url.target, "mix"); !s) {
      return s.with_context(e.name);
    }
    if (auto compiled = http::RequestTemplate::compile(e.request); !compiled) {
      return Status::invalid_field("mix",
                                   fmt::format("{}: {}", e.name, compiled.status().message()));
    }
  }
  if (auto compiled = http::RequestTemplate::compile(request); !compiled) return compiled.status();
  return Status::success();
}

int LoadOptions::default_pool_size(double rate_rps) {
  return static_cast<int>(std::clamp(std::ceil(rate_rps * 0.25), 16.0, 4096.0));
}

core::Nanos LoadOptions::measured_phase() const {
  if (!requests || !rate_rps) return duration;
  return std::chrono::duration_cast<core::Nanos>(
      std::chrono::duration<double>(static_cast<double>(*requests) / *rate_rps));
}

int LoadOptions::connection_slots() const {
  if (!open_loop()) return connections;
  return max_connections.value_or(default_pool_size(*rate_rps / share.count));
}

namespace {

// Part i's share of n split over k, the remainder spread over the first parts, and where it
// starts.
int64_t share_of(int64_t n, int i, int k) { return n / k + (i < n % k ? 1 : 0); }
int64_t start_of(int64_t n, int i, int k) { return i * (n / k) + std::min<int64_t>(i, n % k); }

}  // namespace

core::Result<LoadOptions> part_of(const LoadOptions& whole, int index, int count) {
  if (count < 1 || index < 0 || index >= count) {
    return Status::invalid_field(
        "part",
        fmt::format("{}/{} is not a part: give INDEX/COUNT with 0 <= INDEX < COUNT", index, count));
  }
  LoadOptions part = whole;
  part.share = {index, count, 0};
  if (count == 1) return part;
  auto too_few = [&](std::string_view what, int64_t n) {
    return Status::invalid_field(
        "part", fmt::format("{} {} cannot be split over {} parts: each part needs at least one", n,
                            what, count));
  };
  if (!whole.open_loop()) {
    if (whole.connections < count) return too_few("connections", whole.connections);
    part.connections = static_cast<int>(share_of(whole.connections, index, count));
    part.share.first_connection = static_cast<uint64_t>(start_of(whole.connections, index, count));
    part.threads = std::min(part.threads, part.connections);
    if (whole.requests) {
      const auto n = static_cast<int64_t>(*whole.requests);
      if (n < count) return too_few("requests", n);
      part.requests = static_cast<uint64_t>(share_of(n, index, count));
    }
    return part;
  }
  if (whole.max_connections) {
    if (*whole.max_connections < count) return too_few("connections", *whole.max_connections);
    part.max_connections = static_cast<int>(share_of(*whole.max_connections, index, count));
    part.share.first_connection =
        static_cast<uint64_t>(start_of(*whole.max_connections, index, count));
  } else {
    part.share.first_connection =
        static_cast<uint64_t>(index) *
        static_cast<uint64_t>(LoadOptions::default_pool_size(*whole.rate_rps / count));
  }
  // Every part keeps the whole load's threads: they take turns in one sequence by that count.
  if (part.threads > part.connection_slots()) {
    return Status::invalid_field(
        "part",
        fmt::format("part {} of {} has a pool of {} connections, fewer than its {} threads: "
                    "give fewer threads or a larger pool",
                    index, count, part.connection_slots(), part.threads));
  }
  return part;
}

namespace {

// The request as sent: with --no-keepalive, "Connection: close" unless a Connection field is
// there already (RFC 9112 section 9.6).
http::RequestSpec request_as_sent(const http::RequestSpec& request, bool keepalive) {
  http::RequestSpec spec = request;
  if (keepalive) return spec;
  for (const auto& [name, value] : spec.headers) {
    if (name.size() == 10 && strncasecmp(name.c_str(), "connection", 10) == 0) return spec;
  }
  spec.headers.emplace_back("Connection", "close");
  return spec;
}

// Every endpoint's request compiled once (the one request without a mix), for HTTP/1.1 or, with
// --h2, HTTP/2.
Result<WorkerRequests> compile_requests(const LoadOptions& options) {
  WorkerRequests out;
  std::vector<const http::RequestSpec*> specs;
  if (options.mix.empty()) {
    specs.push_back(&options.request);
  } else {
    for (const MixEndpoint& e : options.mix) {
      specs.push_back(&e.request);
      out.weights.push_back(e.weight);
    }
  }
  for (const http::RequestSpec* spec : specs) {
    if (options.h2) {
      auto h2 = http::H2Request::compile(*spec);
      if (!h2) return h2.status();
      out.h2.push_back(std::move(h2).value());
      out.uses_shipment |= out.h2.back().uses_shipment;
    } else {
      auto compiled = http::RequestTemplate::compile(request_as_sent(*spec, options.keepalive));
      if (!compiled) return compiled.status();
      out.h1.push_back(std::move(compiled).value());
      out.uses_shipment |= out.h1.back().uses_shipment();
    }
  }
  return out;
}

}  // namespace

Status check_placeholders(std::string_view target, std::string_view field) {
  // Only {conn}, {seq} and {shipment} expand; anything else in braces is almost surely a typo.
  for (size_t at = target.find('{'); at != std::string::npos; at = target.find('{', at + 1)) {
    const std::string_view rest = target.substr(at);
    if (!rest.starts_with("{conn}") && !rest.starts_with("{seq}") &&
        !rest.starts_with("{shipment}")) {
      return Status::invalid_field(
          std::string(field),
          fmt::format("unknown placeholder at '{}'; only {{conn}}, {{seq}} and {{shipment}} "
                      "expand",
                      rest.substr(0, 12)));
    }
  }
  return Status::success();
}

namespace {

// --h2c's pre-flight: the connection preface and an empty SETTINGS frame (RFC 9113 §3.4), and
// the server's first frame must be its SETTINGS. An HTTP/1.1 server answers with a status line
// (often 400 or 505) or closes: one clear error instead of a run of failed connections.
Status check_h2c(const net::SocketAddress& address, core::Nanos timeout) {
  auto fd = net::connect_tcp(address, net::Blocking::kYes);
  if (!fd) return fd.status();
  net::set_io_timeouts(fd->get(), std::min<core::Nanos>(timeout, std::chrono::seconds(3)));
  net::TcpTransport t(std::move(fd).value());
  static constexpr std::string_view kPrefaceAndSettings{
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0", 24 + 9};
  if (Status s = net::send_all(t, kPrefaceAndSettings, "HTTP/2 preface"); !s) return s;
  std::array<char, 9> frame{};
  if (Status s = net::recv_exactly(t, frame, "the server's first HTTP/2 frame"); !s) {
    return Status::unavailable(
        "the server closed the connection or sent nothing after the HTTP/2 preface (it does not "
        "speak HTTP/2 with prior knowledge: drop --h2c)");
  }
  if (std::string_view(frame.data(), 5) == "HTTP/") {
    return Status::unavailable(
        "the server answered the HTTP/2 preface with HTTP/1.x: it does not speak HTTP/2 with "
        "prior knowledge (drop --h2c, or use --h2 with an https:// URL if it has TLS)");
  }
  if (frame[3] != 0x04) {
    return Status::unavailable(fmt::format(
        "the server's first frame after the HTTP/2 preface is of type {} instead of SETTINGS",
        static_cast<int>(static_cast<unsigned char>(frame[3]))));
  }
  return Status::success();
}

}  // namespace

Result<core::RunResult> run_load(const LoadOptions& options, const RunControl& control) {
  if (Status s = options.validate(); !s) return s;
  // Asked once before any thread starts: a kernel without io_uring is one clear error, not a
  // failure of every worker.
  if (Status s = net::WritePath::check(options.io); !s) return s;
  auto compiled = compile_requests(options);
  if (!compiled) return compiled.status();
  const WorkerRequests requests = std::move(compiled).value();

  const http::Url& url = options.request.url;
  // The TLS files first: an unreadable --cacert or a key that is not the certificate's is bad
  // input, named before any network is touched.
  std::shared_ptr<const net::TlsContext> tls;
  if (url.scheme == "https") {
    net::TlsOptions tls_options = options.tls;
    // ALPN: the server must choose h2 for --h2 (RFC 9113 §3.2); HTTP/1.1 says so too, for the
    // servers that answer differently by protocol.
    tls_options.alpn = {options.h2 ? "h2" : "http/1.1"};
    auto context = net::TlsContext::create(tls_options);
    if (!context) return context.status();
    tls = std::move(context).value();
  }
  // Each of the host's addresses in turn (localhost: 127.0.0.1, then ::1), the first that
  // accepts a connection is the run's (regression: a server on ::1 only was unreachable as
  // localhost).
  const core::Nanos preflight = std::min<core::Nanos>(options.timeout, std::chrono::seconds(3));
  auto address = net::first_reachable(url.host, url.port, preflight);
  if (!address) return address.status().with_context("cannot reach " + url.to_string());
  if (options.h2 && !tls) {
    if (Status s = check_h2c(*address, options.timeout); !s) {
      return s.with_context("cannot reach " + url.to_string() + " over HTTP/2");
    }
  }
  if (tls) {
    // One handshake before the run: a certificate that does not verify is one clear error,
    // not a run of failed connects.
    auto fd = net::connect_tcp(*address, net::Blocking::kYes);
    if (!fd) return fd.status().with_context("cannot reach " + url.to_string());
    net::set_io_timeouts(fd->get(), options.timeout);  // a slow handshake is not unreachable
    auto info = net::check_tls(std::move(fd).value(), *tls, url.host);
    if (!info) return info.status().with_context("cannot reach " + url.to_string());
    if (options.h2 && info->alpn != "h2") {
      return Status::unavailable(fmt::format(
          "cannot reach {} over HTTP/2: in ALPN the server chose {}, not h2; it speaks HTTP/2 "
          "over TLS only if it offers h2 (drop --h2 to measure it over HTTP/1.1)",
          url.to_string(), info->alpn.empty() ? "no protocol" : info->alpn));
    }
  }

  const core::ClockSource& clock = *control.clock;
  // Stamped once every worker is ready (StartGate); the workers are built without them.
  Phases phases;
  // -n in closed loop: the phase ends when the last measured request is sent.
  std::optional<RequestBudget> budget;
  if (options.requests && !options.rate_rps) {
    budget.emplace();
    budget->left.store(static_cast<int64_t>(*options.requests));
  }
  // The end of the measured phase once a -n budget has set it; measure_until otherwise.
  auto measured_end = [&]() -> core::TimePoint {
    if (!budget) return phases.measure_until;
    const int64_t end = budget->end_ns.load(std::memory_order_acquire);
    return end != 0 ? core::TimePoint(core::Nanos(end)) : phases.measure_until;
  };

  net::raise_open_file_limit();  // as many sockets as the hard limit allows
  std::vector<std::unique_ptr<LoadWorker>> workers;
  // Live figures, one slot per worker, only when someone displays them.
  std::vector<std::unique_ptr<WorkerLive>> lives;
  // Per-interval latency, folded on this thread as the workers finish each interval.
  const bool intervals = options.interval.count() > 0;
  std::vector<std::unique_ptr<IntervalQueue>> queues;
  std::optional<IntervalFolder> folder;
  if (intervals) {
    folder.emplace(static_cast<size_t>(options.threads),
                   std::chrono::duration<double>(options.interval).count(),
                   std::chrono::duration<double>(options.measured_phase()).count(),
                   /*measure_start_epoch_s=*/0.0, control.on_interval);
  }
  uint64_t next_connection = options.share.first_connection;
  // Threads of every part together take turns in one arrival sequence (LoadOptions::share).
  const int first_thread = options.share.index * options.threads;
  const int all_threads = options.share.count * options.threads;
  const int slots = options.connection_slots();
  for (int t = 0; t < options.threads; ++t) {
    WorkerConfig cfg;
    cfg.address = *address;
    cfg.tls = tls.get();
    cfg.server_name = url.host;
    cfg.requests = &requests;
    cfg.shipments = options.shipments;
    // Each thread its own stream of ids, repeatable from the run's seed.
    // (first_connection + t is unique across parts: a part has at least as many connections as
    // threads.)
    cfg.shipment_seed = options.seed * uint64_t{0x9e3779b97f4a7c15} +
                        options.share.first_connection + static_cast<uint64_t>(t);
    cfg.per_connection = options.per_connection;
    cfg.connections = slots / options.threads + (t < slots % options.threads ? 1 : 0);
    cfg.first_connection = next_connection;
    next_connection += static_cast<uint64_t>(cfg.connections);
    cfg.timeout = options.timeout;
    cfg.clock = &clock;
    cfg.interrupt = control.interrupt;
    cfg.interval = options.interval;
    if (intervals) {
      queues.push_back(std::make_unique<IntervalQueue>());
      cfg.intervals = queues.back().get();
    }
    cfg.spin = options.spin;
    if (budget) cfg.budget = &*budget;
    cfg.keepalive = options.keepalive;
    cfg.io = options.io;
    if (control.on_progress) {
      lives.push_back(std::make_unique<WorkerLive>());
      cfg.live = lives.back().get();
    }
    if (!options.stages.empty()) {
      cfg.schedule.emplace(options.arrival, RateProfile(options.stages), options.seed,
                           first_thread + t, all_threads);
    } else if (options.rate_rps) {
      cfg.schedule.emplace(options.arrival, *options.rate_rps, options.seed, first_thread + t,
                           all_threads);
    }
    workers.push_back(std::make_unique<LoadWorker>(std::move(cfg)));
  }

  std::vector<Status> outcomes(workers.size());
  double start_epoch_s = 0;
  {
    std::atomic<size_t> running{workers.size()};
    StartGate gate(static_cast<std::ptrdiff_t>(workers.size()));
    std::vector<std::jthread> threads;
    // Declared after the threads, so it runs before they join: a way out that did not open the
    // gate (a thread that could not start, a hook that threw) calls the run off, where the
    // started workers would wait at the gate for ever (std::jthread joins).
    struct CallOff {
      StartGate& gate;
      ~CallOff() { gate.call_off(); }
    } call_off{gate};
    for (size_t t = 0; t < workers.size(); ++t) {
      try {
        threads.emplace_back([&, t] {
          outcomes[t] = workers[t]->run(gate);
          running.fetch_sub(1);
        });
      } catch (const std::system_error& e) {
        return Status::io_error(
            fmt::format("start load thread {} of {}: {}", t + 1, workers.size(), e.what()));
      }
    }
    gate.wait_ready();
    // Without a warm-up the measured phase begins with the first sends: the hooks (the host
    // sampler's first /proc reads, 1-2 ms) run before it, not beside the first sends on a
    // client pinned to one CPU.
    const bool measure_at_once = options.warmup.count() == 0 && control.on_measure_start;
    if (measure_at_once) control.on_measure_start();
    phases.start = clock.now();
    start_epoch_s = core::wall_clock_s();
    phases.measure_from = phases.start + options.warmup;
    // -d, or in open loop with -n the phase that schedules exactly that many uniform arrivals.
    phases.measure_until = phases.measure_from + options.measured_phase();
    phases.grace = options.grace_or_default();
    if (intervals) {
      folder->set_measure_start(start_epoch_s +
                                std::chrono::duration<double>(options.warmup).count());
    }
    for (const auto& worker : workers) worker->set_phases(phases);
    gate.open();
    // The calling thread only marks the measured phase for the hooks and reports progress.
    core::TimePoint next_progress = phases.start + control.progress_every;
    auto report_progress = [&] {
      if (!control.on_progress) return;
      const core::TimePoint now = clock.now();
      if (now < next_progress) return;
      next_progress = now + control.progress_every;
      LiveSnapshot snap;
      snap.elapsed = now - phases.start;
      snap.phase = now < phases.measure_from    ? LivePhase::kWarmup
                   : now < phases.measure_until ? LivePhase::kMeasure
                                                : LivePhase::kGrace;
      core::Histogram latency = core::Histogram::for_latency();
      for (const auto& live : lives) live->read_into(snap, latency);
      snap.latency_count = latency.count();
      snap.p50_ns = latency.value_at_percentile(50);
      snap.p99_ns = latency.value_at_percentile(99);
      control.on_progress(snap);
    };
    // With -n the measured phase may end before measure_until: the progress display, the
    // hooks and the last interval follow the budget's end once it is known.
    auto follow_budget = [&] { phases.measure_until = measured_end(); };
    auto fold_intervals = [&](bool final) {
      if (!intervals) return;
      for (size_t t = 0; t < queues.size(); ++t) folder->add(t, queues[t]->take());
      // Read after take(): a worker flushes its last interval after the budget's end is set.
      follow_budget();
      folder->end_at(
          std::chrono::duration<double>(phases.measure_until - phases.measure_from).count());
      folder->fold_ready(final);
    };
    auto wait_until = [&](core::TimePoint when) {
      while (running.load() > 0 && clock.now() < std::min(when, measured_end()) &&
             !(control.interrupt != nullptr && control.interrupt->load())) {
        report_progress();
        fold_intervals(false);
        auto left = when - clock.now();
        std::this_thread::sleep_for(std::min<core::Nanos>(left, std::chrono::milliseconds(20)));
      }
    };
    wait_until(phases.measure_from);
    if (control.on_measure_start && (measure_at_once || running.load() > 0)) {
      if (!measure_at_once) control.on_measure_start();
      wait_until(phases.measure_until);
      if (control.on_measure_end) control.on_measure_end();
    } else if (control.on_progress || intervals) {
      wait_until(phases.measure_until);
    }
    follow_budget();
    if (control.on_progress || intervals) {  // the grace period: requests in flight finish
      while (running.load() > 0) {
        report_progress();
        fold_intervals(false);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }  // joins
  phases.measure_until = measured_end();
  if (intervals) {
    for (size_t t = 0; t < queues.size(); ++t) folder->add(t, queues[t]->take());
    folder->end_at(
        std::chrono::duration<double>(phases.measure_until - phases.measure_from).count());
    folder->fold_ready(/*final=*/true);
  }

  core::RunResult result;
  result.connections = slots;
  result.per_connection = options.per_connection;
  result.h2 = options.h2;
  // This part's share of the rate (the whole rate without --part).
  const double part_share = 1.0 / options.share.count;
  result.target_rate_rps = options.rate_rps.value_or(0.0) * part_share;
  if (!options.stages.empty()) {
    // The rate the stages intended over the measured phase, and in each of its intervals.
    const RateProfile profile(options.stages);
    const double from = static_cast<double>(options.warmup.count());
    const double length = static_cast<double>(options.duration.count());
    result.target_rate_rps =
        (profile.arrivals_until(from + length) - profile.arrivals_until(from)) / length * 1e9 *
        part_share;
  }
  result.measure_start_epoch_s =
      start_epoch_s + std::chrono::duration<double>(options.warmup).count();
  result.threads = options.threads;
  result.requests_asked = options.requests.value_or(0);
  if (options.open_loop() && options.requests) {  // the whole load's -n: its threads' turns of it
    result.requests_asked = 0;
    for (int t = 0; t < options.threads; ++t) {
      result.requests_asked += static_cast<uint64_t>(
          share_of(static_cast<int64_t>(*options.requests), first_thread + t, all_threads));
    }
  }
  // The measured phase as it was: -d, or shorter once -n was reached.
  result.duration_s =
      std::chrono::duration<double>(phases.measure_until - phases.measure_from).count();
  for (size_t t = 0; t < workers.size(); ++t) {
    if (!outcomes[t]) return outcomes[t];
    result.stats.merge(workers[t]->result());
    result.interrupted = result.interrupted || workers[t]->interrupted();
  }
  double total_weight = 0;
  for (const MixEndpoint& e : options.mix) total_weight += e.weight;
  for (size_t i = 0; i < options.mix.size() && i < result.stats.endpoints.size(); ++i) {
    result.stats.endpoints[i].name = options.mix[i].name;
    result.stats.endpoints[i].share = options.mix[i].weight / total_weight;
  }
  // Interval i covers [i, i+1) intervals from the start, the last one up to the end of the
  // measured phase.
  if (intervals) result.intervals = folder->take_summaries();
  if (!options.stages.empty()) {
    const RateProfile profile(options.stages);
    const double from = static_cast<double>(options.warmup.count());
    const double until = from + static_cast<double>(options.duration.count());
    for (core::LatencyInterval& i : result.intervals) {
      const double a = from + i.start_s * 1e9;
      const double b = std::min(until, a + i.length_s * 1e9);
      if (b > a)
        i.target_rps =
            (profile.arrivals_until(b) - profile.arrivals_until(a)) / (b - a) * 1e9 * part_share;
    }
  }
  if (result.interrupted) {  // the measured phase ended when the user stopped it
    core::TimePoint end = std::min(clock.now(), phases.measure_until);
    result.duration_s =
        std::max(0.0, std::chrono::duration<double>(end - phases.measure_from).count());
  }
  return result;
}

}  // namespace knee::engine
