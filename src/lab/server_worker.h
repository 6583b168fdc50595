// ServerWorker: one event-loop thread of the lab server: it owns an SO_REUSEPORT listener, the
// connections it accepted, their timers, and its counters. LabServer creates the workers, runs each
// on its own thread, and stops them through ServerShared::stop plus wake().
//
// Connections live in slots that are reused (their buffers with them, so a steady load allocates
// nothing per request); bytes move through net::Transport. Epoll tags and timer entries carry a
// net::EventTag (slot, generation); a slot's generation changes when its connection closes, so
// late events and timers for a closed connection are recognised and ignored.
//
// Thread-safety: run() on one thread; wake() from any thread. Counters are written by their
// worker only (relaxed load + store) and read by any worker with relaxed loads for /health.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "lab/lab_server.h"
#include "lab/metrics.h"
#include "lab/response.h"
#include "lab/shipment_service.h"
#include "net/event_loop.h"
#include "net/socket.h"
#include "net/transport.h"
#include "net/write_path.h"

namespace knee::http {
struct RequestHead;
}

namespace knee::lab {

// One worker's counters, on a cache line of their own.
struct alignas(64) WorkerCounters {
  std::atomic<uint64_t> total_requests{0};   // requests parsed and routed since start
  std::atomic<int64_t> in_flight{0};         // routed requests whose response is not yet queued
  std::atomic<uint64_t> refused{0};          // connections over max_connections, answered 503
  std::atomic<uint64_t> header_timeouts{0};  // requests answered 408 (header_timeout)
  std::atomic<uint64_t> idle_closed{0};      // connections closed by idle_timeout
};

// What the workers share: written before the threads start, except `stop` and the counters.
struct ServerShared {
  ServerOptions options;
  core::TimePoint started;
  std::atomic<bool> stop{false};
  std::unique_ptr<WorkerCounters[]> counters;  // one per worker, indexed like the workers
  std::unique_ptr<WorkerMetrics[]> metrics;    // /metrics' figures, one per worker likewise
  int workers = 0;
  ShipmentService* service = nullptr;  // owned by LabServer; null without --state
  int max_connections = 0;             // options.max_connections, or the one derived from ulimit
  // Socket connections open over all workers (HTTP/2 streams are not connections), for the
  // limit: each worker counts its accepts up and its closes down.
  mutable std::atomic<int64_t> open_connections{0};
};

struct Connection;
struct H2Handler;

class ServerWorker {
 public:
  // Creates the worker's event loop and registers `listener` (which it then owns). `index`
  // selects its counters in `shared`. Errors: kIoError from epoll.
  // With net::IoPath::kUring (and no TLS) also its io_uring: kIoError from
  // io_uring_setup, field "io", when the kernel has none or forbids it (ENOSYS, EPERM).
  static core::Result<std::unique_ptr<ServerWorker>> create(const ServerShared& shared, int index,
                                                            net::Fd listener);
  ~ServerWorker();
  ServerWorker(const ServerWorker&) = delete;
  ServerWorker& operator=(const ServerWorker&) = delete;

  // Serves until shared.stop is set, then drains. Returns true after a clean drain; false when
  // the drain timed out with requests in flight (they were cut off) or epoll failed.
  bool run();

  // Makes run() notice shared.stop promptly. Safe from any thread.
  void wake() { loop_.wake(); }

  // Why run() stopped serving before it was asked to (epoll_pwait2's or io_uring_enter's
  // kIoError); ok otherwise. Read after run() returned.
  const core::Status& failure() const { return failure_; }

 private:
  enum class Step : uint8_t { kNeedBytes, kProgress };

  ServerWorker(const ServerShared& shared, int index, net::EventLoop loop, net::Fd listener,
               net::WritePath write_path);

  std::optional<core::TimePoint> next_deadline() const;
  // --io uring: the write path names a connection (its epoll tag) that has room to write again.
  void on_writable(uint64_t tag);
  // Whether c still has response bytes to write: in c.out, or queued in its transport.
  static bool writing(const Connection& c);
  void dispatch(const epoll_event& event);
  void accept_all();
  void pause_accepting();
  void open_connection(net::Fd fd);  // an accepted socket
  void close_connection(Connection& c);
  void start_closing(Connection& c);
  void linger(Connection& c);
  void drive(Connection& c);
  bool flush(Connection& c);
  Step serve_buffered(Connection& c);
  void handle(Connection& c, const http::RequestHead& head, std::string_view body = {});
  // The shipment service's routes: GET /tracking/{no} (cache or store), POST /events (store).
  void handle_shipment(Connection& c, const http::RequestHead& head, std::string_view no,
                       ConnectionMode mode, bool is_head);
  void handle_event(Connection& c, const http::RequestHead& head, std::string_view body,
                    ConnectionMode mode);
  void handle_billing(Connection& c, const http::RequestHead& head, std::string_view query,
                      ConnectionMode mode);
  // The replies the store threads sent since the last call, each to its waiting connection.
  void take_replies();
  // A JSON error body {"error": reason} with `status`.
  void respond_error(Connection& c, int status, std::string_view reason, ConnectionMode mode);
  // Parks `c` (state kWaiting, Pending::kStore) until a store thread's reply for it arrives.
  void park_for_store(Connection& c, const http::RequestHead& head, bool is_head);
  // Counts the request `c` is answering (once: its route, `status`, time since its parse).
  void observe(Connection& c, int status);
  // GET /metrics: the request figures of every worker, then the service's.
  void respond_metrics(Connection& c, ConnectionMode mode, bool head_only);
  void finish_pending(Connection& c);
  void respond_fixed(Connection& c, const FixedResponse& r, ConnectionMode mode, bool head_only);
  void respond(Connection& c, int status, ConnectionMode mode, bool head_only);
  ConnectionMode mode_for(bool keep_alive, int minor_version) const;
  void on_timer(net::EventTag ref);
  // Over max_connections: answers 503 on the accepted socket (a TLS one is closed without a word:
  // no handshake is spent on a refusal) and closes it.
  void refuse(net::Fd fd);
  // Closes connections past header_timeout (408 first when a head had begun) or idle_timeout;
  // runs every limit_check_period().
  void check_limits();
  // The connection's read buffer: from the worker's spares, or a new one.
  void acquire_buffer(Connection& c);
  // Gives the buffer back to the spares (at most kMaxSpareBuffers are kept); bytes still in it
  // are dropped, so callers release only an empty buffer or one whose bytes are done with.
  void release_buffer(Connection& c);
  void begin_drain();
  void close_idle();
  void force_close_all();
  void count_request();
  // An error answer that closes: counted in /metrics as route "other", timed from now.
  void reject(Connection& c, const FixedResponse& r);
  // burn_thread_cpu(cpu), then loop_now_ catches up with the time it took.
  void burn(core::Nanos cpu);
  // Adds one to a counter of this worker (single writer: a load and a store, no locked RMW).
  static void bump(std::atomic<uint64_t>& counter);
  void add_in_flight(int64_t delta);
  uint32_t take_slot();
  // HTTP/2 (h2 by ALPN, or h2c when a connection opens with the client preface): the
  // connection's session, then each request on a stream slot of its own (no socket) that the
  // HTTP/1.1 endpoints answer as usual; its response goes back to the stream.
  void start_h2(Connection& c);
  void drive_h2(Connection& c);
  void on_h2_request(uint32_t slot, int32_t stream_id, std::string_view method,
                     std::string_view path, size_t field_bytes, uint64_t body_bytes);
  void on_h2_stream_closed(uint32_t slot, int32_t stream_id);
  // Hands a stream slot's response to its connection's session and frees the slot; returns the
  // connection to write it on, or null when that connection has gone.
  Connection* forward_stream(Connection& stream);
  friend struct H2Handler;

  const ServerShared& shared_;
  WorkerCounters& counters_;
  WorkerMetrics& metrics_;
  net::EventLoop loop_;
  ReplyQueue replies_;                   // from the shipment service's store threads
  std::vector<StoreReply> reply_batch_;  // scratch for take_replies()
  net::Fd listener_;
  // Makes the connections' transports; under --io uring (ServerOptions::io) batches their
  // responses. Before slots_, so that it outlives the transports it made.
  net::WritePath write_path_;
  core::Status failure_;                          // failure()
  bool accepting_ = true;                         // listener registered with the loop
  std::optional<core::TimePoint> accept_resume_;  // after EMFILE and friends
  std::vector<std::unique_ptr<Connection>> slots_;
  std::vector<uint32_t> free_slots_;
  size_t live_ = 0;  // connections not free
  net::TimerHeap<net::EventTag> timers_;
  core::TimePoint loop_now_{};    // Clock::now() when the loop's last wait returned
  core::TimePoint next_check_{};  // check_limits() is due then
  core::Nanos check_period_{};    // limit_check_period(options)
  std::vector<std::unique_ptr<char[]>> spare_buffers_;
  bool draining_ = false;
  core::TimePoint drain_deadline_{};
  core::TimePoint drain_idle_deadline_{};  // idle connections close then (drain_idle)
  bool idle_closed_ = false;               // they were
  bool cut_off_ = false;                   // the drain timed out with requests in flight
  HttpDate date_;
  std::string body_;  // scratch for bodies formatted per request
  std::string instance_json_;
  FixedResponse fast_;
  FixedResponse not_found_;
  FixedResponse method_not_allowed_;
  FixedResponse bad_ms_;
  FixedResponse bad_stall_;
  FixedResponse bad_request_;
  FixedResponse uri_too_long_;
  FixedResponse fields_too_large_;
  FixedResponse not_implemented_;
  FixedResponse version_not_supported_;
  FixedResponse no_service_;
  FixedResponse events_method_;
  FixedResponse body_too_large_;
  FixedResponse request_timeout_;       // 408
  FixedResponse request_too_large_;     // 413 over max_body_bytes
  FixedResponse too_many_connections_;  // 503, for refuse()
  FixedResponse h2_post_;
};

}  // namespace knee::lab
