#include "engine/request_phases.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "core/run_stats.h"
#include "http/response_parser.h"
#include "net/socket.h"
#include "net/transport.h"

namespace knee::engine {
namespace {

using core::ErrorKind;
using core::Result;
using core::Status;
using core::TimePoint;

constexpr size_t idx(RequestPhase p) { return static_cast<size_t>(p); }

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

// One measurement's state: the connection kept between attempts (with reuse) and the clock.
class PhaseTimer {
 public:
  PhaseTimer(const RequestPhasesOptions& options, const core::ClockSource& clock)
      : options_(options), clock_(clock) {}

  Status compile() {
    auto t = http::RequestTemplate::compile(options_.request);
    if (!t) return t.status();
    request_ = std::move(t).value();
    return Status::success();
  }

  // Runs attempt number `seq` (0-based). A Status only when the target cannot be reached on the
  // first attempt; everything else lands in the attempt.
  Result<RequestAttempt> attempt(uint64_t seq) {
    RequestAttempt a;
    a.at_ns.fill(kNotMeasured);
    const TimePoint start = clock_.now();
    const TimePoint deadline = start + options_.timeout;
    auto since_start = [&] { return core::elapsed_ns(start, clock_.now()); };
    auto fail = [&](ErrorKind kind, std::string cause) {
      a.ok = false;
      a.error_kind = std::string(core::error_kind_name(kind));
      a.error_cause = std::move(cause);
      conn_.reset();  // a failed exchange leaves the connection's framing unknown
      return a;
    };

    if (conn_) {
      // A kept connection the server closed while idle (keep-alive timeout) is readable with EOF
      // or an error: open a new one, as curl does, rather than count a failure.
      pollfd p{conn_->fd(), POLLIN | POLLRDHUP, 0};
      if (::poll(&p, 1, 0) > 0) conn_.reset();
    }
    if (!conn_) {
      a.new_connection = true;
      const http::Url& url = options_.request.url;
      auto address = net::resolve(url.host, url.port);
      if (!address) {
        if (seq == 0) return unreachable(address.status().message());
        return fail(ErrorKind::kConnect, address.status().message());
      }
      a.at_ns[idx(RequestPhase::kNameLookup)] = since_start();
      if (address_.empty()) address_ = address->to_string();
      auto fd = net::connect_tcp(*address);
      if (!fd) {  // socket() failed, or connect() failed at once
        if (seq == 0) return unreachable(fd.status().message());
        const int err = fd.status().os_error();
        return fail(ErrorKind::kConnect, err != 0 ? core::errno_name(err) : fd.status().message());
      }
      ++connections_;
      std::unique_ptr<net::Transport> transport;
      if (tls_) {
        auto t = net::TlsTransport::create(std::move(fd).value(), *tls_, url.host, &sessions_);
        if (!t) return t.status();
        transport = std::move(t).value();
      } else {
        transport = std::make_unique<net::TcpTransport>(std::move(fd).value());
      }
      const int revents = wait_for(transport->fd(), POLLOUT, clock_, deadline);
      if (revents == 0) {
        if (seq == 0) {
          return unreachable(fmt::format("connect {}: no answer within --timeout {} ms",
                                         address->to_string(),
                                         options_.timeout.count() / 1'000'000));
        }
        return fail(ErrorKind::kTimeout, "connect");
      }
      // TCP is up once the socket is writable without a pending error; stamped before the
      // TLS handshake, which the first finish_connect() call may run most of.
      const int err = revents < 0 ? errno : net::connect_error(transport->fd());
      if (err != 0) {
        if (seq == 0) {
          return unreachable(Status::from_errno("connect " + address->to_string(), err).message());
        }
        return fail(ErrorKind::kConnect, core::errno_name(err));
      }
      a.at_ns[idx(RequestPhase::kConnect)] = since_start();
      net::IoResult connected = transport->finish_connect();
      if (tls_) {
        // The handshake, one readiness wait at a time, within the attempt's deadline.
        while (connected.status == net::IoStatus::kWouldBlock) {
          const int ready =
              wait_for(transport->fd(), connected.wants_write ? POLLOUT : POLLIN, clock_, deadline);
          if (ready == 0) {
            if (seq == 0) return unreachable("TLS handshake: no answer within --timeout");
            return fail(ErrorKind::kTimeout, "TLS handshake");
          }
          connected = transport->finish_connect();
        }
        if (connected.status != net::IoStatus::kDone) {
          const std::string why = transport->error_text().empty()
                                      ? core::errno_name(connected.error)
                                      : transport->error_text();
          if (seq == 0) return unreachable(why);
          return fail(ErrorKind::kTls, why);
        }
        a.at_ns[idx(RequestPhase::kAppConnect)] = since_start();
        const net::TlsInfo& info = *transport->tls();
        if (tls_version_.empty()) {
          tls_version_ = info.version;
          tls_cipher_ = info.cipher;
          alpn_ = info.alpn;
        }
        if (info.resumed) ++tls_resumed_;
      }
      conn_ = std::move(transport);
    }

    // The request: {conn} expands to the connection number (0-based), {seq} to the attempt's.
    request_.render(static_cast<uint64_t>(connections_ - 1), seq, wire_);
    parser_.reset(request_.is_head());
    a.at_ns[idx(RequestPhase::kPreTransfer)] = since_start();
    size_t written = 0;
    while (written < wire_.size()) {
      const net::IoResult w = conn_->send_some(std::string_view(wire_).substr(written));
      if (w.status == net::IoStatus::kDone) {
        written += w.bytes;
        continue;
      }
      if (w.status == net::IoStatus::kWouldBlock) {
        const int revents = wait_for(conn_->fd(), POLLOUT, clock_, deadline);
        if (revents == 0) return fail(ErrorKind::kTimeout, "write");
        if (revents < 0) return fail(ErrorKind::kWrite, core::errno_name(errno));
        continue;
      }
      return fail(ErrorKind::kWrite, net::failure_cause(*conn_, w.error != 0 ? w.error : EPIPE));
    }
    a.at_ns[idx(RequestPhase::kPostTransfer)] = since_start();

    char buf[16 * 1024];
    for (;;) {
      const net::IoResult r = conn_->recv_some(buf);
      if (r.status == net::IoStatus::kDone) {
        if (a.at(RequestPhase::kStartTransfer) == kNotMeasured) {
          a.at_ns[idx(RequestPhase::kStartTransfer)] = since_start();
        }
        const size_t len = r.bytes;
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
      if (r.status == net::IoStatus::kClosed) {
        const bool any = parser_.received_any();
        const bool in_body = parser_.in_body();  // before on_eof() settles the state
        if (parser_.on_eof() == http::ResponseParser::State::kComplete) {
          return complete(a, since_start(), false);
        }
        a.status_code = parser_.status_code();
        if (!any) return fail(ErrorKind::kClosedBeforeResponse, "EOF");
        return fail(in_body ? ErrorKind::kEofMidBody : ErrorKind::kEofMidHeaders, "EOF");
      }
      if (r.status == net::IoStatus::kWouldBlock) {
        const int revents = wait_for(conn_->fd(), POLLIN, clock_, deadline);
        if (revents == 0) {
          a.status_code = parser_.status_code();
          return fail(ErrorKind::kTimeout,
                      parser_.received_any() ? "response incomplete" : "no response byte");
        }
        if (revents < 0) return fail(ErrorKind::kRead, core::errno_name(errno));
        continue;  // readable, or an error/hang-up that recv will report
      }
      return fail(parser_.received_any() ? ErrorKind::kRead : ErrorKind::kClosedBeforeResponse,
                  net::failure_cause(*conn_, r.error));
    }
  }

  int connections() const { return connections_; }
  const std::string& address() const { return address_; }
  // https: the context every attempt's handshake uses (set before the first attempt).
  void use_tls(std::shared_ptr<const net::TlsContext> tls) { tls_ = std::move(tls); }
  void tls_into(core::RequestPhasesResult& r) const {
    r.tls_version = tls_version_;
    r.tls_cipher = tls_cipher_;
    r.alpn = alpn_;
    r.tls_resumed = tls_resumed_;
  }

 private:
  // The first attempt could not resolve or connect: nothing can be measured.
  Status unreachable(const std::string& why) const {
    return Status::unavailable(
        fmt::format("cannot reach {}: {}", options_.request.url.to_string(), why));
  }

  RequestAttempt complete(RequestAttempt& a, int64_t now_ns, bool keep) {
    a.at_ns[idx(RequestPhase::kTotal)] = now_ns;
    a.ok = true;
    a.status_code = parser_.status_code();
    a.body_bytes = parser_.body_bytes();
    if (!keep || !options_.reuse) conn_.reset();
    return a;
  }

  const RequestPhasesOptions& options_;
  const core::ClockSource& clock_;
  http::RequestTemplate request_;
  http::ResponseParser parser_;
  std::unique_ptr<net::Transport> conn_;  // the connection kept between attempts (reuse)
  std::string wire_;
  std::string address_;
  int connections_ = 0;
  std::shared_ptr<const net::TlsContext> tls_;
  net::TlsSessionCache sessions_;
  std::string tls_version_, tls_cipher_, alpn_;
  int tls_resumed_ = 0;
};

}  // namespace

Status RequestPhasesOptions::validate() const {
  if (request.url.scheme != "http" && request.url.scheme != "https") {
    return Status::invalid_field(
        "url", fmt::format("{}: knee speaks http:// and https://", request.url.to_string()));
  }
  if (count < 1 || count > 100'000) {
    return Status::invalid_field("count",
                                 fmt::format("{} attempts; give a count from 1 to 100000", count));
  }
  if (timeout.count() <= 0) {
    return Status::invalid_field("timeout", "give a duration > 0, like 5s or 500ms");
  }
  return Status::success();
}

Result<RequestPhasesResult> measure_request_phases(const RequestPhasesOptions& options,
                                                   const core::ClockSource& clock) {
  if (Status s = options.validate(); !s) return s;
  PhaseTimer timer(options, clock);
  if (Status s = timer.compile(); !s) return s;
  if (options.request.url.scheme == "https") {
    net::TlsOptions tls_options = options.tls;
    // Like run's: ALPN offers HTTP/1.1, so the probe sees what a run will agree on.
    if (tls_options.alpn.empty()) tls_options.alpn = {"http/1.1"};
    auto tls = net::TlsContext::create(tls_options);
    if (!tls) return tls.status();
    timer.use_tls(std::move(tls).value());
  }
  RequestPhasesResult r;
  r.attempts.reserve(static_cast<size_t>(options.count));
  for (int k = 0; k < options.count; ++k) {
    auto a = timer.attempt(static_cast<uint64_t>(k));
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
  r.address = timer.address();
  r.connections = timer.connections();
  r.phases = summarise_attempts(r.attempts);
  timer.tls_into(r);
  return r;
}

}  // namespace knee::engine
