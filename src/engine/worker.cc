#include "engine/closed_loop.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>

namespace knee::engine {

using core::ErrorKind;
using core::Status;
using core::TimePoint;

namespace {

constexpr size_t kReadBufferBytes = 64 * 1024;
constexpr auto kConnectRetryDelay = std::chrono::milliseconds(10);

// How often in-flight requests are checked against the timeout: a tenth of it, 1..100 ms.
core::Nanos timeout_tick(core::Nanos timeout) {
  return std::clamp<core::Nanos>(timeout / 10, std::chrono::milliseconds(1),
                                 std::chrono::milliseconds(100));
}

}  // namespace

ClosedLoopWorker::ClosedLoopWorker(WorkerConfig config)
    : config_(std::move(config)),
      conns_(static_cast<size_t>(config_.connections)),
      read_buffer_(kReadBufferBytes) {}

size_t ClosedLoopWorker::in_flight() const {
  return static_cast<size_t>(std::count_if(conns_.begin(), conns_.end(), [](const Connection& c) {
    return c.state == ConnState::kSending || c.state == ConnState::kReceiving;
  }));
}

Status ClosedLoopWorker::run() {
  auto created = net::EventLoop::create();
  if (!created) return created.status();
  net::EventLoop loop = std::move(created).value();
  loop_ = &loop;
  const core::ClockSource& clock = *config_.clock;
  const core::Nanos tick = timeout_tick(config_.timeout);
  const core::Nanos cpu_start = core::thread_cpu_time();

  const TimePoint wall_start = clock.now();
  TimePoint now = wall_start;
  for (uint32_t i = 0; i < conns_.size(); ++i) open(i, now);

  std::array<epoll_event, 256> events{};
  TimePoint next_tick = now + tick;
  TimePoint grace_until = config_.phases.measure_until + config_.phases.grace;
  Status status;
  while (true) {
    now = clock.now();
    if (!stopping_ && config_.interrupt != nullptr &&
        config_.interrupt->load(std::memory_order_relaxed)) {
      interrupted_ = true;
      grace_until = now;
      begin_stopping(now);
    }
    if (!stopping_ && now >= config_.phases.measure_until) begin_stopping(now);
    if (stopping_) {
      if (in_flight() == 0) break;
      if (now >= grace_until) {
        for (uint32_t i = 0; i < conns_.size(); ++i) {
          Connection& c = conns_[i];
          if (c.state != ConnState::kSending && c.state != ConnState::kReceiving) continue;
          if (c.measured) ++stats_.aborted;
          close(i);
        }
        break;
      }
    }
    if (now >= next_tick) {
      check_timeouts(now);
      next_tick = now + tick;
    }
    retries_.pop_due(now, [&](Retry r) {
      Connection& c = conns_[r.index];
      if (c.generation == r.generation && c.state == ConnState::kClosed && !stopping_) {
        open(r.index, now);
      }
    });

    TimePoint deadline = next_tick;
    if (auto t = retries_.next_deadline()) deadline = std::min(deadline, *t);
    deadline = std::min(deadline, stopping_ ? grace_until : config_.phases.measure_until);
    auto n = loop.wait(events, deadline);
    if (!n) {
      status = n.status();
      break;
    }
    for (int k = 0; k < *n; ++k) {
      const epoll_event& e = events[static_cast<size_t>(k)];
      on_event(static_cast<uint32_t>(e.data.u64), e.events);
    }
  }
  for (uint32_t i = 0; i < conns_.size(); ++i) close(i);
  stats_.client_cpu_ns = (core::thread_cpu_time() - cpu_start).count();
  stats_.client_wall_ns = core::elapsed_ns(wall_start, clock.now());
  loop_ = nullptr;
  return status;
}

void ClosedLoopWorker::open(uint32_t i, TimePoint now) {
  Connection& c = conns_[i];
  if (c.opened_before && now >= config_.phases.measure_from) ++stats_.reconnects;
  c.opened_before = true;
  auto fd = net::connect_nonblocking(config_.address);
  if (!fd) {
    // An immediate failure (e.g. no ephemeral ports left): count it and try again shortly.
    if (in_measured_phase(now)) stats_.count_error(ErrorKind::kConnect, "socket");
    retries_.push(now + kConnectRetryDelay, Retry{i, c.generation});
    return;
  }
  c.fd = std::move(fd).value();
  c.state = ConnState::kConnecting;
  c.sent_at = now;  // connect start, for the connect timeout
  c.write_armed = true;
  if (!loop_->add(c.fd.get(), EPOLLOUT, i)) {
    close(i);
    retries_.push(now + kConnectRetryDelay, Retry{i, c.generation});
  }
}

void ClosedLoopWorker::on_event(uint32_t i, uint32_t events) {
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
    case ConnState::kClosed:
      break;
  }
}

void ClosedLoopWorker::on_connected(uint32_t i) {
  Connection& c = conns_[i];
  TimePoint now = config_.clock->now();
  int err = net::connect_error(c.fd.get());
  if (err != 0) {
    if (in_measured_phase(now)) stats_.count_error(ErrorKind::kConnect, core::errno_name(err));
    close(i);
    if (!stopping_) retries_.push(now + kConnectRetryDelay, Retry{i, c.generation});
    return;
  }
  if (stopping_) {
    close(i);
    return;
  }
  start_request(i, now);
}

void ClosedLoopWorker::start_request(uint32_t i, TimePoint now) {
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
  c.measured = in_measured_phase(now);
  if (c.measured) ++stats_.sent;
  c.sent_at = now;
  c.state = ConnState::kSending;
  write_some(i);
}

void ClosedLoopWorker::write_some(uint32_t i) {
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

void ClosedLoopWorker::read_some(uint32_t i) {
  Connection& c = conns_[i];
  while (true) {
    ssize_t n = ::recv(c.fd.get(), read_buffer_.data(), read_buffer_.size(), 0);
    if (n > 0) {
      size_t len = static_cast<size_t>(n);
      size_t used = c.parser.feed(read_buffer_.data(), len);
      switch (c.parser.state()) {
        case http::ResponseParser::State::kComplete: {
          // Bytes after a complete response in a closed loop were never asked for: the
          // connection's framing can no longer be trusted, so it is not reused.
          complete_request(i, config_.clock->now(), /*can_reuse=*/used == len);
          return;
        }
        case http::ResponseParser::State::kError:
          fail_request(i, ErrorKind::kParse, c.parser.error());
          return;
        case http::ResponseParser::State::kNeedMore:
          if (len < read_buffer_.size()) return;
          continue;
      }
    }
    if (n == 0) {
      if (c.state == ConnState::kReceiving || c.state == ConnState::kSending) {
        bool any = c.parser.received_any();
        if (c.parser.on_eof() == http::ResponseParser::State::kComplete) {
          complete_request(i, config_.clock->now(), /*can_reuse=*/false);
          return;
        }
        fail_request(i, any ? ErrorKind::kEofMidResponse : ErrorKind::kClosedBeforeResponse, "EOF");
      }
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

void ClosedLoopWorker::complete_request(uint32_t i, TimePoint now, bool can_reuse) {
  Connection& c = conns_[i];
  const int code = c.parser.status_code();
  if (c.measured) {
    ++stats_.completed;
    stats_.count_status(code);
    if (code >= 400) {
      stats_.count_error(ErrorKind::kStatus, std::to_string(code));
    } else {
      stats_.latency_ns.record(core::elapsed_ns(c.sent_at, now));
    }
  } else {
    ++stats_.warmup_requests;
  }
  if (stopping_) {
    close(i);
    return;
  }
  if (!can_reuse || !c.parser.keep_alive()) {
    reconnect(i, now);
    return;
  }
  start_request(i, now);
}

void ClosedLoopWorker::fail_request(uint32_t i, ErrorKind kind, std::string_view cause) {
  Connection& c = conns_[i];
  if (c.measured) stats_.count_error(kind, cause);
  close(i);
  if (!stopping_) reconnect(i, config_.clock->now());
}

void ClosedLoopWorker::close(uint32_t i) {
  Connection& c = conns_[i];
  if (c.fd.valid()) c.fd.reset();  // closing removes it from epoll
  c.state = ConnState::kClosed;
  c.write_armed = false;
  c.measured = false;
  ++c.generation;
}

void ClosedLoopWorker::reconnect(uint32_t i, TimePoint now) {
  close(i);
  open(i, now);
}

void ClosedLoopWorker::check_timeouts(TimePoint now) {
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    Connection& c = conns_[i];
    if ((c.state == ConnState::kSending || c.state == ConnState::kReceiving) &&
        now - c.sent_at >= config_.timeout) {
      fail_request(i, ErrorKind::kTimeout, "");
    } else if (c.state == ConnState::kConnecting && now - c.sent_at >= config_.timeout) {
      if (in_measured_phase(now)) stats_.count_error(ErrorKind::kConnect, "timeout");
      reconnect(i, now);
    }
  }
}

void ClosedLoopWorker::begin_stopping(TimePoint now) {
  (void)now;
  stopping_ = true;
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    Connection& c = conns_[i];
    if (c.state == ConnState::kClosed || c.state == ConnState::kConnecting) close(i);
  }
}

}  // namespace knee::engine
