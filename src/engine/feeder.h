// Feeders: the half of a load worker that decides when a request goes out. The other half, the
// connection state machine (load_worker.h), connects, writes, reads, parses, times out and
// closes; it tells the feeder when a slot becomes idle or free and asks it when to wake.
//
//   ClosedLoopFeeder  one request per connection, the next as soon as the previous ends: the
//                     connections are the N of Little's law. Every slot is opened at the start and
//                     re-opened when it closes.
//   OpenLoopFeeder    the worker's share of one arrival schedule (schedule.h) releases requests at
//                     their intended send times into a FIFO backlog, whatever the server does;
//                     idle connections take them in order, and connections are opened on demand
//                     up to the pool's cap, at most kMaxOpening at a time. A request waits in the
//                     backlog (and its latency runs) while no connection is free.
//
// A slot is a lane: one request at a time. With HTTP/1.1 pipelining or HTTP/2 streams a
// connection carries several lanes (load_worker.h), so the closed loop's N is its slots, and the
// open loop opens a lane on a connection already open at once, without a connect.
//
// Phases (load.h): a request belongs to the measured phase by its send time in closed loop and
// by its intended send time in open loop; nothing is sent or scheduled at or after the end of the
// measured phase; while stopping, what is in flight may finish within the grace period.
//
// Thread-safety: a feeder belongs to its worker's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/run_stats.h"
#include "engine/schedule.h"

namespace knee::engine {

// The time boundaries of a run, shared by every worker (see load.h).
struct Phases {
  core::TimePoint start;
  core::TimePoint measure_from;   // start + warmup
  core::TimePoint measure_until;  // measure_from + duration: nothing is sent after this
  core::Nanos grace{0};           // how long requests still in the system may finish

  bool measured(core::TimePoint t) const { return t >= measure_from && t < measure_until; }
};

// The number of requests in the system (waiting for a connection, or in flight) integrated over
// the measured phase: divided by the phase's length it is Little's L, measured directly.
class InSystem {
 public:
  // `published_end`: with -n across threads, the phase's end (ns since the clock's epoch, 0 until
  // then) that the worker sending the last request publishes; the integral stops there even
  // before this worker has adopted it into `phases`.
  explicit InSystem(const Phases& phases, const std::atomic<int64_t>* published_end = nullptr)
      : phases_(phases), published_end_(published_end) {}
  // `delta` requests enter (+) or leave (-) the system at `t`.
  void change(core::TimePoint t, int delta);
  int64_t count() const { return count_; }
  double integral_ns() const { return integral_ns_; }

 private:
  const Phases& phases_;
  const std::atomic<int64_t>* published_end_;
  int64_t count_ = 0;
  core::TimePoint since_{};
  double integral_ns_ = 0;
};

// What a feeder may ask of the connections it feeds. LoadWorker implements it; tests fake it.
class ConnectionPool {
 public:
  virtual ~ConnectionPool() = default;
  // Connection slots, 0..slots()-1.
  virtual uint32_t slots() const = 0;
  // Starts connecting a free slot; the pool reports on_idle() once connected, or on_free() when
  // the connect failed (after a short retry delay).
  virtual void open(uint32_t slot, core::TimePoint now) = 0;
  // Sends the next request on an idle slot: written from `now`, latency measured from
  // `intended`, counted in the measured phase when `measured`.
  virtual void send(uint32_t slot, core::TimePoint now, core::TimePoint intended,
                    bool measured) = 0;
  // Closes an idle slot (without reporting it free).
  virtual void close(uint32_t slot) = 0;
  // The run is ending: closes every slot without a request in flight.
  virtual void close_unbusy(core::TimePoint now) = 0;
  virtual InSystem& in_system() = 0;
  virtual core::RunStats& stats() = 0;
};

class Feeder {
 public:
  virtual ~Feeder() = default;
  // The run starts at `now`.
  virtual void start(ConnectionPool& pool, core::TimePoint now) = 0;
  // Once per loop iteration, before waiting: release what is due and hand it to idle slots.
  virtual void tick(ConnectionPool& pool, core::TimePoint now) = 0;
  // When the loop must wake for the feeder's next request (open loop: the next intended send);
  // nullopt when it waits only for the connections.
  virtual std::optional<core::TimePoint> next_send() const = 0;
  // Slot `slot` is connected with nothing in flight (just connected, or its response came and
  // the connection may carry another).
  virtual void on_idle(ConnectionPool& pool, uint32_t slot, core::TimePoint now) = 0;
  // Slot `slot` has no connection (it closed, or a connect failed and its retry delay is over).
  virtual void on_free(ConnectionPool& pool, uint32_t slot, core::TimePoint now) = 0;
  // The measured phase is over (or the run was interrupted): nothing new is sent.
  virtual void stop(ConnectionPool& pool, core::TimePoint now) = 0;
  // Nothing is waiting to be sent.
  virtual bool drained() const = 0;
  // The grace period is over: whatever still waits to be sent never will (counted never_sent).
  virtual void abort_waiting(ConnectionPool& pool, core::TimePoint now) = 0;
  // Time of the measured phase up to `now` in which every connection of the pool was busy or
  // connecting, ns (open loop; a closed loop's pool is its load, never exhausted: 0). Before
  // stop(): stop() hands it to RunStats::pool_full_ns.
  virtual int64_t pool_full_ns(core::TimePoint /*now*/) const { return 0; }
};

class ClosedLoopFeeder final : public Feeder {
 public:
  explicit ClosedLoopFeeder(const Phases& phases) : phases_(phases) {}
  void start(ConnectionPool& pool, core::TimePoint now) override;
  void tick(ConnectionPool&, core::TimePoint) override {}
  std::optional<core::TimePoint> next_send() const override { return std::nullopt; }
  void on_idle(ConnectionPool& pool, uint32_t slot, core::TimePoint now) override;
  void on_free(ConnectionPool& pool, uint32_t slot, core::TimePoint now) override;
  void stop(ConnectionPool& pool, core::TimePoint now) override;
  bool drained() const override { return true; }
  void abort_waiting(ConnectionPool&, core::TimePoint) override {}

 private:
  const Phases& phases_;
  bool stopping_ = false;
};

class OpenLoopFeeder final : public Feeder {
 public:
  // Connections being opened at once, at most, per worker. Without a bound a burst of arrivals
  // (the start of a run, a server pause) opens one connection per waiting request: over TLS
  // thousands of handshakes at once, which eat the server's CPU, slow every handshake, let the
  // backlog grow and open yet more (regression: -r 20000 over https opened 19904 connections
  // and completed nothing). Requests wait in the backlog meanwhile, their latency running.
  static constexpr size_t kMaxOpening = 16;
  // A send this much after its intended time is late (RunStats::late).
  static constexpr core::Nanos kLate = std::chrono::milliseconds(1);

  OpenLoopFeeder(const Phases& phases, ArrivalSchedule schedule)
      : phases_(phases), schedule_(std::move(schedule)) {}
  void start(ConnectionPool& pool, core::TimePoint now) override;
  void tick(ConnectionPool& pool, core::TimePoint now) override;
  std::optional<core::TimePoint> next_send() const override;
  void on_idle(ConnectionPool& pool, uint32_t slot, core::TimePoint now) override;
  void on_free(ConnectionPool& pool, uint32_t slot, core::TimePoint now) override;
  void stop(ConnectionPool& pool, core::TimePoint now) override;
  bool drained() const override { return backlog_.empty(); }
  void abort_waiting(ConnectionPool& pool, core::TimePoint now) override;
  int64_t pool_full_ns(core::TimePoint now) const override;

  size_t backlog() const { return backlog_.size(); }

 private:
  struct Due {  // a request whose time has come, waiting for a connection
    core::TimePoint intended;
    bool measured;
  };
  void release_due(ConnectionPool& pool, core::TimePoint now);
  void dispatch(ConnectionPool& pool, core::TimePoint now);

  enum class Slot : uint8_t { kFree, kOpening, kIdle, kBusy };

  const Phases& phases_;
  ArrivalSchedule schedule_;
  bool stopping_ = false;
  std::deque<Due> backlog_;
  std::vector<Slot> slot_;      // what each slot is doing, as this feeder knows it
  std::vector<uint32_t> idle_;  // slots that were idle when pushed, most recent last
  std::vector<uint32_t> free_;  // slots that were free when pushed
  size_t opening_ = 0;          // slots in kOpening
  size_t busy_ = 0;             // slots in kBusy
  // Since when every slot has been busy or connecting (the pool exhausted); nullopt while one is
  // idle or free.
  std::optional<core::TimePoint> full_since_;
  size_t idle_count_ = 0;  // slots in kIdle
  // Since when some connection has been idle in the client's hands (unset while none is): a
  // request due earlier waited for the server until then (a response, or a connect: regression,
  // the open loop's first send, which waits for its connection, counted as the client's
  // lateness "with connections free"), the rest of its lag is the client's.
  std::optional<core::TimePoint> idle_since_;
  int64_t full_ns_ = 0;  // exhausted time inside the measured phase so far
  // Moves slot i to `to` at `now`, keeping the counts and the exhausted time.
  void set_slot(uint32_t i, Slot to, core::TimePoint now);
  // The exhausted interval [full_since_, until) clipped to the measured phase, in ns (0 when
  // the pool is not exhausted or the interval lies outside the phase).
  int64_t full_stretch_ns(core::TimePoint until) const;
};

}  // namespace knee::engine
