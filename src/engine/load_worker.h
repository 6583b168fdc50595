// LoadWorker: one worker thread of a load run. It owns an event loop, a slice of the run's
// connection slots, a feeder (feeder.h) that decides when requests go out, and the RunStats it
// records into; nothing on its hot path is shared.
//
// The worker is the connection state machine: free -> connecting -> idle -> sending ->
// receiving -> idle ... or closed. Bytes move through net::Transport. It asks the feeder what to
// send (closed loop: the next request at once; open loop: the schedule's), and tells it when a
// slot becomes idle or free. Latency runs from the intended send time the feeder gives, so time
// spent waiting for a connection or for a late event loop is measured, not omitted; service time
// and send lag are recorded beside it.
//
// Failures are outcomes to count (RunStats::count_error) followed by a reconnect, never
// exceptions. Thread-safety: construct and run() on one thread; read stats() after run() returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/run_stats.h"
#include "core/status.h"
#include "engine/feeder.h"
#include "engine/intervals.h"
#include "engine/live.h"
#include "engine/schedule.h"
#include "http/request.h"
#include "http/response_parser.h"
#include "net/event_loop.h"
#include "net/socket.h"
#include "net/tls.h"
#include "net/transport.h"

namespace knee::engine {

// -n/--requests in closed loop: the measured requests still to send, shared by a run's workers,
// and the end of the measured phase once the last of them was sent (ns of the clock's epoch; 0
// while some are left). Each worker takes one before every measured send; the one that takes
// the last ends the phase for all: they adopt the end as their measure_until.
struct RequestBudget {
  std::atomic<int64_t> left{0};
  std::atomic<int64_t> end_ns{0};
};

struct WorkerConfig {
  net::SocketAddress address;
  // https: the run's TLS context (shared, read-only) and the name to verify and send as SNI;
  // null for http.
  const net::TlsContext* tls = nullptr;
  std::string server_name;
  const http::RequestTemplate* request = nullptr;  // shared, read-only
  uint64_t first_connection = 0;  // global index of this worker's first slot ({conn})
  int connections = 1;            // slots: closed loop exactly this many; open loop at most
  core::Nanos timeout{0};
  Phases phases;
  const core::ClockSource* clock = nullptr;
  const std::atomic<bool>* interrupt = nullptr;
  // Open loop when set: this worker's share of the global arrival schedule.
  std::optional<ArrivalSchedule> schedule;
  // Record per-interval latency histograms of this length (0: none), handed to `intervals` as
  // each ends.
  core::Nanos interval{0};
  IntervalQueue* intervals = nullptr;
  // Busy-poll this long before the feeder's next intended send (LoadOptions::spin).
  core::Nanos spin{0};
  // Where to publish live figures every kPublishEvery (engine/live.h); none when null.
  WorkerLive* live = nullptr;
  // -n in closed loop: the run's shared budget of measured requests; null without -n.
  RequestBudget* budget = nullptr;
  // false: a new connection per request; closed-loop latency from the connect's start.
  bool keepalive = true;
};

class LoadWorker final : public ConnectionPool {
 public:
  explicit LoadWorker(WorkerConfig config);
  ~LoadWorker() override;
  LoadWorker(const LoadWorker&) = delete;  // its feeder and counters refer to its phases
  LoadWorker& operator=(const LoadWorker&) = delete;

  // Drives the connections until the run ends. Errors: kIoError if the event loop cannot be
  // created or waited on; everything on the wire is counted in stats() instead.
  core::Status run();
  const core::RunStats& result() const { return stats_; }
  bool interrupted() const { return interrupted_; }

  // ConnectionPool, for the feeder.
  uint32_t slots() const override { return static_cast<uint32_t>(conns_.size()); }
  void open(uint32_t slot, core::TimePoint now) override;
  void send(uint32_t slot, core::TimePoint now, core::TimePoint intended, bool measured) override;
  void close(uint32_t slot) override;
  void close_unbusy(core::TimePoint now) override;
  InSystem& in_system() override { return in_system_; }
  core::RunStats& stats() override { return stats_; }

 private:
  enum class ConnState : uint8_t { kFree, kConnecting, kIdle, kSending, kReceiving };
  struct Connection {
    std::unique_ptr<net::Transport> transport;
    ConnState state = ConnState::kFree;
    bool measured = false;     // the request in flight belongs to the measured phase
    bool write_armed = false;  // EPOLLOUT registered
    bool opened_before = false;
    uint32_t generation = 0;  // bumps on every close: stale events and retry timers are ignored
    uint64_t seq = 0;         // per-connection request counter ({seq})
    size_t written = 0;
    uint64_t received = 0;  // bytes read for the request in flight
    // When the last read that left the response incomplete happened (epoch: none yet).
    core::TimePoint partial_at{};
    // The connection's TCP counters when it sent its first measured request; from then to its
    // close is this run's traffic (RunStats::tcp_retransmits).
    std::optional<net::TcpCounters> tcp_base;
    core::TimePoint intended_at{};       // open loop: the schedule's time; closed loop: = sent_at
    core::TimePoint sent_at{};           // first byte written (or connect start while connecting)
    core::TimePoint tcp_connected_at{};  // while connecting: TCP established (epoch: not yet)
    const std::string* bytes = nullptr;  // the request being written
    std::string rendered;                // its bytes when the template has placeholders
    http::ResponseParser parser;
  };

  bool busy(const Connection& c) const {
    return c.state == ConnState::kSending || c.state == ConnState::kReceiving;
  }
  uint64_t tag(uint32_t slot) const { return net::EventTag{slot, conns_[slot].generation}.value(); }
  void on_event(uint64_t tag, uint32_t events);
  void on_connected(uint32_t i);
  void write_some(uint32_t i);
  void read_some(uint32_t i);
  void complete_request(uint32_t i, core::TimePoint now, bool can_reuse);
  // A measured response completed at `now` after a silence since its previous part: counted
  // as split when the silence is the delayed-ACK stall's (RunStats::split_responses).
  void check_split(const Connection& c, core::TimePoint now);
  void fail_request(uint32_t i, core::ErrorKind kind, std::string_view cause);
  void end_request(uint32_t i, core::TimePoint now, bool can_reuse);
  // The request on slot i leaves the books: bytes, and a warm-up request ending after the
  // measured phase began is counted as carried over.
  void settle(Connection& c, core::TimePoint now);
  void drop(uint32_t i);  // closes slot i and reports it free at once
  // The target answered (a connect or a response) at `now`.
  void saw_target(core::TimePoint now);
  void retry_later(uint32_t i, core::TimePoint now);
  void check_timeouts(core::TimePoint now);
  void begin_stopping(core::TimePoint now);
  // -n: another worker sent the last measured request; its end becomes this worker's too.
  void adopt_budget_end();
  void abort_all(core::TimePoint now);
  void flush_interval();

  WorkerConfig config_;
  std::unique_ptr<Feeder> feeder_;
  net::EventLoop* loop_ = nullptr;
  std::vector<Connection> conns_;
  struct Retry {
    uint32_t slot;
    uint32_t generation;
  };
  net::TimerHeap<Retry> retries_;
  std::vector<char> read_buffer_;
  net::TlsSessionCache tls_sessions_;  // the latest session, offered by the next connect
  core::RunStats stats_;
  InSystem in_system_;
  bool stopping_ = false;
  bool interrupted_ = false;
  size_t in_flight_ = 0;           // slots in kSending or kReceiving
  size_t measured_in_flight_ = 0;  // of those, requests of the measured phase
  // Interval histograms (config_.interval > 0).
  std::optional<core::Histogram> interval_hist_;
  size_t interval_index_ = 0;
  core::TimePoint interval_end_{};
};

}  // namespace knee::engine
