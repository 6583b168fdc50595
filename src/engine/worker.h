// Worker: one worker thread of a load run. It owns an event loop, a slice of the run's
// connections and the RunStats it records into; nothing on its hot path is shared.
//
// Closed loop: each connection cycles connect -> send -> receive -> send ... with exactly one
// request in flight, so the connections are the N of Little's law.
// Open loop: the worker's share of one global ArrivalSchedule releases requests at their intended
// send times into a FIFO backlog; idle connections (opened on demand up to the worker's maximum)
// take them in order. Latency runs from the intended time, so time spent waiting for a connection
// or for a late event loop is measured, not omitted; service time and send lag are recorded
// beside it.
//
// Failures are outcomes to count (RunStats::count_error) followed by a reconnect, never
// exceptions. Thread-safety: construct and run() on one thread; read stats() after run() returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/run_stats.h"
#include "core/status.h"
#include "engine/live.h"
#include "engine/schedule.h"
#include "http/request.h"
#include "http/response_parser.h"
#include "net/event_loop.h"
#include "net/socket.h"

namespace knee::engine {

// The time boundaries of a run, shared by every worker (see load.h).
struct Phases {
  core::TimePoint start;
  core::TimePoint measure_from;   // start + warmup
  core::TimePoint measure_until;  // measure_from + duration: nothing is sent after this
  core::Nanos grace{0};           // how long requests still in the system may finish
};

struct WorkerConfig {
  net::SocketAddress address;
  const http::RequestTemplate* request = nullptr;  // shared, read-only
  uint64_t first_connection = 0;  // global index of this worker's first connection ({conn})
  int connections = 1;            // closed loop: exactly this many; open loop: at most
  core::Nanos timeout{0};
  Phases phases;
  const core::ClockSource* clock = nullptr;
  const std::atomic<bool>* interrupt = nullptr;
  // Open loop when set: this worker's share of the global arrival schedule.
  std::optional<ArrivalSchedule> schedule;
  // Record per-interval latency histograms of this length (0: none).
  core::Nanos interval{0};
  // Open loop: busy-poll this long before each intended send (LoadOptions::spin).
  core::Nanos spin{0};
  // Where to publish live figures every kPublishEvery (engine/live.h); none when null.
  WorkerLive* live = nullptr;
};

// One worker's latency counts of one interval: (bucket's lowest value, count) pairs, compact
// because an interval touches few buckets. Folded across workers into core::LatencyInterval.
struct IntervalCounts {
  size_t index = 0;  // interval number from the measured phase's start
  std::vector<std::pair<int64_t, int64_t>> counts;
};

class Worker {
 public:
  explicit Worker(WorkerConfig config);

  // Drives the connections until the run ends. Errors: kIoError if the event loop cannot be
  // created or waited on; everything on the wire is counted in stats() instead.
  core::Status run();
  const core::RunStats& stats() const { return stats_; }
  const std::vector<IntervalCounts>& intervals() const { return intervals_; }
  bool interrupted() const { return interrupted_; }

 private:
  enum class ConnState : uint8_t { kClosed, kConnecting, kIdle, kSending, kReceiving };
  struct Connection {
    net::Fd fd;
    ConnState state = ConnState::kClosed;
    bool measured = false;     // the request in flight belongs to the measured phase
    bool write_armed = false;  // EPOLLOUT registered
    bool opened_before = false;
    uint32_t generation = 0;  // bumps on every close, so stale retry timers are ignored
    uint64_t seq = 0;         // per-connection request counter ({seq})
    size_t written = 0;
    core::TimePoint intended_at{};       // open loop: the schedule's time; closed loop: = sent_at
    core::TimePoint sent_at{};           // first byte written (or connect start while connecting)
    const std::string* bytes = nullptr;  // the request being written
    std::string rendered;                // its bytes when the template has placeholders
    http::ResponseParser parser;
  };
  struct Due {  // an open-loop request whose time has come, waiting for a connection
    core::TimePoint intended_at;
    bool measured;
  };
  struct Retry {
    uint32_t index;
    uint32_t generation;
  };

  bool open_loop() const { return config_.schedule.has_value(); }
  void open(uint32_t i, core::TimePoint now);
  void on_event(uint32_t i, uint32_t events);
  void on_connected(uint32_t i);
  void start_request(uint32_t i, core::TimePoint now, core::TimePoint intended, bool measured);
  void write_some(uint32_t i);
  void read_some(uint32_t i);
  void complete_request(uint32_t i, core::TimePoint now, bool can_reuse);
  void fail_request(uint32_t i, core::ErrorKind kind, std::string_view cause);
  void after_request(uint32_t i, core::TimePoint now, bool can_reuse);
  void close(uint32_t i);
  void reconnect(uint32_t i, core::TimePoint now);
  void check_timeouts(core::TimePoint now);
  void begin_stopping(core::TimePoint now);
  void release_due(core::TimePoint now);
  void dispatch_backlog(core::TimePoint now);
  void abort_all();
  void change_in_system(core::TimePoint now, int delta);
  void flush_interval();
  bool in_measured_phase(core::TimePoint t) const {
    return t >= config_.phases.measure_from && t < config_.phases.measure_until;
  }
  bool busy(const Connection& c) const {
    return c.state == ConnState::kSending || c.state == ConnState::kReceiving;
  }

  WorkerConfig config_;
  net::EventLoop* loop_ = nullptr;
  std::vector<Connection> conns_;
  net::TimerHeap<Retry> retries_;
  std::vector<char> read_buffer_;
  core::RunStats stats_;
  bool stopping_ = false;
  bool interrupted_ = false;
  size_t in_flight_ = 0;  // connections in kSending or kReceiving
  // Open loop state.
  std::deque<Due> backlog_;
  std::vector<uint32_t> idle_;    // connections in kIdle, most recently used last
  std::vector<uint32_t> closed_;  // slots free to open
  size_t connecting_ = 0;         // connections in kConnecting
  int64_t in_system_ = 0;         // requests waiting or in flight (all phases)
  // Interval histograms (config_.interval > 0).
  std::optional<core::Histogram> interval_hist_;
  size_t interval_index_ = 0;
  core::TimePoint interval_end_{};
  std::vector<IntervalCounts> intervals_;
  core::TimePoint in_system_since_{};
};

}  // namespace knee::engine
