// ClosedLoopWorker: one worker thread of a closed-loop run. It owns an event loop, a slice of
// the run's connections, and the RunStats it records into; nothing on its hot path is shared.
//
// Each connection cycles connect -> send -> receive -> send ... with exactly one request in
// flight. Failures are outcomes to count (RunStats::count_error) followed by a reconnect, never
// exceptions. Thread-safety: construct and run() on one thread; read stats() after run() returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/run_stats.h"
#include "core/status.h"
#include "http/request.h"
#include "http/response_parser.h"
#include "net/event_loop.h"
#include "net/socket.h"

namespace knee::engine {

// The time boundaries of a run, shared by every worker (see load.h).
struct Phases {
  core::TimePoint start;
  core::TimePoint measure_from;   // start + warmup
  core::TimePoint measure_until;  // measure_from + duration: no request is sent after this
  core::Nanos grace{0};           // how long in-flight requests may still finish
};

struct WorkerConfig {
  net::SocketAddress address;
  const http::RequestTemplate* request = nullptr;  // shared, read-only
  uint64_t first_connection = 0;  // global index of this worker's first connection ({conn})
  int connections = 1;
  core::Nanos timeout{0};
  Phases phases;
  const core::ClockSource* clock = nullptr;
  const std::atomic<bool>* interrupt = nullptr;
};

class ClosedLoopWorker {
 public:
  explicit ClosedLoopWorker(WorkerConfig config);

  // Drives the connections until the run ends. Errors: kIoError if the event loop cannot be
  // created or waited on; everything on the wire is counted in stats() instead.
  core::Status run();
  const core::RunStats& stats() const { return stats_; }
  bool interrupted() const { return interrupted_; }

 private:
  enum class ConnState : uint8_t { kClosed, kConnecting, kSending, kReceiving };
  struct Connection {
    net::Fd fd;
    ConnState state = ConnState::kClosed;
    bool measured = false;     // the request in flight was sent in the measured phase
    bool write_armed = false;  // EPOLLOUT registered
    bool opened_before = false;
    uint32_t generation = 0;  // bumps on every close, so stale retry timers are ignored
    uint64_t seq = 0;         // per-connection request counter ({seq})
    size_t written = 0;
    core::TimePoint sent_at{};
    const std::string* bytes = nullptr;  // the request being written
    std::string rendered;                // its bytes when the template has placeholders
    http::ResponseParser parser;
  };
  struct Retry {
    uint32_t index;
    uint32_t generation;
  };

  void open(uint32_t i, core::TimePoint now);
  void on_event(uint32_t i, uint32_t events);
  void on_connected(uint32_t i);
  void start_request(uint32_t i, core::TimePoint now);
  void write_some(uint32_t i);
  void read_some(uint32_t i);
  void complete_request(uint32_t i, core::TimePoint now, bool can_reuse);
  void fail_request(uint32_t i, core::ErrorKind kind, std::string_view cause);
  void close(uint32_t i);
  void reconnect(uint32_t i, core::TimePoint now);
  void check_timeouts(core::TimePoint now);
  void begin_stopping(core::TimePoint now);
  bool in_measured_phase(core::TimePoint t) const {
    return t >= config_.phases.measure_from && t < config_.phases.measure_until;
  }
  size_t in_flight() const;

  WorkerConfig config_;
  net::EventLoop* loop_ = nullptr;
  std::vector<Connection> conns_;
  net::TimerHeap<Retry> retries_;
  std::vector<char> read_buffer_;
  core::RunStats stats_;
  bool stopping_ = false;
  bool interrupted_ = false;
};

}  // namespace knee::engine
