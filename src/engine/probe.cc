#include "engine/probe.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/run_stats.h"
#include "http/response_parser.h"
#include "net/socket.h"

namespace knee::engine {
namespace {

using core::ErrorKind;
using core::Result;
using core::Status;
using core::TimePoint;

constexpr size_t idx(ProbePhase p) { return static_cast<size_t>(p); }

// Milliseconds for poll(2) until `deadline`, rounded up so poll never wakes early; 0 when past.
int poll_ms(const core::ClockSource& clock, TimePoint deadline) {
  const int64_t left_ns = core::elapsed_ns(clock.now(), deadline);
  if (left_ns <= 0) return 0;
  return static_cast<int>(std::min<int64_t>((left_ns + 999'999) / 1'000'000, 1'000'000));
}

// Waits for `events` on fd until `deadline`. Returns the revents, 0 on timeout, -1 with errno on
// a poll failure other than EINTR.
int wait_for(int fd, short events, const core::ClockSource& clock, TimePoint deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, poll_ms(clock, deadline));
    if (rc > 0) return p.revents;
    if (rc == 0) {
      if (clock.now() >= deadline) return 0;
      continue;  // rounding: woke a hair before the deadline
    }
    if (errno != EINTR) return -1;
  }
}

// The errno name at the end of a Status message "... (ECONNREFUSED)", else the whole message.
std::string cause_of(const std::string& message) {
  const size_t open = message.rfind('(');
  if (!message.empty() && message.back() == ')' && open != std::string::npos) {
    return message.substr(open + 1, message.size() - open - 2);
  }
  return message;
}

// One probe run's state: the connection kept between attempts (with reuse) and the clock.
class Prober {
 public:
  Prober(const ProbeOptions& options, const core::ClockSource& clock)
      : options_(options), clock_(clock) {}

  Status compile() {
    auto t = http::RequestTemplate::compile(options_.request);
    if (!t) return t.status();
    request_ = std::move(t).value();
    return Status::ok();
  }

  // Runs attempt number `seq` (0-based). A Status only when the target cannot be reached on the
  // first attempt; everything else lands in the attempt.
  Result<ProbeAttempt> attempt(uint64_t seq) {
    ProbeAttempt a;
    a.at_ns.fill(kNotMeasured);
    const TimePoint start = clock_.now();
    const TimePoint deadline = start + options_.timeout;
    auto since_start = [&] { return core::elapsed_ns(start, clock_.now()); };
    auto fail = [&](ErrorKind kind, std::string cause) {
      a.ok = false;
      a.error_kind = std::string(core::error_kind_name(kind));
      a.error_cause = std::move(cause);
      fd_.reset();  // a failed exchange leaves the connection's framing unknown
      return a;
    };

    if (fd_.valid()) {
      // A kept connection the server closed while idle (keep-alive timeout) is readable with EOF
      // or an error: open a new one, as curl does, rather than count a failure.
      pollfd p{fd_.get(), POLLIN | POLLRDHUP, 0};
      if (::poll(&p, 1, 0) > 0) fd_.reset();
    }
    if (!fd_.valid()) {
      a.new_connection = true;
      const http::Url& url = options_.request.url;
      auto address = net::resolve(url.host, url.port);
      if (!address) {
        if (seq == 0) return unreachable(address.status().message());
        return fail(ErrorKind::kConnect, address.status().message());
      }
      a.at_ns[idx(ProbePhase::kNameLookup)] = since_start();
      if (address_.empty()) address_ = address->to_string();
      auto fd = net::connect_nonblocking(*address);
      if (!fd) {  // socket() failed, or connect() failed at once
        if (seq == 0) return unreachable(fd.status().message());
        return fail(ErrorKind::kConnect, cause_of(fd.status().message()));
      }
      ++connections_;
      const int revents = wait_for(fd->get(), POLLOUT, clock_, deadline);
      if (revents == 0) {
        if (seq == 0) {
          return unreachable(fmt::format("connect {}: no answer within --timeout {} ms",
                                         address->to_string(),
                                         options_.timeout.count() / 1'000'000));
        }
        return fail(ErrorKind::kTimeout, "connect");
      }
      const int err = revents < 0 ? errno : net::connect_error(fd->get());
      if (err != 0) {
        if (seq == 0) {
          return unreachable(Status::from_errno("connect " + address->to_string(), err).message());
        }
        return fail(ErrorKind::kConnect, core::errno_name(err));
      }
      a.at_ns[idx(ProbePhase::kConnect)] = since_start();
      fd_ = std::move(fd).value();
    }

    // The request: {conn} expands to the connection number (0-based), {seq} to the attempt's.
    request_.render(static_cast<uint64_t>(connections_ - 1), seq, wire_);
    parser_.reset(request_.is_head());
    a.at_ns[idx(ProbePhase::kPreTransfer)] = since_start();
    size_t written = 0;
    while (written < wire_.size()) {
      const ssize_t n =
          ::send(fd_.get(), wire_.data() + written, wire_.size() - written, MSG_NOSIGNAL);
      if (n > 0) {
        written += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        const int revents = wait_for(fd_.get(), POLLOUT, clock_, deadline);
        if (revents == 0) return fail(ErrorKind::kTimeout, "write");
        if (revents < 0) return fail(ErrorKind::kWrite, core::errno_name(errno));
        continue;
      }
      return fail(ErrorKind::kWrite, core::errno_name(n < 0 ? errno : EPIPE));
    }
    a.at_ns[idx(ProbePhase::kPostTransfer)] = since_start();

    char buf[16 * 1024];
    for (;;) {
      const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
      if (n > 0) {
        if (a.at(ProbePhase::kStartTransfer) == kNotMeasured) {
          a.at_ns[idx(ProbePhase::kStartTransfer)] = since_start();
        }
        const size_t len = static_cast<size_t>(n);
        const size_t used = parser_.feed(buf, len);
        if (parser_.state() == http::ResponseParser::State::kError) {
          a.status_code = parser_.status_code();
          return fail(ErrorKind::kParse, std::string(parser_.error()));
        }
        if (parser_.state() == http::ResponseParser::State::kComplete) {
          // Bytes after the response were never asked for: the connection is not reused.
          return complete(a, since_start(), used == len && parser_.keep_alive());
        }
        continue;
      }
      if (n == 0) {
        const bool any = parser_.received_any();
        if (parser_.on_eof() == http::ResponseParser::State::kComplete) {
          return complete(a, since_start(), false);
        }
        a.status_code = parser_.status_code();
        return fail(any ? ErrorKind::kEofMidResponse : ErrorKind::kClosedBeforeResponse, "EOF");
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        const int revents = wait_for(fd_.get(), POLLIN, clock_, deadline);
        if (revents == 0) {
          a.status_code = parser_.status_code();
          return fail(ErrorKind::kTimeout,
                      parser_.received_any() ? "response incomplete" : "no response byte");
        }
        if (revents < 0) return fail(ErrorKind::kRead, core::errno_name(errno));
        continue;  // readable, or an error/hang-up that recv will report
      }
      const int err = errno;
      return fail(parser_.received_any() ? ErrorKind::kRead : ErrorKind::kClosedBeforeResponse,
                  core::errno_name(err));
    }
  }

  int connections() const { return connections_; }
  const std::string& address() const { return address_; }

 private:
  // The first attempt could not resolve or connect: the probe cannot happen at all.
  Status unreachable(const std::string& why) const {
    return Status::unavailable(
        fmt::format("cannot reach {}: {}", options_.request.url.to_string(), why));
  }

  ProbeAttempt complete(ProbeAttempt& a, int64_t now_ns, bool keep) {
    a.at_ns[idx(ProbePhase::kTotal)] = now_ns;
    a.ok = true;
    a.status_code = parser_.status_code();
    a.body_bytes = parser_.body_bytes();
    if (!keep || !options_.reuse) fd_.reset();
    return a;
  }

  const ProbeOptions& options_;
  const core::ClockSource& clock_;
  http::RequestTemplate request_;
  http::ResponseParser parser_;
  net::Fd fd_;
  std::string wire_;
  std::string address_;
  int connections_ = 0;
};

ProbePhaseStats stats_of(const core::Histogram& at, const core::Histogram& phase) {
  ProbePhaseStats s;
  s.count = at.count();
  s.min_ns = at.min();
  s.median_ns = at.value_at_percentile(50);
  s.p99_ns = at.value_at_percentile(99);
  s.max_ns = at.max();
  s.phase_min_ns = phase.min();
  s.phase_median_ns = phase.value_at_percentile(50);
  s.phase_p99_ns = phase.value_at_percentile(99);
  return s;
}

}  // namespace

const char* probe_phase_key(ProbePhase p) {
  switch (p) {
    case ProbePhase::kNameLookup:
      return "namelookup";
    case ProbePhase::kConnect:
      return "connect";
    case ProbePhase::kAppConnect:
      return "appconnect";
    case ProbePhase::kPreTransfer:
      return "pretransfer";
    case ProbePhase::kPostTransfer:
      return "posttransfer";
    case ProbePhase::kStartTransfer:
      return "starttransfer";
    case ProbePhase::kTotal:
      return "total";
  }
  return "?";
}

const char* probe_phase_curl_name(ProbePhase p) {
  switch (p) {
    case ProbePhase::kNameLookup:
      return "time_namelookup";
    case ProbePhase::kConnect:
      return "time_connect";
    case ProbePhase::kAppConnect:
      return "time_appconnect";
    case ProbePhase::kPreTransfer:
      return "time_pretransfer";
    case ProbePhase::kPostTransfer:
      return "time_posttransfer";
    case ProbePhase::kStartTransfer:
      return "time_starttransfer";
    case ProbePhase::kTotal:
      return "time_total";
  }
  return "?";
}

const char* probe_phase_words(ProbePhase p) {
  switch (p) {
    case ProbePhase::kNameLookup:
      return "DNS lookup";
    case ProbePhase::kConnect:
      return "TCP connect";
    case ProbePhase::kAppConnect:
      return "TLS handshake";
    case ProbePhase::kPreTransfer:
      return "ready to send";
    case ProbePhase::kPostTransfer:
      return "request sent";
    case ProbePhase::kStartTransfer:
      return "first byte";
    case ProbePhase::kTotal:
      return "complete";
  }
  return "?";
}

Status ProbeOptions::validate() const {
  if (request.url.scheme == "https") {
    return Status::invalid_argument("https is not supported yet: knee has no TLS; use http://");
  }
  if (request.url.scheme != "http") {
    return Status::invalid_argument(
        fmt::format("URL {}: only http:// is supported", request.url.to_string()));
  }
  if (count < 1 || count > 100'000) {
    return Status::invalid_argument(
        fmt::format("-n/--count: {} attempts; give a count from 1 to 100000", count));
  }
  if (timeout.count() <= 0) {
    return Status::invalid_argument("--timeout: give a duration > 0, like 5s or 500ms");
  }
  return Status::ok();
}

int64_t ProbeAttempt::phase_ns(ProbePhase p) const {
  const int64_t end = at(p);
  if (end == kNotMeasured) return kNotMeasured;
  for (size_t i = idx(p); i-- > 0;) {
    if (at_ns[i] != kNotMeasured) return end - at_ns[i];
  }
  return end;
}

std::array<ProbePhaseStats, kProbePhaseCount> summarise_probe(
    const std::vector<ProbeAttempt>& attempts) {
  std::array<ProbePhaseStats, kProbePhaseCount> out{};
  core::Histogram at = core::Histogram::for_latency();
  core::Histogram phase = core::Histogram::for_latency();
  for (size_t i = 0; i < kProbePhaseCount; ++i) {
    at.reset();
    phase.reset();
    const auto p = static_cast<ProbePhase>(i);
    for (const ProbeAttempt& a : attempts) {
      if (!a.ok || a.at(p) == kNotMeasured) continue;
      at.record(std::max<int64_t>(0, a.at(p)));
      phase.record(std::max<int64_t>(0, a.phase_ns(p)));
    }
    out[i] = stats_of(at, phase);
  }
  return out;
}

Result<ProbeResult> run_probe(const ProbeOptions& options, const core::ClockSource& clock) {
  if (Status s = options.validate(); !s) return s;
  Prober prober(options, clock);
  if (Status s = prober.compile(); !s) return s;
  ProbeResult r;
  r.attempts.reserve(static_cast<size_t>(options.count));
  for (int k = 0; k < options.count; ++k) {
    auto a = prober.attempt(static_cast<uint64_t>(k));
    if (!a) return a.status();
    if (a->ok) {
      ++r.ok;
      ++r.status[a->status_code];
    } else {
      ++r.failed;
      ++r.errors[a->error_kind + ": " + a->error_cause];
    }
    r.attempts.push_back(std::move(a).value());
  }
  r.address = prober.address();
  r.connections = prober.connections();
  r.phases = summarise_probe(r.attempts);
  return r;
}

}  // namespace knee::engine
