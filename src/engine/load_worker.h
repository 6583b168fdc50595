// LoadWorker: one worker thread of a load run. It owns an event loop, a slice of the run's
// connections, a feeder (feeder.h) that decides when requests go out, and the RunStats it records
// into; nothing on its hot path is shared.
//
// The feeder sees lanes: a lane carries one request at a time, and each connection has
// `per_connection` of them (1; HTTP/1.1 pipelining's K; HTTP/2's streams S), so lane l rides
// connection l / per_connection and the run's concurrency is connections x per_connection. A
// connection is free -> connecting -> open ... -> closed; its lanes wait while it connects, are
// idle or busy while it is open, and are all freed when it closes. Bytes move through
// net::Transport made by the worker's net::WritePath (with --io uring a SendRing's, whose queued
// writes go to the kernel together before the loop waits); requests and responses are framed by
// knee's HTTP/1.1 parser (responses matched to requests in order) or by an http::H2Client
// (streams).
//
// The worker asks the feeder what to send (closed loop: the next request at once; open loop:
// the schedule's) and tells it when a lane becomes idle or free, always from the event loop,
// never from inside a call the feeder made. Latency runs from the intended send time the feeder
// gives, so time spent waiting for a connection or for a late event loop is measured, not
// omitted; service time and send lag are recorded beside it.
//
// Failures are outcomes to count (RunStats::count_error) followed by a reconnect, never
// exceptions: a connection that ends with requests unanswered counts each of them failed
// (pipelined ones behind the first as closed_before_response), except HTTP/2 requests its GOAWAY
// refused: never processed, they stay in flight and go out again on the next connection
// (Lane::resend), or fail as closed_before_response when that connection cannot be opened.
// Thread-safety: construct on any thread, run() on one; set_phases() from the run's thread while
// run() waits at the StartGate; read stats() after run() returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <latch>
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
#include "engine/mix.h"
#include "engine/schedule.h"
#include "engine/shipments.h"
#include "engine/spin_window.h"
#include "http/h2_client.h"
#include "http/request.h"
#include "http/response_parser.h"
#include "net/event_loop.h"
#include "net/socket.h"
#include "net/tls.h"
#include "net/transport.h"
#include "net/write_path.h"

namespace knee::engine {

// -n/--requests in closed loop: the measured requests still to send, shared by a run's workers,
// and the end of the measured phase once the last of them was sent (ns of the clock's epoch; 0
// while some are left). Each worker takes one before every measured send; the one that takes
// the last ends the phase for all: they adopt the end as their measure_until.
struct RequestBudget {
  std::atomic<int64_t> left{0};
  std::atomic<int64_t> end_ns{0};
};

// Holds a run's workers at the start line until each is ready to send, so that the phases begin
// when the first request can go out: building the workers (six 268 KiB histograms each, paged in
// as they are zeroed) and starting their threads took 6-8 ms on this host, and the open loop's
// first sends, due at the phases' start, were that late (regression: a gentle --stages 5s:20
// named the client saturated by its send lag). The run's thread waits until every worker has
// arrived, stamps the phases, hands them to each worker (LoadWorker::set_phases) and opens the
// gate; on any way out that did not open it (a thread that could not start, a hook that threw)
// it calls the run off, and the waiting workers return without sending.
// Thread-safety: arrive() and wait_to_start() from the workers, the rest from the run's thread;
// what the run's thread wrote before open() is visible to a worker once wait_to_start() returns.
class StartGate {
 public:
  explicit StartGate(std::ptrdiff_t workers) : ready_(workers) {}
  // A worker is ready, or has failed and will not wait (each worker arrives exactly once).
  void arrive() { ready_.count_down(); }
  // Blocks a worker that arrived until the gate opens (true) or the run is called off (false).
  bool wait_to_start() const {
    state_.wait(kClosed, std::memory_order_acquire);
    return state_.load(std::memory_order_acquire) == kOpen;
  }
  // Blocks the run's thread until every worker has arrived.
  void wait_ready() const { ready_.wait(); }
  void open() { settle(kOpen); }
  // No effect once open.
  void call_off() { settle(kCalledOff); }

 private:
  enum State : int { kClosed, kOpen, kCalledOff };
  void settle(State to) {
    int closed = kClosed;
    if (state_.compare_exchange_strong(closed, to, std::memory_order_acq_rel)) state_.notify_all();
  }
  std::latch ready_;
  std::atomic<int> state_{kClosed};
};

// The requests a run sends, compiled once and shared read-only by its workers: one per endpoint
// of a mix (one without), as HTTP/1.1 templates or, for HTTP/2, as H2Requests.
struct WorkerRequests {
  std::vector<http::RequestTemplate> h1;  // empty for HTTP/2
  std::vector<http::H2Request> h2;        // empty for HTTP/1.1
  // A mix's weights, one per endpoint: the worker keeps per-endpoint books (RunStats::endpoints);
  // empty without a mix.
  std::vector<double> weights;
  bool uses_shipment = false;  // some request holds {shipment}
};

struct WorkerConfig {
  net::SocketAddress address;
  // https: the run's TLS context (shared, read-only) and the name to verify and send as SNI;
  // null for http.
  const net::TlsContext* tls = nullptr;
  std::string server_name;
  // What to send; HTTP/2 (--h2 over TLS with ALPN h2, --h2c with prior knowledge) when it holds
  // H2Requests.
  const WorkerRequests* requests = nullptr;
  // {shipment}'s ids, from a picker of this seed.
  ShipmentDraw shipments;
  uint64_t shipment_seed = 1;
  // Requests in flight per connection: HTTP/1.1 pipelining depth or HTTP/2 streams, >= 1.
  int per_connection = 1;
  uint64_t first_connection = 0;  // global index of this worker's first slot ({conn})
  int connections = 1;  // closed loop exactly this many; open loop at most (x per_connection lanes)
  core::Nanos timeout{0};
  const core::ClockSource* clock = nullptr;
  const std::atomic<bool>* interrupt = nullptr;
  // Open loop when set: this worker's share of the global arrival schedule.
  std::optional<ArrivalSchedule> schedule;
  // Record per-interval latency histograms of this length (0: none), handed to `intervals` as
  // each ends.
  core::Nanos interval{0};
  IntervalQueue* intervals = nullptr;
  // Busy-poll this long before the feeder's next intended send (LoadOptions::spin); unset: as
  // long as the worker's SpinWindow says.
  std::optional<core::Nanos> spin;
  // Where to publish live figures every kPublishEvery (engine/live.h); none when null.
  WorkerLive* live = nullptr;
  // -n in closed loop: the run's shared budget of measured requests; null without -n.
  RequestBudget* budget = nullptr;
  // false: a new connection per request; closed-loop latency from the connect's start.
  bool keepalive = true;
  // How requests are written (LoadOptions::io); kUring is used only without `tls`.
  net::IoPath io = net::IoPath::kEpoll;
};

class LoadWorker final : public ConnectionPool, private http::H2Client::Listener {
 public:
  explicit LoadWorker(WorkerConfig config);
  ~LoadWorker() override;
  LoadWorker(const LoadWorker&) = delete;  // its feeder and counters refer to its phases
  LoadWorker& operator=(const LoadWorker&) = delete;

  // Makes its event loop (and with --io uring its send ring), arrives at the gate (also when that
  // fails) and waits there; once the gate opens, drives the connections through the phases given
  // to set_phases() until the run ends. Errors: kIoError if the event loop or the ring cannot be
  // created or waited on, or if the run was called off at the gate; everything on the wire is
  // counted in stats() instead.
  core::Status run(StartGate& gate);
  // The phases the run stamped once every worker was ready; call from the run's thread before it
  // opens the gate.
  void set_phases(const Phases& phases) { phases_ = phases; }
  const core::RunStats& result() const { return stats_; }
  bool interrupted() const { return interrupted_; }

  // ConnectionPool, for the feeder: its slots are lanes.
  uint32_t slots() const override { return static_cast<uint32_t>(lanes_.size()); }
  void open(uint32_t lane, core::TimePoint now) override;
  void send(uint32_t lane, core::TimePoint now, core::TimePoint intended, bool measured) override;
  void close(uint32_t lane) override;
  void close_unbusy(core::TimePoint now) override;
  InSystem& in_system() override { return in_system_; }
  core::RunStats& stats() override { return stats_; }

 private:
  enum class ConnState : uint8_t { kFree, kConnecting, kOpen, kDraining };
  enum class LaneState : uint8_t { kFree, kWaiting, kIdle, kBusy };
  struct Lane {
    LaneState state = LaneState::kFree;
    bool measured = false;    // the request in flight belongs to the measured phase
    bool queued = false;      // in notices_: the feeder hears of its state after the event
    bool retry_wait = false;  // free after a failed connect: the feeder hears after the delay
    uint64_t received = 0;    // bytes of its response read so far
    uint64_t body_bytes = 0;  // HTTP/2: the response body's bytes
    http::H2Client::Stream* stream = nullptr;  // HTTP/2: its stream while busy
    int32_t stream_id = 0;                     // and that stream's id
    // HTTP/2: in flight but on no stream: a GOAWAY refused it, so it goes out again on the
    // connection opened next (not counted in its Connection::busy meanwhile).
    bool resend = false;
    // When the last read that left the response incomplete happened (epoch: none yet).
    core::TimePoint partial_at{};
    core::TimePoint intended_at{};  // open loop: the schedule's time; closed loop: = sent_at
    core::TimePoint sent_at{};      // handed to the connection
    std::string rendered;           // HTTP/1.1: its bytes when the template has placeholders
    http::H2Request h2_rendered;    // HTTP/2: its fields when the request has placeholders
    uint32_t endpoint = 0;          // a mix's endpoint of the request in flight (0 without)
  };
  struct Segment {  // a run of Connection::out that belongs to measured requests or not
    size_t end;
    bool measured;
  };
  struct Connection {
    std::unique_ptr<net::Transport> transport;
    ConnState state = ConnState::kFree;
    bool write_armed = false;    // EPOLLOUT registered
    bool opened_before = false;  // this slot had an open connection before (a reconnect)
    uint32_t generation = 0;     // bumps on every close: stale events and retry timers are ignored
    uint32_t busy = 0;           // lanes with a request in flight
    uint32_t measured_busy = 0;
    uint64_t seq = 0;  // per-connection request counter ({seq})
    // The connection's TCP counters when it sent its first measured request; from then to its
    // close is this run's traffic (RunStats::tcp_retransmits).
    std::optional<net::TcpCounters> tcp_base;
    core::TimePoint connect_at{};        // connect() started
    core::TimePoint tcp_connected_at{};  // TCP established (epoch: not yet)
    std::string out;                     // bytes to write, from out_done on
    size_t out_done = 0;
    size_t out_counted = 0;  // of out, bytes already added to bytes_sent or passed over
    std::deque<Segment> segments;
    std::deque<uint32_t> awaiting;  // HTTP/1.1: lanes whose responses are due, in send order
    http::ResponseParser parser;    // HTTP/1.1: the response at awaiting.front()
    std::unique_ptr<http::H2Client> h2;
    bool unwritten = false;  // in unwritten_
  };

  bool h2() const { return !config_.requests->h2.empty(); }
  bool mix() const { return !config_.requests->weights.empty(); }
  // The endpoint's books for the lane's request (a mix only: check mix() first).
  core::EndpointStats& endpoint_of(uint32_t lane) {
    return stats_.endpoints[lanes_[lane].endpoint];
  }
  uint32_t conn_of(uint32_t lane) const {
    return lane / static_cast<uint32_t>(config_.per_connection);
  }
  uint32_t first_lane(uint32_t conn) const {
    return conn * static_cast<uint32_t>(config_.per_connection);
  }
  uint64_t tag(uint32_t conn) const { return net::EventTag{conn, conns_[conn].generation}.value(); }
  // The epoll interest for a connection. Over plain TCP edge-triggered, so the kernel does not
  // poll each ready socket a second time per wait as level-triggered epoll does (about 2 % of
  // the client's CPU per request against one nginx worker at 64 connections, none measurable at
  // 1,000; peers.sh, 2026-12-02): read_some stops at a short read, which empties the socket, and
  // every later arrival is a new edge. A peer's FIN already queued behind the data is no later
  // arrival, so EPOLLRDHUP is asked for and, when reported, read_some reads on to the end
  // (nginx's reading of EPOLLRDHUP). Over TLS level-triggered: a short read of plaintext can
  // leave a whole record in the socket.
  uint32_t interest(uint32_t events) const {
    return config_.tls != nullptr ? events : events | EPOLLET | EPOLLRDHUP;
  }
  void connect(uint32_t conn, core::TimePoint now);
  void on_event(uint64_t tag, uint32_t events);
  void on_connected(uint32_t conn);
  // The connection is ready for requests (HTTP/2: the server's SETTINGS arrived): its waiting
  // lanes become idle.
  void became_ready(uint32_t conn);
  void queue_bytes(Connection& c, std::string_view bytes, bool measured);
  void flush(uint32_t conn);
  // Drops the written front of c.out (at least 64 KiB, and half of it), shifting
  // out_done, out_counted and the segments' ends: `out` stays about the size of what is unwritten.
  void compact_out(Connection& c);
  // --io uring: the write path names a connection (its epoll tag) that has room again.
  void on_writable(uint64_t event_tag);
  // Requests were queued on `conn`: it is written once the feeder's sends of this pass are in.
  void write_later(uint32_t conn);
  // Reads what the socket holds and feeds it to the parser; until_closed: also past a short
  // read, to the EOF or error that the event reported.
  void read_some(uint32_t conn, bool until_closed);
  // HTTP/1.1: parses `data`; false when the connection was released meanwhile.
  bool parse_h1(uint32_t conn, const char* data, size_t size);
  void on_eof_h1(uint32_t conn);
  void after_h2_io(uint32_t conn);
  // The session's GOAWAY and SETTINGS into the run's figures, and a GOAWAY'd connection into
  // kDraining.
  void note_h2_session(uint32_t conn);
  // HTTP/2: whether the request on `lane` was refused by its connection's GOAWAY (its stream
  // above the last stream id): never processed, so sent again (RFC 9113 §8.7).
  bool refused_by_goaway(uint32_t conn, uint32_t lane) const;
  void resend_later(uint32_t lane);
  void resend_waiting(uint32_t conn);
  // H2Client::Listener.
  void on_response(uint32_t lane, int status, uint64_t body_bytes, uint64_t frame_bytes) override;
  void on_reset(uint32_t lane, uint32_t error_code, bool after_goaway,
                uint64_t frame_bytes) override;
  void complete_lane(uint32_t lane, core::TimePoint now, int status, uint64_t body_bytes);
  // A measured response completed at `now` after a silence since its previous part: counted
  // as split when the silence is the delayed-ACK stall's (RunStats::split_responses).
  void check_split(const Lane& l, core::TimePoint now);
  void fail_lane(uint32_t lane, core::ErrorKind kind, std::string_view cause);
  // Every request in flight on `conn` fails: the first (HTTP/1.1: the one being answered) as
  // `kind`, the rest as `rest_kind`; then the connection is released.
  void fail_connection(uint32_t conn, core::ErrorKind kind, std::string_view cause,
                       core::ErrorKind rest_kind, std::string_view rest_cause);
  // The request on `lane` leaves the books (in flight, in system, bytes); the lane is idle.
  void end_lane(uint32_t lane, core::TimePoint now);
  // Closes `conn`; its lanes become free and the feeder hears of each. `retry` when a connect
  // failed: the feeder hears after kConnectRetryDelay, and requests a GOAWAY refused that waited
  // for this connection fail as closed_before_response.
  void release(uint32_t conn, bool retry = false);
  void close_connection(uint32_t conn);  // closes the socket, keeps the lanes' states
  void notify(uint32_t lane);
  // Tells the feeder what became of the lanes noticed since the last call.
  void flush_notices();
  // The target answered (a connect or a response) at `now`.
  void saw_target(core::TimePoint now);
  void check_timeouts(core::TimePoint now);
  void begin_stopping(core::TimePoint now);
  // -n: another worker sent the last measured request; its end becomes this worker's too.
  void adopt_budget_end();
  void abort_all(core::TimePoint now);
  void flush_interval();

  WorkerConfig config_;
  // Set at the gate (set_phases); the feeder and in_system_ keep a reference. -n in closed loop
  // moves measure_until to the budget's end.
  Phases phases_;
  std::unique_ptr<Feeder> feeder_;
  std::optional<WeightedRoundRobin> picker_;       // a mix's endpoint for each send
  std::optional<ShipmentPicker> shipment_picker_;  // {shipment}'s ids
  net::EventLoop* loop_ = nullptr;
  // Makes the connections' transports and batches their writes under --io uring. Declared
  // before conns_: it must outlive their transports.
  net::WritePath write_path_;
  std::vector<Connection> conns_;
  std::vector<Lane> lanes_;
  std::vector<uint32_t> notices_;
  std::vector<uint32_t> unwritten_;  // connections with queued requests to write
  std::vector<uint32_t> writing_;    // those being written in this pass of flush_notices()
  struct Retry {
    uint32_t conn;
    uint32_t generation;
  };
  net::TimerHeap<Retry> retries_;
  std::vector<char> read_buffer_;
  net::TlsSessionCache tls_sessions_;  // the latest session, offered by the next connect
  core::RunStats stats_;
  InSystem in_system_;
  SpinWindow spin_window_;      // the busy-poll window before sends when config_.spin is unset
  core::TimePoint spun_for_{};  // the intended send the last busy-poll was for
  bool stopping_ = false;
  // After the measured phase, the last attempt to open a connection failed: what waits for
  // one is not waited for (the grace period's end comes early).
  bool opening_failed_while_stopping_ = false;
  bool interrupted_ = false;
  size_t in_flight_ = 0;           // lanes with a request in flight
  size_t measured_in_flight_ = 0;  // of those, requests of the measured phase
  // Interval histograms (config_.interval > 0).
  std::optional<core::Histogram> interval_hist_;
  size_t interval_index_ = 0;
  core::TimePoint interval_last_{};       // the last response recorded into interval_hist_
  uint64_t interval_errors_flushed_ = 0;  // stats_.total_errors() at the last interval's end
  core::TimePoint interval_end_{};
  // The client's CPU window (stats_.max_thread_cpu_demand_1s), with intervals only: opened when
  // the measured phase starts, closed and reopened at each interval boundary, closed for good
  // when the worker begins stopping.
  struct CpuWindow {
    enum State { kNotYet, kOpen, kDone } state = kNotYet;
    core::TimePoint start{};
    core::ThreadCpuReading from;
    int64_t pool_full_from_ns = 0;  // feeder_->pool_full_ns() when it opened
  };
  CpuWindow cpu_window_;
  void sample_cpu_window(core::TimePoint now, bool last);
};

}  // namespace knee::engine
