#include "engine/worker.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

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

// The errno name in a Status message ("socket: Too many open files (EMFILE)" -> "EMFILE").
std::string errno_of(const Status& status) {
  const std::string& m = status.message();
  size_t open = m.rfind('(');
  size_t close = m.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return "socket";
  return m.substr(open + 1, close - open - 1);
}

}  // namespace

Worker::Worker(WorkerConfig config)
    : config_(std::move(config)),
      conns_(static_cast<size_t>(config_.connections)),
      read_buffer_(kReadBufferBytes) {}

Status Worker::run() {
  auto created = net::EventLoop::create();
  if (!created) return created.status();
  net::EventLoop loop = std::move(created).value();
  loop_ = &loop;
  // Wake-ups on time matter more than the kernel's default 50 us of timer coalescing.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  const core::ClockSource& clock = *config_.clock;
  const core::Nanos tick = timeout_tick(config_.timeout);
  const core::Nanos cpu_start = core::thread_cpu_time();
  const core::Nanos wait_start = core::thread_runqueue_wait();
  const TimePoint wall_start = clock.now();
  TimePoint now = wall_start;
  in_system_since_ = now;

  if (open_loop()) {
    for (uint32_t i = static_cast<uint32_t>(conns_.size()); i-- > 0;) closed_.push_back(i);
  } else {
    for (uint32_t i = 0; i < conns_.size(); ++i) open(i, now);
  }

  std::array<epoll_event, 256> events{};
  TimePoint next_tick = now + tick;
  TimePoint next_publish = now;  // live figures (config_.live), between events
  const bool intervals = config_.interval.count() > 0;
  if (intervals) {
    interval_hist_.emplace(core::Histogram::for_latency());
    interval_end_ = config_.phases.measure_from + config_.interval;
  }
  TimePoint grace_until = config_.phases.measure_until + config_.phases.grace;
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
    if (open_loop()) release_due(now);
    if (!stopping_ && now >= config_.phases.measure_until) begin_stopping(now);
    if (open_loop()) dispatch_backlog(now);
    if (stopping_) {
      if (in_flight_ == 0 && backlog_.empty()) break;
      if (now >= grace_until) {
        abort_all();
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
    while (intervals && interval_end_ < config_.phases.measure_until && now >= interval_end_) {
      flush_interval();
      interval_end_ += config_.interval;
    }
    retries_.pop_due(now, [&](Retry r) {
      Connection& c = conns_[r.index];
      if (c.generation != r.generation || c.state != ConnState::kClosed || stopping_) return;
      if (open_loop()) {
        closed_.push_back(r.index);
      } else {
        open(r.index, now);
      }
    });

    TimePoint deadline = next_tick;
    if (intervals && interval_end_ < config_.phases.measure_until) {
      deadline = std::min(deadline, interval_end_);
    }
    if (auto t = retries_.next_deadline()) deadline = std::min(deadline, *t);
    deadline = std::min(deadline, stopping_ ? grace_until : config_.phases.measure_until);
    bool spinning = false;
    if (open_loop() && !stopping_) {
      const TimePoint next_send = config_.phases.start + core::Nanos(config_.schedule->next_ns());
      // Nothing is sent at or after the end of the phase, so that arrival sets no deadline.
      if (next_send < config_.phases.measure_until) {
        const TimePoint wake = next_send - config_.spin;
        if (config_.spin.count() > 0 && now >= wake) {
          spinning = true;  // poll without sleeping until the send is due
          deadline = now;
        } else {
          deadline = std::min(deadline, wake);
        }
      }
    }
    auto n = loop.wait(events, deadline);
    if (!n) {
      status = n.status();
      break;
    }
    if (spinning && *n == 0) {
      spin_since = now;  // an empty poll: the time until the next iteration was spent waiting
    } else if (*n == 0) {
      TimePoint woke = clock.now();
      if (woke >= deadline) stats_.loop_lag_ns.record(core::elapsed_ns(deadline, woke));
    }
    for (int k = 0; k < *n; ++k) {
      const epoll_event& e = events[static_cast<size_t>(k)];
      on_event(static_cast<uint32_t>(e.data.u64), e.events);
    }
  }
  for (uint32_t i = 0; i < conns_.size(); ++i) close(i);
  change_in_system(clock.now(), 0);
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

// Open loop: moves every arrival whose intended time has come into the backlog.
void Worker::release_due(TimePoint now) {
  ArrivalSchedule& schedule = *config_.schedule;
  while (true) {
    TimePoint intended = config_.phases.start + core::Nanos(schedule.next_ns());
    if (intended > now || intended >= config_.phases.measure_until) break;
    bool measured = intended >= config_.phases.measure_from;
    if (measured) ++stats_.sent;
    backlog_.push_back(Due{intended, measured});
    change_in_system(intended, +1);
    schedule.advance();
  }
  stats_.max_backlog = std::max<uint64_t>(stats_.max_backlog, backlog_.size());
}

// Open loop: hands waiting requests to idle connections, opening new ones (up to the maximum)
// while more requests wait than connections are being opened.
void Worker::dispatch_backlog(TimePoint now) {
  while (!backlog_.empty()) {
    if (!idle_.empty()) {
      uint32_t i = idle_.back();
      idle_.pop_back();
      if (conns_[i].state != ConnState::kIdle) continue;  // closed while idle
      Due due = backlog_.front();
      backlog_.pop_front();
      start_request(i, now, due.intended_at, due.measured);
      continue;
    }
    if (backlog_.size() <= connecting_ || closed_.empty()) break;
    uint32_t i = closed_.back();
    closed_.pop_back();
    if (conns_[i].state != ConnState::kClosed) continue;
    open(i, now);
  }
}

void Worker::change_in_system(TimePoint now, int delta) {
  // Integrates the count over the measured phase only.
  TimePoint from = std::max(in_system_since_, config_.phases.measure_from);
  TimePoint to = std::min(now, config_.phases.measure_until);
  if (to > from && in_system_ > 0) {
    stats_.in_system_ns +=
        static_cast<double>(in_system_) * static_cast<double>(core::elapsed_ns(from, to));
  }
  if (now > in_system_since_) in_system_since_ = now;
  in_system_ += delta;
}

void Worker::open(uint32_t i, TimePoint now) {
  Connection& c = conns_[i];
  if (c.opened_before && now >= config_.phases.measure_from) ++stats_.reconnects;
  c.opened_before = true;
  auto fd = net::connect_nonblocking(config_.address);
  if (!fd) {
    // An immediate failure (e.g. no ephemeral ports left): count it and try again shortly.
    if (in_measured_phase(now)) stats_.count_error(ErrorKind::kConnect, errno_of(fd.status()));
    retries_.push(now + kConnectRetryDelay, Retry{i, c.generation});
    return;
  }
  c.fd = std::move(fd).value();
  c.state = ConnState::kConnecting;
  ++connecting_;
  c.sent_at = now;  // connect start, for the connect timeout
  c.write_armed = true;
  if (!loop_->add(c.fd.get(), EPOLLOUT, i)) {
    close(i);
    retries_.push(now + kConnectRetryDelay, Retry{i, c.generation});
  }
}

void Worker::on_event(uint32_t i, uint32_t events) {
  Connection& c = conns_[i];
  switch (c.state) {
    case ConnState::kConnecting:
      on_connected(i);
      break;
    case ConnState::kSending:
      if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) write_some(i);
      // A response can arrive before the request is fully written (early error responses).
      if (c.state == ConnState::kSending && (events & EPOLLIN)) read_some(i);
      break;
    case ConnState::kReceiving:
      read_some(i);
      break;
    case ConnState::kIdle: {
      // The server closed (or wrote to) a connection with nothing in flight: drop it quietly;
      // the next one opened counts as a reconnect.
      char b;
      ssize_t n = ::recv(c.fd.get(), &b, 1, MSG_PEEK);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || n > 0) {
        close(i);
        closed_.push_back(i);
      }
      break;
    }
    case ConnState::kClosed:
      break;
  }
}

void Worker::on_connected(uint32_t i) {
  Connection& c = conns_[i];
  TimePoint now = config_.clock->now();
  int err = net::connect_error(c.fd.get());
  if (err != 0) {
    if (in_measured_phase(now)) stats_.count_error(ErrorKind::kConnect, core::errno_name(err));
    close(i);
    if (!stopping_ || open_loop()) retries_.push(now + kConnectRetryDelay, Retry{i, c.generation});
    return;
  }
  --connecting_;
  if (open_loop()) {
    c.state = ConnState::kIdle;
    loop_->modify(c.fd.get(), EPOLLIN, i);
    c.write_armed = false;
    idle_.push_back(i);
    dispatch_backlog(now);
    return;
  }
  c.state = ConnState::kIdle;
  if (stopping_) {
    close(i);
    return;
  }
  start_request(i, now, now, in_measured_phase(now));
}

void Worker::start_request(uint32_t i, TimePoint now, TimePoint intended, bool measured) {
  Connection& c = conns_[i];
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
  c.intended_at = intended;
  c.sent_at = now;
  if (open_loop()) {
    if (measured) {
      core::Nanos lag = now - intended;
      stats_.send_lag_ns.record(lag.count());
      if (lag > kLateThreshold) ++stats_.late;
      if (now < config_.phases.measure_until) ++stats_.sent_in_phase;
    }
  } else if (measured) {
    ++stats_.sent;
  }
  c.state = ConnState::kSending;
  ++in_flight_;
  write_some(i);
}

void Worker::write_some(uint32_t i) {
  Connection& c = conns_[i];
  const std::string& bytes = *c.bytes;
  while (c.written < bytes.size()) {
    ssize_t n =
        ::send(c.fd.get(), bytes.data() + c.written, bytes.size() - c.written, MSG_NOSIGNAL);
    if (n > 0) {
      c.written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!c.write_armed) {
        loop_->modify(c.fd.get(), EPOLLIN | EPOLLOUT, i);
        c.write_armed = true;
      }
      return;
    }
    int err = n < 0 ? errno : EPIPE;
    fail_request(i, ErrorKind::kWrite, core::errno_name(err));
    return;
  }
  c.state = ConnState::kReceiving;
  if (c.write_armed) {
    loop_->modify(c.fd.get(), EPOLLIN, i);
    c.write_armed = false;
  }
}

void Worker::read_some(uint32_t i) {
  Connection& c = conns_[i];
  while (true) {
    ssize_t n = ::recv(c.fd.get(), read_buffer_.data(), read_buffer_.size(), 0);
    if (n > 0) {
      size_t len = static_cast<size_t>(n);
      size_t used = c.parser.feed(read_buffer_.data(), len);
      switch (c.parser.state()) {
        case http::ResponseParser::State::kComplete:
          // Bytes after a complete response were never asked for (one request in flight per
          // connection): the connection's framing can no longer be trusted, so it is not reused.
          complete_request(i, config_.clock->now(), /*can_reuse=*/used == len);
          return;
        case http::ResponseParser::State::kError:
          fail_request(i, ErrorKind::kParse, c.parser.error());
          return;
        case http::ResponseParser::State::kNeedMore:
          if (len < read_buffer_.size()) return;
          continue;
      }
    }
    if (n == 0) {
      bool any = c.parser.received_any();
      if (c.parser.on_eof() == http::ResponseParser::State::kComplete) {
        complete_request(i, config_.clock->now(), /*can_reuse=*/false);
        return;
      }
      fail_request(i, any ? ErrorKind::kEofMidResponse : ErrorKind::kClosedBeforeResponse, "EOF");
      return;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return;
    int err = errno;
    fail_request(i, c.parser.received_any() ? ErrorKind::kRead : ErrorKind::kClosedBeforeResponse,
                 core::errno_name(err));
    return;
  }
}

void Worker::complete_request(uint32_t i, TimePoint now, bool can_reuse) {
  Connection& c = conns_[i];
  const int code = c.parser.status_code();
  if (now - c.sent_at >= config_.timeout) {
    // Timeouts are swept on a tick, so a response can arrive after its timeout but before the
    // sweep: it is a timeout all the same, whatever arrived.
    fail_request(i, ErrorKind::kTimeout, "");
    return;
  }
  if (code < 400 && in_measured_phase(now)) ++stats_.ok_completed_in_phase;
  if (c.measured) {
    ++stats_.completed;
    stats_.count_status(code);
    if (code >= 400) {
      stats_.count_error(ErrorKind::kStatus, std::to_string(code));
    } else {
      const int64_t latency = core::elapsed_ns(c.intended_at, now);
      stats_.latency_ns.record(latency);
      if (interval_hist_) interval_hist_->record(latency);
      if (open_loop()) stats_.service_time_ns.record(core::elapsed_ns(c.sent_at, now));
    }
  } else {
    ++stats_.warmup_requests;
  }
  after_request(i, now, can_reuse && c.parser.keep_alive());
}

void Worker::fail_request(uint32_t i, ErrorKind kind, std::string_view cause) {
  Connection& c = conns_[i];
  if (c.measured) stats_.count_error(kind, cause);
  after_request(i, config_.clock->now(), /*can_reuse=*/false);
}

// The request on connection i has ended (completed or failed): reuse, replace or close it.
void Worker::after_request(uint32_t i, TimePoint now, bool can_reuse) {
  Connection& c = conns_[i];
  --in_flight_;
  if (open_loop()) change_in_system(now, -1);
  c.state = ConnState::kIdle;
  if (open_loop()) {
    if (!can_reuse) {
      close(i);
      closed_.push_back(i);
    } else {
      idle_.push_back(i);
    }
    dispatch_backlog(now);
    return;
  }
  if (stopping_) {
    close(i);
  } else if (!can_reuse) {
    reconnect(i, now);
  } else {
    start_request(i, now, now, in_measured_phase(now));
  }
}

void Worker::close(uint32_t i) {
  Connection& c = conns_[i];
  if (busy(c)) --in_flight_;  // only when closed without after_request (aborts)
  if (c.state == ConnState::kConnecting) --connecting_;
  if (c.fd.valid()) c.fd.reset();  // closing removes it from epoll
  c.state = ConnState::kClosed;
  c.write_armed = false;
  c.measured = false;
  ++c.generation;
}

void Worker::reconnect(uint32_t i, TimePoint now) {
  close(i);
  open(i, now);
}

void Worker::check_timeouts(TimePoint now) {
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    Connection& c = conns_[i];
    if (busy(c) && now - c.sent_at >= config_.timeout) {
      fail_request(i, ErrorKind::kTimeout, "");
    } else if (c.state == ConnState::kConnecting && now - c.sent_at >= config_.timeout) {
      if (in_measured_phase(now)) stats_.count_error(ErrorKind::kConnect, "timeout");
      close(i);
      if (open_loop()) {
        closed_.push_back(i);
      } else if (!stopping_) {
        open(i, now);
      }
    }
  }
}

void Worker::begin_stopping(TimePoint now) {
  stopping_ = true;
  if (open_loop()) return;  // connections still serve the backlog during the grace period
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    Connection& c = conns_[i];
    if (c.state == ConnState::kConnecting && now - c.sent_at >= kStalledConnect) {
      // A connect pending this long kept its connection out of the measurement (a lost SYN
      // waits 1 s for its retransmit): say so rather than let the slot vanish.
      stats_.count_error(ErrorKind::kConnect, "still connecting when the run ended");
    }
    if (c.state == ConnState::kClosed || c.state == ConnState::kConnecting ||
        c.state == ConnState::kIdle) {
      close(i);
    }
  }
}

void Worker::flush_interval() {
  IntervalCounts out;
  out.index = interval_index_++;
  interval_hist_->for_each_recorded(
      [&](int64_t lowest, int64_t, int64_t count) { out.counts.emplace_back(lowest, count); });
  intervals_.push_back(std::move(out));
  interval_hist_->reset();
}

// The grace period is over: whatever is still waiting or in flight is aborted.
void Worker::abort_all() {
  TimePoint now = config_.clock->now();
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    Connection& c = conns_[i];
    if (!busy(c)) continue;
    if (c.measured) ++stats_.aborted;
    if (open_loop()) change_in_system(now, -1);
    close(i);
  }
  for (const Due& due : backlog_) {
    if (due.measured) ++stats_.aborted;
    change_in_system(now, -1);
  }
  backlog_.clear();
}

}  // namespace knee::engine
