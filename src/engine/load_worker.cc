#include "engine/load_worker.h"

#include <fmt/format.h>
#include <sys/prctl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>
#include <thread>

namespace knee::engine {

using core::ErrorKind;
using core::Status;
using core::TimePoint;

namespace {

constexpr size_t kReadBufferBytes = 64 * 1024;
// A connection's written bytes are dropped from the front of its `out` past this (compact_out).
constexpr size_t kCompactOutBytes = 64 * 1024;
constexpr auto kConnectRetryDelay = std::chrono::milliseconds(10);
// A connect still pending after this long at the end of a run is reported (loopback and LAN
// connects take microseconds to a millisecond; a lost SYN is retransmitted after 1 s).
constexpr auto kStalledConnect = std::chrono::milliseconds(100);
// Longest gap between two iterations of the loop counted as busy-polling (--spin).
constexpr int64_t kMaxSpinIterationNs = 50'000;
// --io uring: requests of a closed connection that its server has not read within this long are
// given up (the ring keeps the socket open until then, as close(2) keeps a socket's buffer).
constexpr core::Nanos kOrphanTimeout = std::chrono::seconds(1);
// The shortest CPU window that counts towards RunStats::max_thread_cpu_demand_1s: the first and
// last windows of the phase may be shorter than its 1 s intervals.
constexpr int64_t kMinCpuWindowNs = 500'000'000;

// How often busy requests are checked against the timeout: a tenth of it, 1..100 ms.
core::Nanos timeout_tick(core::Nanos timeout) {
  return std::clamp<core::Nanos>(timeout / 10, std::chrono::milliseconds(1),
                                 std::chrono::milliseconds(100));
}

std::unique_ptr<Feeder> make_feeder(const WorkerConfig& config, const Phases& phases) {
  if (config.schedule) return std::make_unique<OpenLoopFeeder>(phases, *config.schedule);
  return std::make_unique<ClosedLoopFeeder>(phases);
}

}  // namespace

LoadWorker::LoadWorker(WorkerConfig config)
    : config_(std::move(config)),
      conns_(static_cast<size_t>(config_.connections)),
      lanes_(static_cast<size_t>(config_.connections) *
             static_cast<size_t>(std::max(1, config_.per_connection))),
      read_buffer_(kReadBufferBytes),
      in_system_(phases_, config_.budget != nullptr ? &config_.budget->end_ns : nullptr) {
  config_.per_connection = std::max(1, config_.per_connection);
  feeder_ = make_feeder(config_, phases_);
  if (mix()) {
    picker_.emplace(config_.requests->weights);
    stats_.endpoints.resize(config_.requests->weights.size());
  }
  if (config_.requests->uses_shipment)
    shipment_picker_.emplace(config_.shipments, config_.shipment_seed);
}

LoadWorker::~LoadWorker() = default;

Status LoadWorker::run(StartGate& gate) {
  auto created = net::EventLoop::create();
  if (!created) {
    gate.arrive();
    return created.status();
  }
  net::EventLoop loop = std::move(created).value();
  loop_ = &loop;
  {
    auto path = net::WritePath::open(config_.tls ? net::IoPath::kEpoll : config_.io, loop);
    if (!path) {
      gate.arrive();
      loop_ = nullptr;
      return path.status();
    }
    write_path_ = std::move(path).value();
  }
  // Wake-ups on time matter more than the kernel's default 50 us of timer coalescing.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (config_.interval.count() > 0) interval_hist_.emplace(core::Histogram::for_latency());
  gate.arrive();
  if (!gate.wait_to_start()) return Status::io_error("the run was called off before it started");
  const core::ClockSource& clock = *config_.clock;
  const Phases& phases = phases_;
  const core::Nanos tick = timeout_tick(config_.timeout);
  const core::ThreadCpuReading cpu_start = core::read_thread_cpu(0);
  const TimePoint wall_start = clock.now();
  TimePoint now = wall_start;
  in_system_.change(now, 0);
  feeder_->start(*this, now);
  flush_notices();

  std::array<epoll_event, 256> events{};
  TimePoint next_tick = now + tick;
  TimePoint next_publish = now;  // live figures (config_.live), between events
  const bool intervals = config_.interval.count() > 0;
  if (intervals) interval_end_ = phases.measure_from + config_.interval;
  TimePoint grace_until = phases.measure_until + phases.grace;
  Status status;
  std::optional<TimePoint> spin_since;  // set while busy-polling before a send (--spin)
  while (true) {
    now = clock.now();
    if (spin_since) {
      // One empty poll takes a few us; a longer gap means the thread lost its CPU meanwhile,
      // which is run-queue wait (counted in the demand), not spinning.
      const int64_t spun_ns = core::elapsed_ns(*spin_since, now);
      if (spun_ns < kMaxSpinIterationNs) stats_.client_spin_ns += spun_ns;
      spin_since.reset();
    }
    if (intervals && cpu_window_.state == CpuWindow::kNotYet && now >= phases.measure_from &&
        !stopping_) {
      sample_cpu_window(now, /*last=*/false);
    }
    if (!stopping_ && config_.interrupt != nullptr &&
        config_.interrupt->load(std::memory_order_relaxed)) {
      interrupted_ = true;
      grace_until = now;
      begin_stopping(now);
    }
    if (config_.budget != nullptr && !interrupted_) {
      const TimePoint before = phases.measure_until;
      adopt_budget_end();
      if (phases.measure_until != before) grace_until = phases.measure_until + phases.grace;
    }
    feeder_->tick(*this, now);
    flush_notices();
    if (!stopping_ && now >= phases.measure_until) begin_stopping(now);
    if (stopping_) {
      if (in_flight_ == 0 && feeder_->drained()) break;
      // The grace period is for measured requests; warm-up ones still in flight (a server that
      // never answers) are aborted at once, not waited for.
      // Requests waiting for a connection (open loop) wait in the grace period too, for one to
      // carry them; when nothing is in flight, the last connect since the phase ended failed
      // and no other connection is open or being opened (the server went away), none will:
      // they are never sent. Regression (a trial): a killed server's run waited out its 10 s
      // grace.
      const bool unreachable =
          in_flight_ == 0 && opening_failed_while_stopping_ && !feeder_->drained() &&
          std::all_of(conns_.begin(), conns_.end(),
                      [](const Connection& c) { return c.state == ConnState::kFree; });
      if (now >= grace_until || (measured_in_flight_ == 0 && feeder_->drained()) || unreachable) {
        abort_all(now);
        break;
      }
    }
    if (config_.live != nullptr && now >= next_publish) {
      if (config_.live->publish(stats_)) next_publish = now + kPublishEvery;
    }
    if (now >= next_tick) {
      check_timeouts(now);
      flush_notices();
      write_path_.expire(now, kOrphanTimeout);
      next_tick = now + tick;
    }
    // Interval boundaries inside the measured phase; the last interval stays open to the end.
    // The client's CPU windows end at the same boundaries.
    if (intervals && interval_end_ < phases.measure_until && now >= interval_end_) {
      while (interval_end_ < phases.measure_until && now >= interval_end_) {
        flush_interval();
        interval_end_ += config_.interval;
      }
      sample_cpu_window(now, /*last=*/false);
    }
    retries_.pop_due(now, [&](Retry r) {
      if (conns_[r.conn].generation != r.generation) return;
      for (uint32_t l = first_lane(r.conn); l < first_lane(r.conn + 1); ++l) {
        if (lanes_[l].state == LaneState::kBusy && lanes_[l].resend &&
            conns_[r.conn].state == ConnState::kFree) {
          connect(r.conn, now);  // requests a GOAWAY refused still wait for a connection
          break;
        }
      }
      for (uint32_t l = first_lane(r.conn); l < first_lane(r.conn + 1); ++l) {
        if (!lanes_[l].retry_wait) continue;
        lanes_[l].retry_wait = false;
        notify(l);
      }
    });
    flush_notices();

    // --io uring: what this pass queued goes to the kernel before the wait; what it could not
    // take yet (a partial send's rest, a connection that has room again) makes the wait a poll.
    // Before the deadline is computed: a write that fails here can start a connect whose retry
    // timer the deadline must see.
    if (status = write_path_.pass([this](uint64_t writable) { on_writable(writable); }); !status) {
      break;
    }
    const bool sends_pending = write_path_.pending();
    TimePoint deadline = next_tick;
    if (intervals && interval_end_ < phases.measure_until) {
      deadline = std::min(deadline, interval_end_);
    }
    if (auto t = retries_.next_deadline()) deadline = std::min(deadline, *t);
    deadline = std::min(deadline, stopping_ ? grace_until : phases.measure_until);
    bool spinning = false;
    bool sleeping_to_send = false;  // the deadline is the wake-up before the next send
    if (auto next_send = feeder_->next_send()) {
      const core::Nanos spin = config_.spin ? *config_.spin : spin_window_.window();
      const TimePoint wake = *next_send - spin;
      if (spin.count() > 0 && now >= wake) {
        if (!config_.spin && spin_window_.probe_due() && *next_send > now &&
            *next_send <= deadline) {
          deadline = *next_send;  // --spin auto: sleep through this window to measure the host
          sleeping_to_send = true;
        } else {
          spinning = true;  // poll without sleeping until the send is due
          deadline = now;
          if (spun_for_ != *next_send) {
            spun_for_ = *next_send;
            spin_window_.count_spun_send();
          }
        }
      } else if (wake <= deadline) {
        deadline = wake;
        sleeping_to_send = true;
      }
    }
    auto n = loop.wait(events,
                       spinning || sends_pending ? core::Nanos(0) : clock.blocking_time(deadline));
    if (!n) {
      status = n.status();
      break;
    }
    if (spinning && *n == 0) {
      spin_since = now;  // an empty poll: the time until the next iteration was spent waiting
    } else if (*n == 0 && !sends_pending) {
      const TimePoint woke = clock.now();
      if (woke >= deadline) stats_.loop_lag_ns.record(core::elapsed_ns(deadline, woke));
      // Only sleeps towards a send: other deadlines (timeout ticks, intervals) sleep longer, and
      // on some hosts a longer sleep wakes later.
      if (sleeping_to_send && deadline > now) {
        spin_window_.record_lateness(core::elapsed_ns(deadline, woke));
      }
    }
    for (int k = 0; k < *n; ++k) {
      const epoll_event& e = events[static_cast<size_t>(k)];
      on_event(e.data.u64, e.events);
    }
    flush_notices();
  }
  for (uint32_t i = 0; i < conns_.size(); ++i) close_connection(i);
  in_system_.change(clock.now(), 0);
  stats_.in_system_ns = in_system_.integral_ns();
  if (intervals) flush_interval();
  if (config_.live != nullptr) {
    while (!config_.live->publish(stats_)) std::this_thread::yield();
  }
  const core::ThreadCpuReading cpu_end = core::read_thread_cpu(stats_.client_spin_ns);
  stats_.client_cpu_ns = (cpu_end.cpu - cpu_start.cpu).count();
  stats_.client_wall_ns = core::elapsed_ns(wall_start, clock.now());
  const core::ThreadCpuShares shares =
      core::thread_cpu_shares(cpu_start, cpu_end, stats_.client_wall_ns);
  stats_.max_thread_cpu_share = shares.share;
  stats_.max_thread_cpu_demand = shares.demand;
  write_path_.submit_queued();  // what was queued goes; the path's end cancels what is left
  write_path_ = net::WritePath();
  loop_ = nullptr;
  return status;
}

void LoadWorker::on_writable(uint64_t event_tag) {
  const net::EventTag t = net::EventTag::of(event_tag);
  if (t.slot >= conns_.size()) return;
  const Connection& c = conns_[t.slot];
  if (c.generation != t.generation) return;
  if (c.state == ConnState::kOpen || c.state == ConnState::kDraining) flush(t.slot);
  flush_notices();  // lanes a failed write freed
}

void LoadWorker::notify(uint32_t l) {
  Lane& lane = lanes_[l];
  if (lane.queued) return;
  lane.queued = true;
  notices_.push_back(l);
}

void LoadWorker::flush_notices() {
  // The feeder's answers may notice more lanes (a send that fails, a lane opened on a connection
  // already open): they are appended and handled in this same pass. The lane's state when its
  // turn comes decides what the feeder hears.
  while (!notices_.empty() || !unwritten_.empty()) {
    for (size_t k = 0; k < notices_.size(); ++k) {
      const uint32_t l = notices_[k];
      Lane& lane = lanes_[l];
      lane.queued = false;
      if (lane.state == LaneState::kIdle) {
        feeder_->on_idle(*this, l, config_.clock->now());
      } else if (lane.state == LaneState::kFree && !lane.retry_wait) {
        feeder_->on_free(*this, l, config_.clock->now());
      }
    }
    notices_.clear();
    // The requests those sends queued go out together: one write per connection, not one per
    // request (a failed write notices its lanes for the next pass).
    // Swapped with a vector kept for it, so neither loses its capacity: no allocation per pass.
    writing_.clear();
    writing_.swap(unwritten_);
    for (const uint32_t ci : writing_) {
      Connection& c = conns_[ci];
      c.unwritten = false;
      if (c.state != ConnState::kOpen && c.state != ConnState::kDraining) continue;
      if (h2()) {
        after_h2_io(ci);
      } else {
        flush(ci);
      }
    }
  }
}

void LoadWorker::write_later(uint32_t ci) {
  Connection& c = conns_[ci];
  if (c.unwritten) return;
  c.unwritten = true;
  unwritten_.push_back(ci);
}

void LoadWorker::open(uint32_t l, TimePoint now) {
  Lane& lane = lanes_[l];
  if (lane.state != LaneState::kFree) return;
  const uint32_t ci = conn_of(l);
  Connection& c = conns_[ci];
  lane.state = LaneState::kWaiting;
  switch (c.state) {
    case ConnState::kFree:
      connect(ci, now);
      break;
    case ConnState::kOpen:
      if (!h2() || c.h2->ready()) {
        lane.state = LaneState::kIdle;
        notify(l);
      }
      break;
    case ConnState::kConnecting:
    case ConnState::kDraining:  // freed when it closes, then opened anew
      break;
  }
}

void LoadWorker::connect(uint32_t ci, TimePoint now) {
  Connection& c = conns_[ci];
  auto fd = net::connect_tcp(config_.address);
  if (!fd) {
    // An immediate failure (e.g. no ephemeral ports left): count it and try again shortly.
    if (phases_.measured(now)) {
      const int err = fd.status().os_error();
      stats_.count_error(ErrorKind::kConnect, err != 0 ? core::errno_name(err) : "socket");
      ++stats_.connect_failures_after_ok;
    }
    release(ci, /*retry=*/true);
    return;
  }
  if (config_.tls != nullptr) {
    auto tls = net::TlsTransport::create(std::move(fd).value(), *config_.tls, config_.server_name,
                                         &tls_sessions_);
    if (!tls) {
      if (phases_.measured(now)) stats_.count_error(ErrorKind::kTls, tls.status().message());
      release(ci, /*retry=*/true);
      return;
    }
    c.transport = std::move(tls).value();
  } else {
    c.transport = write_path_.wrap(std::move(fd).value(), tag(ci));
  }
  c.state = ConnState::kConnecting;
  c.connect_at = now;
  c.tcp_connected_at = TimePoint{};
  c.write_armed = true;
  if (!loop_->add(c.transport->fd(), interest(EPOLLOUT), tag(ci))) release(ci, /*retry=*/true);
}

void LoadWorker::on_event(uint64_t event_tag, uint32_t events) {
  if (event_tag == net::kSendRingTag) return;  // completions: write_path_.pass() takes them
  const net::EventTag t = net::EventTag::of(event_tag);
  if (t.slot >= conns_.size()) return;
  Connection& c = conns_[t.slot];
  if (c.generation != t.generation) return;  // for a connection closed since
  switch (c.state) {
    case ConnState::kConnecting:
      on_connected(t.slot);
      break;
    case ConnState::kOpen:
    case ConnState::kDraining:
      if (c.write_armed && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        flush(t.slot);
        if (c.generation != t.generation) return;
      }
      // A response can arrive before the request is fully written (early error responses), and
      // a connection with nothing in flight is read too: a TLS 1.3 session ticket (taken in by
      // OpenSSL, no byte comes out), the server's close (the connection is dropped quietly and
      // the next one counts as a reconnect), HTTP/2's SETTINGS and PINGs.
      if (events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) {
        read_some(t.slot, (events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)) != 0);
      }
      break;
    case ConnState::kFree:
      break;
  }
}

void LoadWorker::on_connected(uint32_t ci) {
  Connection& c = conns_[ci];
  const TimePoint now = config_.clock->now();
  const bool tcp_was_done = c.tcp_connected_at != TimePoint{};
  const net::IoResult r = c.transport->finish_connect();
  // TCP is established once finish_connect() gets past its SO_ERROR check: the first call on
  // writability, unless that call failed with the connect's own errno.
  const bool tls_failure = r.status == net::IoStatus::kError && !c.transport->error_text().empty();
  if (!tcp_was_done && (r.status != net::IoStatus::kError || tls_failure)) {
    c.tcp_connected_at = now;
    stats_.connects.tcp_ns.record(core::elapsed_ns(c.connect_at, now));
  }
  if (r.status == net::IoStatus::kWouldBlock) {  // a TLS handshake in progress
    if (r.wants_write != c.write_armed) {
      loop_->modify(c.transport->fd(), interest(r.wants_write ? EPOLLOUT : EPOLLIN), tag(ci));
      c.write_armed = r.wants_write;
    }
    return;
  }
  if (r.status != net::IoStatus::kDone) {
    if (phases_.measured(now)) {
      if (tls_failure) {
        stats_.count_error(ErrorKind::kTls, c.transport->error_text());
      } else {
        stats_.count_error(ErrorKind::kConnect, core::errno_name(r.error));
      }
      ++stats_.connect_failures_after_ok;
    }
    release(ci, /*retry=*/true);
    return;
  }
  const net::TlsInfo* tls = c.transport->tls();
  if (tls != nullptr) {
    // Read after the call: the last step's crypto is the handshake's, and with a quick server
    // the whole handshake can complete inside the first call.
    stats_.connects.tls_ns.record(core::elapsed_ns(c.tcp_connected_at, config_.clock->now()));
    ++(tls->resumed ? stats_.connects.tls_resumed : stats_.connects.tls_full);
    if (stats_.connects.tls_version.empty()) {
      stats_.connects.tls_version = tls->version;
      stats_.connects.tls_cipher = tls->cipher;
      stats_.connects.alpn = tls->alpn;
    }
  }
  if (h2() && tls != nullptr && tls->alpn != "h2") {
    // The pre-flight handshake found h2; a server that changes its mind is counted.
    if (phases_.measured(now)) {
      stats_.count_error(ErrorKind::kTls,
                         fmt::format("ALPN: the server chose {}, not h2",
                                     tls->alpn.empty() ? "no protocol" : tls->alpn));
    }
    release(ci, /*retry=*/true);
    return;
  }
  ++stats_.connects.opened;
  // A connection re-opened: counted when it is open, not per attempt. Regression (a new user's
  // trial): against a killed server every refused attempt counted, 18027 reconnects beside 3
  // connections opened and 2388 connects failed.
  if (c.opened_before && now >= phases_.measure_from) ++stats_.reconnects;
  c.opened_before = true;
  c.state = ConnState::kOpen;
  opening_failed_while_stopping_ = false;
  loop_->modify(c.transport->fd(), interest(EPOLLIN), tag(ci));
  c.write_armed = false;
  saw_target(now);
  if (!h2()) {
    became_ready(ci);
    return;
  }
  auto session = http::H2Client::create(*this);
  if (!session) {
    stats_.count_error(ErrorKind::kConnect, session.status().message());
    release(ci, /*retry=*/true);
    return;
  }
  c.h2 = std::move(session).value();
  after_h2_io(ci);  // the preface and SETTINGS; lanes wait for the server's SETTINGS
}

void LoadWorker::became_ready(uint32_t ci) {
  for (uint32_t l = first_lane(ci); l < first_lane(ci + 1); ++l) {
    if (lanes_[l].state != LaneState::kWaiting) continue;
    lanes_[l].state = LaneState::kIdle;
    notify(l);
  }
}

void LoadWorker::adopt_budget_end() {
  const int64_t end_ns = config_.budget->end_ns.load(std::memory_order_acquire);
  const TimePoint end{core::Nanos(end_ns)};
  if (end_ns != 0 && end < phases_.measure_until) phases_.measure_until = end;
}

void LoadWorker::send(uint32_t l, TimePoint now, TimePoint intended, bool measured) {
  bool last_of_budget = false;
  if (measured && config_.budget != nullptr) {
    const int64_t left = config_.budget->left.fetch_sub(1, std::memory_order_relaxed);
    if (left <= 0) {  // every measured request is out (another worker sent the last)
      adopt_budget_end();
      if (!stopping_) begin_stopping(now);  // closes this idle lane too
      return;
    }
    if (left == 1) {
      // This is the last: the measured phase ends just after it, for every worker.
      phases_.measure_until = now + core::Nanos(1);
      config_.budget->end_ns.store(phases_.measure_until.time_since_epoch().count(),
                                   std::memory_order_release);
      last_of_budget = true;
    }
  }
  Lane& lane = lanes_[l];
  const uint32_t ci = conn_of(l);
  Connection& c = conns_[ci];
  // --no-keepalive in closed loop: the request began when its connection did, so its latency
  // includes the connect and the handshake.
  lane.intended_at = !config_.keepalive && !config_.schedule ? c.connect_at : intended;
  lane.measured = measured;
  lane.sent_at = now;
  lane.received = 0;
  lane.body_bytes = 0;
  lane.partial_at = TimePoint{};
  if (measured && !c.tcp_base) {
    // A connection opened inside the measured phase counts from zero: all its segments are the
    // run's (the handshake's too), and the getsockopt() is saved, which matters when every
    // request has a connection of its own (--no-keepalive).
    c.tcp_base = c.connect_at >= phases_.measure_from ? net::TcpCounters{}
                                                      : net::tcp_counters(c.transport->fd());
  }
  lane.endpoint = picker_ ? static_cast<uint32_t>(picker_->next()) : 0;
  const uint64_t shipment = shipment_picker_ ? shipment_picker_->next() : 1;
  if (measured) {
    ++stats_.sent;
    if (mix()) ++endpoint_of(l).sent;
    ++measured_in_flight_;
    ++c.measured_busy;
    const core::Nanos lag = now - intended;
    stats_.send_lag_ns.record(lag.count());
    if (lag > OpenLoopFeeder::kLate) ++stats_.late;
    if (now < phases_.measure_until) ++stats_.sent_in_phase;
  } else {
    ++stats_.warmup.sent;
  }
  lane.state = LaneState::kBusy;
  ++c.busy;
  ++in_flight_;
  in_system_.change(now, +1);
  const uint64_t conn_number = config_.first_connection + ci;
  if (h2()) {
    const http::H2Request* request = &config_.requests->h2[lane.endpoint];
    if (request->has_placeholders) {
      request->render(conn_number, c.seq, lane.h2_rendered, shipment);
      request = &lane.h2_rendered;
    }
    ++c.seq;
    auto stream = c.h2->submit(l, *request);
    if (!stream) {
      // The session takes no new stream (ids used up, no memory): the connection goes, so the
      // lane is not sent again into the same refusal.
      const std::string why = stream.status().message();
      fail_connection(ci, ErrorKind::kWrite, why, ErrorKind::kWrite, why);
    } else {
      lane.stream = *stream;
      lane.stream_id = http::H2Client::id_of(*stream);
      write_later(ci);
    }
  } else {
    const http::RequestTemplate& request = config_.requests->h1[lane.endpoint];
    const std::string* bytes = &lane.rendered;
    if (request.has_placeholders()) {
      request.render(conn_number, c.seq, lane.rendered, shipment);
    } else {
      bytes = &request.fixed();
    }
    ++c.seq;
    if (c.awaiting.empty()) c.parser.reset(request.is_head());
    c.awaiting.push_back(l);
    queue_bytes(c, *bytes, measured);
    write_later(ci);
  }
  if (last_of_budget && !stopping_) begin_stopping(now);
}

void LoadWorker::queue_bytes(Connection& c, std::string_view bytes, bool measured) {
  c.out.append(bytes);
  c.segments.push_back(Segment{c.out.size(), measured});
}

void LoadWorker::flush(uint32_t ci) {
  Connection& c = conns_[ci];
  while (c.out_done < c.out.size()) {
    const net::IoResult r = c.transport->send_some(std::string_view(c.out).substr(c.out_done));
    if (r.status == net::IoStatus::kDone) {
      c.out_done += r.bytes;
      // What was written of measured requests' bytes (HTTP/2: of every frame written while a
      // measured request was in flight).
      while (!c.segments.empty()) {
        const Segment s = c.segments.front();
        const size_t upto = std::min(s.end, c.out_done);
        if (upto > c.out_counted) {
          if (s.measured) stats_.bytes_sent += upto - c.out_counted;
          c.out_counted = upto;
        }
        if (s.end > c.out_done) break;
        c.segments.pop_front();
      }
      continue;
    }
    if (r.status == net::IoStatus::kWouldBlock) {
      compact_out(c);
      // --io uring: the ring's queue is full; write_path_.pass() writes on once it has room.
      if (!c.write_armed && write_path_.write_events() != 0) {
        loop_->modify(c.transport->fd(), interest(EPOLLIN | EPOLLOUT), tag(ci));
        c.write_armed = true;
      }
      return;
    }
    const std::string cause = net::failure_cause(*c.transport, r.error != 0 ? r.error : EPIPE);
    fail_connection(ci, ErrorKind::kWrite, cause, ErrorKind::kWrite, cause);
    return;
  }
  c.out.clear();
  c.out_done = 0;
  c.out_counted = 0;
  c.segments.clear();
  if (c.write_armed) {
    loop_->modify(c.transport->fd(), interest(EPOLLIN), tag(ci));
    c.write_armed = false;
  }
}

void LoadWorker::compact_out(Connection& c) {
  // Regression (a trial): with bodies over 1 MiB and a server that answers at the head (knee
  // serve's 405), --io uring appended each next request behind the unwritten rest, so `out` was
  // never written to its end, never cleared, and grew by a request per response (725 MB in 4 s).
  // Dropping the written front once it is at least half of `out` costs at most one move of
  // each byte.
  if (c.out_done < kCompactOutBytes || c.out_done * 2 < c.out.size()) return;
  c.out.erase(0, c.out_done);
  for (Segment& s : c.segments) s.end -= std::min(s.end, c.out_done);
  c.out_counted -= std::min(c.out_counted, c.out_done);
  c.out_done = 0;
}

void LoadWorker::read_some(uint32_t ci, bool until_closed) {
  Connection& c = conns_[ci];
  const uint32_t generation = c.generation;
  while (true) {
    const net::IoResult r = c.transport->recv_some(read_buffer_);
    if (r.status == net::IoStatus::kDone) {
      if (h2()) {
        const Status received = c.h2->receive(std::string_view(read_buffer_.data(), r.bytes));
        if (!received.is_ok() && !c.h2->ready()) {
          // Not HTTP/2 from its first bytes (an HTTP/1.1 server answering the preface): counted,
          // and the next connect waits, so a wrong --h2c does not spin connecting.
          if (phases_.measured(config_.clock->now())) {
            stats_.count_error(ErrorKind::kConnect,
                               "HTTP/2: the server's first bytes were not SETTINGS (HTTP/1.1?)");
          }
          release(ci, /*retry=*/true);
          return;
        }
        if (!received.is_ok()) {
          fail_connection(ci, ErrorKind::kParse, received.message(), ErrorKind::kParse,
                          received.message());
          return;
        }
      } else if (!parse_h1(ci, read_buffer_.data(), r.bytes)) {
        return;  // released
      }
      if (c.generation != generation) return;
      // All there is for now (a part has arrived), unless TLS holds more.
      if (r.bytes < read_buffer_.size() && !c.transport->buffered() && !until_closed) {
        if (!h2() && !c.awaiting.empty() && c.parser.received_any()) {
          lanes_[c.awaiting.front()].partial_at = config_.clock->now();
        }
        break;
      }
      continue;
    }
    if (r.status == net::IoStatus::kWouldBlock) break;
    if (r.status == net::IoStatus::kClosed) {
      if (!h2()) {
        on_eof_h1(ci);
      } else if (!c.h2->ready()) {
        if (phases_.measured(config_.clock->now())) {
          stats_.count_error(ErrorKind::kConnect,
                             "HTTP/2: the server closed the connection before its SETTINGS");
        }
        release(ci, /*retry=*/true);
      } else if (c.busy == 0) {
        note_h2_session(ci);  // a GOAWAY that came with the close
        release(ci);
      } else {
        fail_connection(ci, ErrorKind::kClosedBeforeResponse, "EOF",
                        ErrorKind::kClosedBeforeResponse, "EOF");
      }
      return;
    }
    // kError
    const std::string cause = net::failure_cause(*c.transport, r.error);
    const bool answering = h2() || c.parser.received_any();
    fail_connection(ci, answering ? ErrorKind::kRead : ErrorKind::kClosedBeforeResponse, cause,
                    ErrorKind::kClosedBeforeResponse, cause);
    return;
  }
  if (h2()) after_h2_io(ci);
}

bool LoadWorker::parse_h1(uint32_t ci, const char* data, size_t size) {
  Connection& c = conns_[ci];
  size_t used_all = 0;
  while (used_all < size) {
    if (c.awaiting.empty()) {
      // Bytes no request asked for: the connection's framing can no longer be trusted, so it is
      // not reused. Regression (a new user's trial): they went uncounted, and the reconnect that
      // followed unexplained.
      if (phases_.measured(config_.clock->now())) {
        stats_.unsolicited_bytes += size - used_all;
        stats_.bytes_received += size - used_all;
        ++stats_.unsolicited_closes;
      }
      release(ci);
      return false;
    }
    const uint32_t l = c.awaiting.front();
    const size_t used = c.parser.feed(data + used_all, size - used_all);
    lanes_[l].received += used;
    used_all += used;
    switch (c.parser.state()) {
      case http::ResponseParser::State::kComplete: {
        c.awaiting.pop_front();
        // The clock is read when the response is complete, after its last read.
        complete_lane(l, config_.clock->now(), c.parser.status_code(), c.parser.body_bytes());
        if (!c.parser.keep_alive() || !config_.keepalive) {
          // The server ends the connection after this response (RFC 9112 §9.6), or the run
          // asked for one request per connection: requests pipelined behind go unanswered.
          fail_connection(ci, ErrorKind::kClosedBeforeResponse,
                          "the server announced Connection: close before answering",
                          ErrorKind::kClosedBeforeResponse,
                          "the server announced Connection: close before answering");
          return false;
        }
        if (!c.awaiting.empty()) {
          c.parser.reset(config_.requests->h1[lanes_[c.awaiting.front()].endpoint].is_head());
        }
        break;
      }
      case http::ResponseParser::State::kError: {
        // The bytes after the one that broke the framing arrived all the same (regression: they
        // were left out of bytes_received).
        lanes_[l].received += size - used_all;
        const std::string error(c.parser.error());
        fail_connection(ci, ErrorKind::kParse, error, ErrorKind::kClosedBeforeResponse,
                        "pipelined behind a response that broke HTTP/1.1 framing");
        return false;
      }
      case http::ResponseParser::State::kNeedMore:
        return true;
    }
  }
  return true;
}

void LoadWorker::on_eof_h1(uint32_t ci) {
  Connection& c = conns_[ci];
  if (c.awaiting.empty()) {
    release(ci);  // closed with nothing in flight: the next connection counts as a reconnect
    return;
  }
  // Where the response stood, read before on_eof() settles it.
  const bool any = c.parser.received_any();
  const bool in_body = c.parser.in_body();
  const std::optional<uint64_t> announced = c.parser.announced_body_bytes();
  if (c.parser.on_eof() == http::ResponseParser::State::kComplete) {
    const uint32_t l = c.awaiting.front();
    c.awaiting.pop_front();
    complete_lane(l, config_.clock->now(), c.parser.status_code(), c.parser.body_bytes());
    fail_connection(ci, ErrorKind::kClosedBeforeResponse, "EOF", ErrorKind::kClosedBeforeResponse,
                    "EOF");
    return;
  }
  ErrorKind kind = ErrorKind::kEofMidBody;
  std::string cause = "EOF";
  if (!any) {
    kind = ErrorKind::kClosedBeforeResponse;
  } else if (!in_body) {
    kind = ErrorKind::kEofMidHeaders;
  } else if (announced) {
    cause = fmt::format("received {} of {} bytes", c.parser.body_bytes(), *announced);
  } else {
    cause = fmt::format("received {} bytes of a chunked or close-delimited body",
                        c.parser.body_bytes());
  }
  fail_connection(ci, kind, cause, ErrorKind::kClosedBeforeResponse, "EOF");
}

void LoadWorker::after_h2_io(uint32_t ci) {
  Connection& c = conns_[ci];
  if (c.state != ConnState::kOpen && c.state != ConnState::kDraining) return;
  http::H2Client& session = *c.h2;
  const size_t before = c.out.size();
  const Status pulled = session.pull(c.out);
  if (c.out.size() > before) c.segments.push_back(Segment{c.out.size(), c.measured_busy > 0});
  if (!pulled.is_ok()) {
    fail_connection(ci, ErrorKind::kParse, pulled.message(), ErrorKind::kParse, pulled.message());
    return;
  }
  note_h2_session(ci);  // first: a GOAWAY that came with the SETTINGS allows no new stream
  if (session.ready() && c.state == ConnState::kOpen) {
    became_ready(ci);
    const uint32_t generation = c.generation;
    resend_waiting(ci);
    if (c.generation != generation) return;  // a refused submit closed it
  }
  if (c.state == ConnState::kDraining) {
    for (uint32_t l = first_lane(ci); l < first_lane(ci + 1); ++l) {
      if (lanes_[l].state == LaneState::kIdle || lanes_[l].state == LaneState::kWaiting) {
        lanes_[l].state = LaneState::kFree;
        notify(l);
      }
    }
  }
  if ((c.state == ConnState::kDraining && c.busy == 0) || session.finished()) {
    fail_connection(ci, ErrorKind::kClosedBeforeResponse, "the HTTP/2 session ended",
                    ErrorKind::kClosedBeforeResponse, "the HTTP/2 session ended");
    return;
  }
  flush(ci);
}

void LoadWorker::note_h2_session(uint32_t ci) {
  Connection& c = conns_[ci];
  if (!c.h2) return;
  const http::H2Client& session = *c.h2;
  if (session.server_max_streams() > 0) {
    uint32_t& seen = stats_.connects.h2_server_max_streams;
    seen = seen == 0 ? session.server_max_streams() : std::min(seen, session.server_max_streams());
  }
  if (session.goaway_received() && c.state == ConnState::kOpen) {
    // No new stream may start here (RFC 9113 §6.8): the lanes wait for the streams in flight to
    // end, then the connection is opened anew.
    c.state = ConnState::kDraining;
    ++stats_.connects.h2_goaways;
    if (session.goaway_error() != 0 || stats_.connects.h2_goaway_error.empty()) {
      stats_.connects.h2_goaway_error = http::H2Client::error_name(session.goaway_error());
    }
  }
}

bool LoadWorker::refused_by_goaway(uint32_t ci, uint32_t l) const {
  const Connection& c = conns_[ci];
  return h2() && c.h2 && c.h2->goaway_received() && !lanes_[l].resend &&
         lanes_[l].stream_id > c.h2->goaway_last_stream();
}

void LoadWorker::resend_later(uint32_t l) {
  Lane& lane = lanes_[l];
  Connection& c = conns_[conn_of(l)];
  lane.resend = true;
  lane.stream = nullptr;
  lane.stream_id = 0;
  --c.busy;
  if (lane.measured) --c.measured_busy;
  ++stats_.connects.h2_resent;
}

void LoadWorker::resend_waiting(uint32_t ci) {
  Connection& c = conns_[ci];
  for (uint32_t l = first_lane(ci); l < first_lane(ci + 1); ++l) {
    Lane& lane = lanes_[l];
    if (lane.state != LaneState::kBusy || !lane.resend) continue;
    // The same request again, its latency still running from when it was first meant to go.
    const http::H2Request& sent = config_.requests->h2[lane.endpoint];
    const http::H2Request* request = sent.has_placeholders ? &lane.h2_rendered : &sent;
    auto stream = c.h2->submit(l, *request);
    if (!stream) {
      const std::string why = stream.status().message();
      fail_connection(ci, ErrorKind::kWrite, why, ErrorKind::kWrite, why);
      return;
    }
    lane.resend = false;
    lane.stream = *stream;
    lane.stream_id = http::H2Client::id_of(*stream);
    ++c.busy;
    if (lane.measured) ++c.measured_busy;
  }
}

void LoadWorker::on_response(uint32_t l, int status, uint64_t body_bytes, uint64_t frame_bytes) {
  lanes_[l].received = frame_bytes;
  lanes_[l].stream = nullptr;  // the session took it back
  complete_lane(l, config_.clock->now(), status, body_bytes);
}

void LoadWorker::on_reset(uint32_t l, uint32_t error_code, bool after_goaway,
                          uint64_t frame_bytes) {
  if (after_goaway) {
    resend_later(l);  // not processed by the server: it goes out again on the next connection
    return;
  }
  lanes_[l].received = frame_bytes;
  lanes_[l].stream = nullptr;
  std::string cause = http::H2Client::error_name(error_code);
  if (after_goaway) cause += " after GOAWAY";
  fail_lane(l, ErrorKind::kStreamReset, cause);
}

void LoadWorker::complete_lane(uint32_t l, TimePoint now, int code, uint64_t body_bytes) {
  Lane& lane = lanes_[l];
  lane.body_bytes = body_bytes;
  if (now - lane.sent_at >= config_.timeout) {
    // Timeouts are swept on a tick, so a response can arrive after its timeout but before the
    // sweep: it is a timeout all the same, whatever arrived.
    fail_lane(l, ErrorKind::kTimeout, "");
    return;
  }
  // Open loop's throughput: measured requests answered inside the phase (warm-up arrivals that
  // drain into it are not the phase's work).
  const bool in_phase = code < 400 && lane.measured && phases_.measured(now);
  if (in_phase) ++stats_.ok_completed_in_phase;
  if (lane.measured) {
    ++stats_.completed;
    stats_.count_status(code);
    core::EndpointStats* endpoint = mix() ? &endpoint_of(l) : nullptr;
    if (endpoint != nullptr) {
      ++endpoint->completed;
      ++endpoint->status[code];
      if (in_phase) ++endpoint->ok_completed_in_phase;
    }
    if (code >= 400) {
      stats_.count_error(ErrorKind::kStatus, std::to_string(code));
      if (endpoint != nullptr) ++endpoint->errors[static_cast<size_t>(ErrorKind::kStatus)];
    } else {
      saw_target(now);
      check_split(lane, now);
      const int64_t latency = core::elapsed_ns(lane.intended_at, now);
      stats_.latency_ns.record(latency);
      if (endpoint != nullptr) endpoint->latency_ns.record(latency);
      if (interval_hist_) {
        interval_hist_->record(latency);
        interval_last_ = now;
      }
      stats_.service_time_ns.record(core::elapsed_ns(lane.sent_at, now));
    }
  } else {
    ++stats_.warmup.completed;
  }
  end_lane(l, now);
}

void LoadWorker::check_split(const Lane& l, TimePoint now) {
  // Linux delays an ACK 40 ms at least and 200 ms at most (TCP_DELACK_MIN, TCP_DELACK_MAX).
  constexpr core::Nanos kMinStall = std::chrono::milliseconds(30);
  constexpr core::Nanos kMaxStall = std::chrono::milliseconds(220);
  if (l.partial_at == TimePoint{}) return;
  const core::Nanos gap = now - l.partial_at;
  if (gap < kMinStall || gap > kMaxStall) return;
  ++stats_.split_responses;
  stats_.split_gap_ns += gap.count();
}

void LoadWorker::fail_lane(uint32_t l, ErrorKind kind, std::string_view cause) {
  if (lanes_[l].measured) {
    stats_.count_error(kind, cause);
    if (mix()) ++endpoint_of(l).errors[static_cast<size_t>(kind)];
  } else {
    ++stats_.warmup.errors[static_cast<size_t>(kind)];
  }
  end_lane(l, config_.clock->now());
}

void LoadWorker::fail_connection(uint32_t ci, ErrorKind kind, std::string_view cause,
                                 ErrorKind rest_kind, std::string_view rest_cause) {
  Connection& c = conns_[ci];
  const std::string first(cause);  // the causes may point into the connection's parser
  const std::string rest(rest_cause);
  if (h2()) {
    note_h2_session(ci);  // a GOAWAY read with the close still counts
    for (uint32_t l = first_lane(ci); l < first_lane(ci + 1); ++l) {
      if (lanes_[l].state != LaneState::kBusy || lanes_[l].resend) continue;
      if (refused_by_goaway(ci, l)) {
        resend_later(l);
      } else {
        fail_lane(l, kind, first);
      }
    }
  } else {
    const std::deque<uint32_t> awaiting = std::move(c.awaiting);
    c.awaiting.clear();
    bool front = true;
    for (const uint32_t l : awaiting) {
      if (front) lanes_[l].body_bytes = c.parser.body_bytes();
      fail_lane(l, front ? kind : rest_kind, front ? first : rest);
      front = false;
    }
  }
  release(ci);
}

void LoadWorker::end_lane(uint32_t l, TimePoint now) {
  Lane& lane = lanes_[l];
  Connection& c = conns_[conn_of(l)];
  if (lane.measured) {
    --measured_in_flight_;
    if (!lane.resend) --c.measured_busy;
    stats_.bytes_received += lane.received;
    stats_.bytes_received_body += lane.body_bytes;
  } else if (now >= phases_.measure_from) {
    ++stats_.warmup.carried_over;
  }
  if (!lane.resend) --c.busy;
  lane.resend = false;
  --in_flight_;
  in_system_.change(now, -1);
  // Idle where the connection can take its next request; else it waits for the connection
  // (connecting, or HTTP/2 before the server's SETTINGS) or is freed (draining, closed).
  if (c.state == ConnState::kOpen && (!h2() || c.h2->ready())) {
    lane.state = LaneState::kIdle;
  } else if (c.state == ConnState::kConnecting || c.state == ConnState::kOpen) {
    lane.state = LaneState::kWaiting;
  } else {
    lane.state = LaneState::kFree;
  }
  lane.measured = false;
  notify(l);
}

void LoadWorker::release(uint32_t ci, bool retry) {
  if (retry && stopping_) opening_failed_while_stopping_ = true;  // retry: it failed to open
  bool resending = false;
  for (uint32_t l = first_lane(ci); l < first_lane(ci + 1); ++l) {
    Lane& lane = lanes_[l];
    if (lane.state == LaneState::kFree) continue;
    if (lane.state == LaneState::kBusy && lane.resend) {
      if (!retry) {
        resending = true;  // still in flight: it waits for the next connection
        continue;
      }
      // The connection that was to carry it again could not be opened (a server shutting down
      // sends GOAWAY, then refuses connects): its server closed the connection it went out on
      // without answering it. Regression (a new user's trial): it was retried until the request
      // timeout and counted as a timeout.
      fail_lane(l, ErrorKind::kClosedBeforeResponse, "refused by GOAWAY; the reconnect failed");
    }
    lane.state = LaneState::kFree;
    if (retry) {
      lane.retry_wait = true;
    } else {
      notify(l);
    }
  }
  close_connection(ci);
  if (retry) {
    retries_.push(config_.clock->now() + kConnectRetryDelay, Retry{ci, conns_[ci].generation});
  } else if (resending) {
    connect(ci, config_.clock->now());
  }
}

void LoadWorker::close_connection(uint32_t ci) {
  Connection& c = conns_[ci];
  if (c.transport && c.tcp_base) {
    const net::TcpCounters end = net::tcp_counters(c.transport->fd());
    stats_.tcp_retransmits += end.retransmits - std::min(end.retransmits, c.tcp_base->retransmits);
    stats_.tcp_segments_out +=
        end.segments_out - std::min(end.segments_out, c.tcp_base->segments_out);
  }
  c.tcp_base.reset();
  c.h2.reset();
  if (c.transport) write_path_.release(*loop_, *c.transport);
  c.transport.reset();
  c.state = ConnState::kFree;
  c.write_armed = false;
  c.busy = 0;
  c.measured_busy = 0;
  c.out.clear();
  c.out_done = 0;
  c.out_counted = 0;
  c.segments.clear();
  c.awaiting.clear();
  ++c.generation;
}

void LoadWorker::close(uint32_t l) {
  Lane& lane = lanes_[l];
  if (lane.state == LaneState::kBusy) return;
  lane.state = LaneState::kFree;
  const uint32_t ci = conn_of(l);
  for (uint32_t k = first_lane(ci); k < first_lane(ci + 1); ++k) {
    if (lanes_[k].state != LaneState::kFree) return;
  }
  close_connection(ci);
}

void LoadWorker::saw_target(TimePoint now) {
  if (!phases_.measured(now)) return;
  stats_.last_ok_ns = core::elapsed_ns(phases_.measure_from, now);
  stats_.connect_failures_after_ok = 0;
}

void LoadWorker::check_timeouts(TimePoint now) {
  for (uint32_t ci = 0; ci < conns_.size(); ++ci) {
    Connection& c = conns_[ci];
    const bool unready = c.state == ConnState::kOpen && h2() && !c.h2->ready();
    if ((c.state == ConnState::kConnecting || unready) && now - c.connect_at >= config_.timeout) {
      if (phases_.measured(now)) {
        if (unready) {
          stats_.count_error(ErrorKind::kConnect,
                             "HTTP/2: no SETTINGS from the server within the timeout");
        } else if (c.tcp_connected_at != TimePoint{}) {
          stats_.count_error(ErrorKind::kTls, "TLS handshake: not done within the timeout");
        } else {
          stats_.count_error(ErrorKind::kConnect, "timeout");
        }
        ++stats_.connect_failures_after_ok;
      }
      release(ci);
      continue;
    }
    // Every lane: one waiting to be sent again after a GOAWAY is busy on no connection.
    const uint32_t generation = c.generation;
    for (uint32_t l = first_lane(ci); l < first_lane(ci + 1) && c.generation == generation; ++l) {
      Lane& lane = lanes_[l];
      if (lane.state != LaneState::kBusy || now - lane.sent_at < config_.timeout) continue;
      if (h2()) {
        // The connection goes on; only this stream is given up (a request waiting to be sent
        // again after a GOAWAY has none).
        if (c.h2 && lane.stream != nullptr) c.h2->cancel(lane.stream);
        lane.stream = nullptr;
        fail_lane(l, ErrorKind::kTimeout, "");
      } else {
        // HTTP/1.1 cannot skip one response: the connection goes, with what is behind it.
        fail_connection(ci, ErrorKind::kTimeout, "", ErrorKind::kClosedBeforeResponse,
                        "pipelined behind a timed-out request");
      }
    }
    if (h2() && c.state != ConnState::kFree) after_h2_io(ci);
  }
}

void LoadWorker::close_unbusy(TimePoint now) {
  for (uint32_t ci = 0; ci < conns_.size(); ++ci) {
    Connection& c = conns_[ci];
    if (c.state == ConnState::kConnecting && now - c.connect_at >= kStalledConnect) {
      // A connect pending this long kept its connection out of the measurement (a lost SYN
      // waits 1 s for its retransmit): say so rather than let the lanes vanish.
      stats_.count_error(ErrorKind::kConnect, "still connecting when the run ended");
    }
    bool resending = false;  // requests a GOAWAY refused wait for this connection
    for (uint32_t l = first_lane(ci); l < first_lane(ci + 1); ++l) {
      if (lanes_[l].state != LaneState::kBusy) lanes_[l].state = LaneState::kFree;
      resending = resending || (lanes_[l].state == LaneState::kBusy && lanes_[l].resend);
    }
    if (c.busy == 0 && !resending && c.state != ConnState::kFree) close_connection(ci);
  }
}

void LoadWorker::begin_stopping(TimePoint now) {
  if (cpu_window_.state == CpuWindow::kOpen) sample_cpu_window(now, /*last=*/true);
  stopping_ = true;
  feeder_->stop(*this, now);
}

// Closes the open CPU window into RunStats::max_thread_cpu_demand_1s (and the pool's exhaustion
// over it into max_pool_full_share_1s) when it lasted at least
// kMinCpuWindowNs, and opens the next at `now` unless it was the `last`. Called at the measured
// phase's start, at each interval boundary inside it and at its end: two clock reads and one
// /proc read a second.
void LoadWorker::sample_cpu_window(TimePoint now, bool last) {
  const core::ThreadCpuReading reading = core::read_thread_cpu(stats_.client_spin_ns);
  if (cpu_window_.state == CpuWindow::kOpen) {
    const int64_t wall_ns = core::elapsed_ns(cpu_window_.start, now);
    if (wall_ns >= kMinCpuWindowNs) {
      stats_.max_thread_cpu_demand_1s =
          std::max(stats_.max_thread_cpu_demand_1s,
                   core::thread_cpu_shares(cpu_window_.from, reading, wall_ns).demand);
      const int64_t full_ns = feeder_->pool_full_ns(now) - cpu_window_.pool_full_from_ns;
      stats_.max_pool_full_share_1s =
          std::max(stats_.max_pool_full_share_1s,
                   std::min(1.0, static_cast<double>(full_ns) / static_cast<double>(wall_ns)));
    }
  }
  cpu_window_.state = last ? CpuWindow::kDone : CpuWindow::kOpen;
  cpu_window_.start = now;
  cpu_window_.from = reading;
  cpu_window_.pool_full_from_ns = feeder_->pool_full_ns(now);
}

void LoadWorker::flush_interval() {
  IntervalCounts out;
  out.index = interval_index_++;
  interval_hist_->for_each_recorded(
      [&](int64_t lowest, int64_t, int64_t count) { out.counts.emplace_back(lowest, count); });
  const uint64_t errors = stats_.total_errors();
  out.errors = errors - interval_errors_flushed_;
  if (interval_last_ > phases_.measure_from) {
    out.last_s = std::chrono::duration<double>(interval_last_ - phases_.measure_from).count();
  }
  interval_errors_flushed_ = errors;
  if (config_.intervals != nullptr) config_.intervals->push(std::move(out));
  interval_hist_->reset();
}

// The grace period is over: whatever is still in flight is aborted, whatever waits is never sent.
void LoadWorker::abort_all(TimePoint now) {
  for (uint32_t l = 0; l < lanes_.size(); ++l) {
    Lane& lane = lanes_[l];
    if (lane.state != LaneState::kBusy) continue;
    const Connection& c = conns_[conn_of(l)];
    if (lane.measured) {
      ++stats_.aborted;
      if (mix()) ++endpoint_of(l).aborted;
      --measured_in_flight_;
      stats_.bytes_received += lane.received;
      const bool answering = !h2() && !c.awaiting.empty() && c.awaiting.front() == l;
      stats_.bytes_received_body += answering ? c.parser.body_bytes() : lane.body_bytes;
    } else {
      ++stats_.warmup.aborted;
      if (now >= phases_.measure_from) ++stats_.warmup.carried_over;
    }
    --in_flight_;
    in_system_.change(now, -1);
    lane.state = LaneState::kFree;
  }
  for (uint32_t ci = 0; ci < conns_.size(); ++ci) close_connection(ci);
  feeder_->abort_waiting(*this, now);
}

}  // namespace knee::engine
