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
constexpr auto kConnectRetryDelay = std::chrono::milliseconds(10);
constexpr auto kLateThreshold = std::chrono::milliseconds(1);
// A connect still pending after this long at the end of a run is reported (loopback and LAN
// connects take microseconds to a millisecond; a lost SYN is retransmitted after 1 s).
constexpr auto kStalledConnect = std::chrono::milliseconds(100);
// Longest gap between two iterations of the loop counted as busy-polling (--spin).
constexpr int64_t kMaxSpinIterationNs = 50'000;

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
      read_buffer_(kReadBufferBytes),
      in_system_(config_.phases) {
  feeder_ = make_feeder(config_, config_.phases);
}

LoadWorker::~LoadWorker() = default;

Status LoadWorker::run() {
  auto created = net::EventLoop::create();
  if (!created) return created.status();
  net::EventLoop loop = std::move(created).value();
  loop_ = &loop;
  // Wake-ups on time matter more than the kernel's default 50 us of timer coalescing.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  const core::ClockSource& clock = *config_.clock;
  const Phases& phases = config_.phases;
  const core::Nanos tick = timeout_tick(config_.timeout);
  const core::Nanos cpu_start = core::thread_cpu_time();
  const core::Nanos wait_start = core::thread_runqueue_wait();
  const TimePoint wall_start = clock.now();
  TimePoint now = wall_start;
  in_system_.change(now, 0);
  feeder_->start(*this, now);

  std::array<epoll_event, 256> events{};
  TimePoint next_tick = now + tick;
  TimePoint next_publish = now;  // live figures (config_.live), between events
  const bool intervals = config_.interval.count() > 0;
  if (intervals) {
    interval_hist_.emplace(core::Histogram::for_latency());
    interval_end_ = phases.measure_from + config_.interval;
  }
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
    if (!stopping_ && now >= phases.measure_until) begin_stopping(now);
    if (stopping_) {
      if (in_flight_ == 0 && feeder_->drained()) break;
      // The grace period is for measured requests; warm-up ones still in flight (a server that
      // never answers) are aborted at once, not waited for.
      if (now >= grace_until || (measured_in_flight_ == 0 && feeder_->drained())) {
        abort_all(now);
        break;
      }
    }
    if (config_.live != nullptr && now >= next_publish) {
      if (config_.live->publish(stats_)) next_publish = now + kPublishEvery;
    }
    if (now >= next_tick) {
      check_timeouts(now);
      next_tick = now + tick;
    }
    // Interval boundaries inside the measured phase; the last interval stays open to the end.
    while (intervals && interval_end_ < phases.measure_until && now >= interval_end_) {
      flush_interval();
      interval_end_ += config_.interval;
    }
    retries_.pop_due(now, [&](Retry r) {
      const Connection& c = conns_[r.slot];
      if (c.generation != r.generation || c.state != ConnState::kFree) return;
      feeder_->on_free(*this, r.slot, now);
    });

    TimePoint deadline = next_tick;
    if (intervals && interval_end_ < phases.measure_until) {
      deadline = std::min(deadline, interval_end_);
    }
    if (auto t = retries_.next_deadline()) deadline = std::min(deadline, *t);
    deadline = std::min(deadline, stopping_ ? grace_until : phases.measure_until);
    bool spinning = false;
    if (auto next_send = feeder_->next_send()) {
      const TimePoint wake = *next_send - config_.spin;
      if (config_.spin.count() > 0 && now >= wake) {
        spinning = true;  // poll without sleeping until the send is due
        deadline = now;
      } else {
        deadline = std::min(deadline, wake);
      }
    }
    auto n = loop.wait(events, spinning ? core::Nanos(0) : clock.blocking_time(deadline));
    if (!n) {
      status = n.status();
      break;
    }
    if (spinning && *n == 0) {
      spin_since = now;  // an empty poll: the time until the next iteration was spent waiting
    } else if (*n == 0) {
      const TimePoint woke = clock.now();
      if (woke >= deadline) stats_.loop_lag_ns.record(core::elapsed_ns(deadline, woke));
    }
    for (int k = 0; k < *n; ++k) {
      const epoll_event& e = events[static_cast<size_t>(k)];
      on_event(e.data.u64, e.events);
    }
  }
  for (uint32_t i = 0; i < conns_.size(); ++i) close(i);
  in_system_.change(clock.now(), 0);
  stats_.in_system_ns = in_system_.integral_ns();
  if (intervals) flush_interval();
  if (config_.live != nullptr) {
    while (!config_.live->publish(stats_)) std::this_thread::yield();
  }
  const int64_t cpu_ns = (core::thread_cpu_time() - cpu_start).count();
  stats_.client_cpu_ns = cpu_ns;
  stats_.client_wall_ns = core::elapsed_ns(wall_start, clock.now());
  if (stats_.client_wall_ns > 0) {
    const double wall = static_cast<double>(stats_.client_wall_ns);
    const double wait_ns = static_cast<double>((core::thread_runqueue_wait() - wait_start).count());
    // Spinning is waiting on purpose: it counts as neither work nor demand for a core.
    const double work_ns = std::max(0.0, static_cast<double>(cpu_ns - stats_.client_spin_ns));
    stats_.max_thread_cpu_share = work_ns / wall;
    stats_.max_thread_cpu_demand = std::min(1.0, (work_ns + wait_ns) / wall);
  }
  loop_ = nullptr;
  return status;
}

void LoadWorker::open(uint32_t i, TimePoint now) {
  Connection& c = conns_[i];
  if (c.opened_before && now >= config_.phases.measure_from) ++stats_.reconnects;
  c.opened_before = true;
  auto fd = net::connect_tcp(config_.address);
  if (!fd) {
    // An immediate failure (e.g. no ephemeral ports left): count it and try again shortly.
    if (config_.phases.measured(now)) {
      const int err = fd.status().os_error();
      stats_.count_error(ErrorKind::kConnect, err != 0 ? core::errno_name(err) : "socket");
      ++stats_.connect_failures_after_ok;
    }
    retry_later(i, now);
    return;
  }
  if (config_.tls != nullptr) {
    auto tls = net::TlsTransport::create(std::move(fd).value(), *config_.tls, config_.server_name,
                                         &tls_sessions_);
    if (!tls) {
      if (config_.phases.measured(now)) stats_.count_error(ErrorKind::kTls, tls.status().message());
      retry_later(i, now);
      return;
    }
    c.transport = std::move(tls).value();
  } else {
    c.transport = std::make_unique<net::TcpTransport>(std::move(fd).value());
  }
  c.state = ConnState::kConnecting;
  c.sent_at = now;  // connect start, for the connect timeout
  c.tcp_connected_at = TimePoint{};
  c.write_armed = true;
  if (!loop_->add(c.transport->fd(), EPOLLOUT, tag(i))) {
    close(i);
    retry_later(i, now);
  }
}

void LoadWorker::retry_later(uint32_t i, TimePoint now) {
  retries_.push(now + kConnectRetryDelay, Retry{i, conns_[i].generation});
}

void LoadWorker::on_event(uint64_t event_tag, uint32_t events) {
  const net::EventTag t = net::EventTag::of(event_tag);
  if (t.slot >= conns_.size()) return;
  Connection& c = conns_[t.slot];
  if (c.generation != t.generation) return;  // for a connection closed since
  switch (c.state) {
    case ConnState::kConnecting:
      on_connected(t.slot);
      break;
    case ConnState::kSending:
      if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) write_some(t.slot);
      // A response can arrive before the request is fully written (early error responses).
      if (c.state == ConnState::kSending && (events & EPOLLIN)) read_some(t.slot);
      break;
    case ConnState::kReceiving:
      read_some(t.slot);
      break;
    case ConnState::kIdle: {
      // TLS 1.3 session tickets arrive after the handshake, often while the connection waits
      // for its first request: OpenSSL takes them in and no application byte comes out.
      if (c.transport->tls() != nullptr) {
        char byte = 0;
        const net::IoResult r = c.transport->recv_some(std::span<char>(&byte, 1));
        if (r.status == net::IoStatus::kWouldBlock) break;
      }
      // The server closed (or wrote to) a connection with nothing in flight: drop it quietly;
      // the next one opened counts as a reconnect.
      drop(t.slot);
      break;
    }
    case ConnState::kFree:
      break;
  }
}

void LoadWorker::on_connected(uint32_t i) {
  Connection& c = conns_[i];
  const TimePoint now = config_.clock->now();
  const bool tcp_was_done = c.tcp_connected_at != TimePoint{};
  const net::IoResult r = c.transport->finish_connect();
  // TCP is established once finish_connect() gets past its SO_ERROR check: the first call on
  // writability, unless that call failed with the connect's own errno.
  const bool tls_failure = r.status == net::IoStatus::kError && !c.transport->error_text().empty();
  if (!tcp_was_done && (r.status != net::IoStatus::kError || tls_failure)) {
    c.tcp_connected_at = now;
    stats_.connects.tcp_ns.record(core::elapsed_ns(c.sent_at, now));
  }
  if (r.status == net::IoStatus::kWouldBlock) {  // a TLS handshake in progress
    if (r.wants_write != c.write_armed) {
      loop_->modify(c.transport->fd(), r.wants_write ? EPOLLOUT : EPOLLIN, tag(i));
      c.write_armed = r.wants_write;
    }
    return;
  }
  if (r.status != net::IoStatus::kDone) {
    if (config_.phases.measured(now)) {
      if (tls_failure) {
        stats_.count_error(ErrorKind::kTls, c.transport->error_text());
      } else {
        stats_.count_error(ErrorKind::kConnect, core::errno_name(r.error));
      }
      ++stats_.connect_failures_after_ok;
    }
    close(i);
    retry_later(i, now);
    return;
  }
  ++stats_.connects.opened;
  if (const net::TlsInfo* tls = c.transport->tls()) {
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
  c.state = ConnState::kIdle;
  loop_->modify(c.transport->fd(), EPOLLIN, tag(i));
  c.write_armed = false;
  saw_target(now);
  feeder_->on_idle(*this, i, now);
}

void LoadWorker::adopt_budget_end() {
  const int64_t end_ns = config_.budget->end_ns.load(std::memory_order_acquire);
  const TimePoint end{core::Nanos(end_ns)};
  if (end_ns != 0 && end < config_.phases.measure_until) config_.phases.measure_until = end;
}

void LoadWorker::send(uint32_t i, TimePoint now, TimePoint intended, bool measured) {
  bool last_of_budget = false;
  if (measured && config_.budget != nullptr) {
    const int64_t left = config_.budget->left.fetch_sub(1, std::memory_order_relaxed);
    if (left <= 0) {  // every measured request is out (another worker sent the last)
      adopt_budget_end();
      if (!stopping_) begin_stopping(now);  // closes this idle connection too
      return;
    }
    if (left == 1) {
      // This is the last: the measured phase ends just after it, for every worker.
      config_.phases.measure_until = now + core::Nanos(1);
      config_.budget->end_ns.store(config_.phases.measure_until.time_since_epoch().count(),
                                   std::memory_order_release);
      last_of_budget = true;
    }
  }
  Connection& c = conns_[i];
  // --no-keepalive in closed loop: the request began when its connection did (sent_at holds
  // the connect's start until now), so its latency includes the connect and the handshake.
  const TimePoint began = !config_.keepalive && !config_.schedule ? c.sent_at : intended;
  const http::RequestTemplate& request = *config_.request;
  if (request.has_placeholders()) {
    request.render(config_.first_connection + i, c.seq, c.rendered);
    c.bytes = &c.rendered;
  } else {
    c.bytes = &request.fixed();
  }
  ++c.seq;
  c.written = 0;
  c.parser.reset(request.is_head());
  c.measured = measured;
  c.intended_at = began;
  c.sent_at = now;
  c.received = 0;
  c.partial_at = TimePoint{};
  if (measured && !c.tcp_base) c.tcp_base = net::tcp_counters(c.transport->fd());
  if (measured) {
    ++stats_.sent;
    ++measured_in_flight_;
    const core::Nanos lag = now - intended;
    stats_.send_lag_ns.record(lag.count());
    if (lag > kLateThreshold) ++stats_.late;
    if (now < config_.phases.measure_until) ++stats_.sent_in_phase;
  } else {
    ++stats_.warmup.sent;
  }
  c.state = ConnState::kSending;
  ++in_flight_;
  in_system_.change(now, +1);
  write_some(i);
  if (last_of_budget && !stopping_) begin_stopping(now);
}

void LoadWorker::write_some(uint32_t i) {
  Connection& c = conns_[i];
  const std::string& bytes = *c.bytes;
  while (c.written < bytes.size()) {
    const net::IoResult r = c.transport->send_some(std::string_view(bytes).substr(c.written));
    if (r.status == net::IoStatus::kDone) {
      c.written += r.bytes;
      if (c.measured) stats_.bytes_sent += r.bytes;
      continue;
    }
    if (r.status == net::IoStatus::kWouldBlock) {
      if (!c.write_armed) {
        loop_->modify(c.transport->fd(), EPOLLIN | EPOLLOUT, tag(i));
        c.write_armed = true;
      }
      return;
    }
    fail_request(i, ErrorKind::kWrite,
                 net::failure_cause(*c.transport, r.error != 0 ? r.error : EPIPE));
    return;
  }
  c.state = ConnState::kReceiving;
  if (c.write_armed) {
    loop_->modify(c.transport->fd(), EPOLLIN, tag(i));
    c.write_armed = false;
  }
}

void LoadWorker::read_some(uint32_t i) {
  Connection& c = conns_[i];
  while (true) {
    const net::IoResult r = c.transport->recv_some(read_buffer_);
    switch (r.status) {
      case net::IoStatus::kDone: {
        const size_t used = c.parser.feed(read_buffer_.data(), r.bytes);
        c.received += used;
        switch (c.parser.state()) {
          case http::ResponseParser::State::kComplete:
            // Bytes after a complete response were never asked for (one request in flight per
            // connection): the connection's framing can no longer be trusted, so it is not
            // reused.
            // The clock is read when the response is complete, after its last read.
            complete_request(i, config_.clock->now(),
                             /*can_reuse=*/used == r.bytes && !c.transport->buffered());
            return;
          case http::ResponseParser::State::kError:
            fail_request(i, ErrorKind::kParse, c.parser.error());
            return;
          case http::ResponseParser::State::kNeedMore:
            // All there is for now (a part has arrived), unless TLS holds more.
            if (r.bytes < read_buffer_.size() && !c.transport->buffered()) {
              c.partial_at = config_.clock->now();
              return;
            }
            continue;
        }
        return;
      }
      case net::IoStatus::kClosed: {
        // Where the response stood, read before on_eof() settles it.
        const bool any = c.parser.received_any();
        const bool in_body = c.parser.in_body();
        const std::optional<uint64_t> announced = c.parser.announced_body_bytes();
        if (c.parser.on_eof() == http::ResponseParser::State::kComplete) {
          complete_request(i, config_.clock->now(), /*can_reuse=*/false);
        } else if (!any) {
          fail_request(i, ErrorKind::kClosedBeforeResponse, "EOF");
        } else if (!in_body) {
          fail_request(i, ErrorKind::kEofMidHeaders, "EOF");
        } else if (announced) {
          fail_request(i, ErrorKind::kEofMidBody,
                       fmt::format("received {} of {} bytes", c.parser.body_bytes(), *announced));
        } else {
          fail_request(i, ErrorKind::kEofMidBody,
                       fmt::format("received {} bytes of a chunked or close-delimited body",
                                   c.parser.body_bytes()));
        }
        return;
      }
      case net::IoStatus::kWouldBlock:
        return;
      case net::IoStatus::kError:
        fail_request(i,
                     c.parser.received_any() ? ErrorKind::kRead : ErrorKind::kClosedBeforeResponse,
                     net::failure_cause(*c.transport, r.error));
        return;
    }
  }
}

void LoadWorker::complete_request(uint32_t i, TimePoint now, bool can_reuse) {
  Connection& c = conns_[i];
  const int code = c.parser.status_code();
  if (now - c.sent_at >= config_.timeout) {
    // Timeouts are swept on a tick, so a response can arrive after its timeout but before the
    // sweep: it is a timeout all the same, whatever arrived.
    fail_request(i, ErrorKind::kTimeout, "");
    return;
  }
  // Open loop's throughput: measured requests answered inside the phase (warm-up arrivals that
  // drain into it are not the phase's work).
  if (code < 400 && c.measured && config_.phases.measured(now)) ++stats_.ok_completed_in_phase;
  if (c.measured) {
    ++stats_.completed;
    stats_.count_status(code);
    if (code >= 400) {
      stats_.count_error(ErrorKind::kStatus, std::to_string(code));
    } else {
      saw_target(now);
      check_split(c, now);
      const int64_t latency = core::elapsed_ns(c.intended_at, now);
      stats_.latency_ns.record(latency);
      if (interval_hist_) interval_hist_->record(latency);
      stats_.service_time_ns.record(core::elapsed_ns(c.sent_at, now));
    }
  } else {
    ++stats_.warmup.completed;
  }
  end_request(i, now, can_reuse && c.parser.keep_alive());
}

void LoadWorker::check_split(const Connection& c, TimePoint now) {
  // Linux delays an ACK 40 ms at least and 200 ms at most (TCP_DELACK_MIN, TCP_DELACK_MAX).
  constexpr core::Nanos kMinStall = std::chrono::milliseconds(30);
  constexpr core::Nanos kMaxStall = std::chrono::milliseconds(220);
  if (c.partial_at == TimePoint{}) return;
  const core::Nanos gap = now - c.partial_at;
  if (gap < kMinStall || gap > kMaxStall) return;
  ++stats_.split_responses;
  stats_.split_gap_ns += gap.count();
}

void LoadWorker::fail_request(uint32_t i, ErrorKind kind, std::string_view cause) {
  Connection& c = conns_[i];
  if (c.measured) {
    stats_.count_error(kind, cause);
  } else {
    ++stats_.warmup.errors[static_cast<size_t>(kind)];
  }
  end_request(i, config_.clock->now(), /*can_reuse=*/false);
}

void LoadWorker::settle(Connection& c, TimePoint now) {
  if (c.measured) {
    --measured_in_flight_;
    stats_.bytes_received += c.received;
    stats_.bytes_received_body += c.parser.body_bytes();
  } else if (now >= config_.phases.measure_from) {
    ++stats_.warmup.carried_over;
  }
}

// The request on slot i has ended (completed or failed): the feeder reuses the connection, or
// the slot is closed and handed back free.
void LoadWorker::end_request(uint32_t i, TimePoint now, bool can_reuse) {
  Connection& c = conns_[i];
  settle(c, now);
  --in_flight_;
  in_system_.change(now, -1);
  c.state = ConnState::kIdle;
  if (can_reuse && config_.keepalive) {
    feeder_->on_idle(*this, i, now);
  } else {
    drop(i);
  }
}

void LoadWorker::drop(uint32_t i) {
  close(i);
  feeder_->on_free(*this, i, config_.clock->now());
}

void LoadWorker::saw_target(TimePoint now) {
  if (!config_.phases.measured(now)) return;
  stats_.last_ok_ns = core::elapsed_ns(config_.phases.measure_from, now);
  stats_.connect_failures_after_ok = 0;
}

void LoadWorker::close(uint32_t i) {
  Connection& c = conns_[i];
  if (c.transport && c.tcp_base) {
    const net::TcpCounters end = net::tcp_counters(c.transport->fd());
    stats_.tcp_retransmits += end.retransmits - std::min(end.retransmits, c.tcp_base->retransmits);
    stats_.tcp_segments_out +=
        end.segments_out - std::min(end.segments_out, c.tcp_base->segments_out);
  }
  c.tcp_base.reset();
  if (busy(c)) {  // only when closed without end_request (aborts)
    settle(c, config_.clock->now());
    --in_flight_;
  }
  c.transport.reset();  // closing the socket removes it from epoll
  c.state = ConnState::kFree;
  c.write_armed = false;
  c.measured = false;
  ++c.generation;
}

void LoadWorker::check_timeouts(TimePoint now) {
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    Connection& c = conns_[i];
    if (busy(c) && now - c.sent_at >= config_.timeout) {
      fail_request(i, ErrorKind::kTimeout, "");
    } else if (c.state == ConnState::kConnecting && now - c.sent_at >= config_.timeout) {
      if (config_.phases.measured(now)) {
        if (c.tcp_connected_at != TimePoint{}) {
          stats_.count_error(ErrorKind::kTls, "TLS handshake: not done within the timeout");
        } else {
          stats_.count_error(ErrorKind::kConnect, "timeout");
        }
        ++stats_.connect_failures_after_ok;
      }
      drop(i);
    }
  }
}

void LoadWorker::close_unbusy(TimePoint now) {
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    Connection& c = conns_[i];
    if (c.state == ConnState::kConnecting && now - c.sent_at >= kStalledConnect) {
      // A connect pending this long kept its connection out of the measurement (a lost SYN
      // waits 1 s for its retransmit): say so rather than let the slot vanish.
      stats_.count_error(ErrorKind::kConnect, "still connecting when the run ended");
    }
    if (!busy(c)) close(i);
  }
}

void LoadWorker::begin_stopping(TimePoint now) {
  stopping_ = true;
  feeder_->stop(*this, now);
}

void LoadWorker::flush_interval() {
  IntervalCounts out;
  out.index = interval_index_++;
  interval_hist_->for_each_recorded(
      [&](int64_t lowest, int64_t, int64_t count) { out.counts.emplace_back(lowest, count); });
  if (config_.intervals != nullptr) config_.intervals->push(std::move(out));
  interval_hist_->reset();
}

// The grace period is over: whatever is still in flight is aborted, whatever waits is never sent.
void LoadWorker::abort_all(TimePoint now) {
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    Connection& c = conns_[i];
    if (!busy(c)) continue;
    if (c.measured) {
      ++stats_.aborted;
    } else {
      ++stats_.warmup.aborted;
    }
    in_system_.change(now, -1);
    close(i);
  }
  feeder_->abort_waiting(*this, now);
}

}  // namespace knee::engine
