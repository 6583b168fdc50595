// The lab server: the seeds' Node servers rebuilt as an HTTP/1.1 server knee can measure
// (`knee serve`, and the target `knee sweep` starts when given no URL).
//
// Endpoints (GET and HEAD but /events, which takes POST; other methods get 405 with "Allow";
// unknown paths 404):
//   /tracking?no=ID    waits `wait` on a timer (the loop stays free), then burns `cpu` of the
//                      thread's CPU time, then {"no":ID,"state":"at transit hub","zone":"35",
//                      "step":4}; no no= gives "-" (seed 000's tracking endpoint).
//   /fast              {"ok":true,"instance":NAME} at once.
//   /slow-async?ms=N   waits N ms on a timer, then {"ok":true,"mode":"async","ms":N,...}.
//   /slow-sync?ms=N    burns N ms of CPU on the loop thread, blocking every connection of that
//                      thread, then {"ok":true,"mode":"sync-blocking","ms":N,...} (seed 002).
//                      N defaults to 50; not a number in [0, 60000] -> 400, connection kept.
//   /health            {"status":"ok","instance":NAME,"uptimeSec":S,"inFlight":K,
//                      "totalRequests":T,"connections":{"open":O,"refused":F,
//                      "headerTimeouts":H,"idleClosed":I}}, summed over all threads (refused:
//                      over max_connections; headerTimeouts: the 408s; idleClosed: by
//                      idle_timeout); with the shipment service
//                      also "store" and "cache" objects (ShipmentService::append_health).
// With the shipment service (ServerOptions::service, `knee serve --state DIR`; lab/
// shipment_service.h), on a real store:
//   GET /tracking/{no} the shipment's latest state, {"no":..,"state":..,"zone":..,"step":N,
//                      "atMs":T}, from the read cache or the store; 404 for no such shipment.
//   POST /events       a JSON event (parse_event); 201 with the shipment's new state once it is
//                      durable; 400 with the reason for malformed JSON, a missing field or a
//                      Content-Type other than application/json; 404 for an unknown tracking
//                      number; 413 for a body over 16 KiB. HTTP/1.1 only (HTTP/2: 501).
//   POST /billing/run?date=D&method=row|set  the batch flow on a thread of its own (409 while
//                      one runs; 400 for a bad date or method).
//   Each answers 503 with the store's reason when the store fails.
// /metrics answers Prometheus's text exposition, with or without the service (lab/metrics.h).
// Without the service both
//   answer 404 saying how to start it.
// Protocol errors answer and close: 400 (malformed), 414, 431, 501 (Transfer-Encoding), 505.
// Limits (ServerOptions) answer and close too: 408 for a head slower than header_timeout, 413 for
// a body over max_body_bytes, 431 for a header section over max_header_bytes, and 503 at once for
// a connection over max_connections; idle connections close silently after idle_timeout.
//
// Shape: `threads` event-loop threads, each with its own SO_REUSEPORT listener on the same port,
// its own connections, timers and counters (nothing shared on the hot path). A connection's
// requests are answered in order, one at a time; keep-alive per HTTP/1.1 and HTTP/1.0 rules.
// Stopping closes the listeners, lets requests in flight finish (their responses say
// "Connection: close"), keeps idle keep-alive connections open for drain_idle so that a request
// a client (a balancer) sends on one meanwhile is answered, with "Connection: close", instead of
// meeting a close (the keep-alive race of RFC 9112 section 9.6), closes them then, and gives up
// after drain_timeout.
//
// Ownership: LabServer owns its sockets and threads; destroying it stops and joins them.
// Thread-safety: request_stop() may be called from any thread (and is safe enough for a signal
// handler: an atomic store and eventfd writes); start/address/wait from the owning thread.
// Nothing here prints or exits.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "http/request_parser.h"
#include "lab/shipment_service.h"
#include "net/send_ring.h"
#include "net/socket.h"
#include "net/tls.h"

namespace knee::lab {

// What the lab server does and where. Durations are std::chrono nanoseconds.
struct ServerOptions {
  std::string host = "127.0.0.1";  // name or address literal to bind
  int port = 0;                    // 0 picks an ephemeral port (see LabServer::address())
  int threads = 1;                 // event-loop threads, 1 to 1024
  std::string instance = "app1";   // the name /fast, /slow-* and /health report
  // /tracking's wait, a stand-in for a record lookup (seed 000: 3 ms), >= 0.
  core::Nanos wait = std::chrono::milliseconds(3);
  // /tracking's CPU share per request, in thread CPU time (seed 000: 0.20 ms), >= 0.
  core::Nanos cpu = std::chrono::microseconds(200);
  // CPU burnt on the event loop before answering any request but /health and /metrics, in
  // thread CPU time, >= 0: an uneven replica for the lab stack's balancing lesson (seed 002,
  // lesson 3), 0 for none.
  core::Nanos extra_cpu{0};
  // A fixed port may already have listeners of another knee serve (SO_REUSEPORT: the kernel
  // spreads connections over both): the handoff of a graceful rolling deploy. Off, such a port
  // is refused with EADDRINUSE, as a user expects.
  bool share_port = false;
  // How long a stop waits for requests in flight before cutting them off, >= 0.
  core::Nanos drain_timeout = std::chrono::seconds(5);
  // How long a stop keeps idle keep-alive connections open for a last request, >= 0 (0: close
  // them at once).
  core::Nanos drain_idle = std::chrono::milliseconds(500);
  // Limits against slow and abusive clients, checked every limit_check_period() (nginx's
  // client_header_timeout, keepalive_timeout, worker_connections, large_client_header_buffers and
  // client_max_body_size do the same jobs). A request's head and body must arrive within
  // header_timeout of its first byte, else 408 and close (a body being skipped after its answer:
  // close only); so must an HTTP/2 stream's request (else GOAWAY and close) and a TLS handshake
  // (else close). > 0.
  core::Nanos header_timeout = std::chrono::seconds(10);
  // A connection with no request under way closes after idle_timeout without a byte read; so does
  // one whose client reads none of its responses for that long. Longer than nginx's upstream
  // keepalive_timeout (60 s), so that a balancer in front closes its idle connections first,
  // never meeting the keep-alive race (RFC 9112 section 9.6). > 0.
  core::Nanos idle_timeout = std::chrono::seconds(75);
  // Connections open at once over all threads; one more is answered 503 (over TLS: closed) and
  // closed, counted in /health. 0: the open-file limit (raised to its hard limit at start) less
  // kReservedFds.
  int max_connections = 0;
  // Longest header section in bytes (field lines and the empty line); longer gets 431 and close.
  // HTTP/2: the fields as HPACK counts them (name + value + 32 each, RFC 9113 section 6.5.2).
  // 256 to http::kMaxHeaderSectionLimit.
  size_t max_header_bytes = http::kMaxHeaderSectionBytes;
  // Longest request body in bytes (Content-Length); longer gets 413 and close. /events reads at
  // most kMaxEventBody whatever this says. >= 0.
  uint64_t max_body_bytes = 1024 * 1024;
  // --tls: every connection speaks TLS first (a TlsContext::create_server() context), then the
  // same HTTP/1.1; null for cleartext.
  std::shared_ptr<const net::TlsContext> tls;
  // The shipment service on a real store (GET /tracking/{no}, POST /events); none when unset.
  std::optional<ServiceOptions> service;
  // How responses reach the sockets. kEpoll: each with a send(2) of its own. kUring: queued, and
  // all those of one loop iteration written in one io_uring_enter (net/send_ring.h), which saves
  // a system call per response. Reads and readiness are epoll's either way. Plain TCP only: with
  // `tls` set the TLS transport writes, as with kEpoll.
  net::IoPath io = net::IoPath::kEpoll;
};

// File descriptors kept for the server's own use (listeners, epoll, the store, logs) when
// max_connections is derived from the open-file limit.
inline constexpr int kReservedFds = 64;

// How often the workers look for connections past header_timeout or idle_timeout: a tenth of the
// shorter one, between 10 ms and 1 s. A timeout fires up to this much late.
core::Nanos limit_check_period(const ServerOptions& options);

class ServerWorker;
struct ServerShared;

class LabServer {
 public:
  // Validates the options, binds one listener per thread (the first on options.port, the others
  // on the port it got) and starts the threads. Errors: kInvalidArgument for bad options,
  // kUnavailable when the host does not resolve, kIoError naming the call and the OS error
  // ("bind 127.0.0.1:8080: Address already in use (EADDRINUSE)").
  static core::Result<std::unique_ptr<LabServer>> start(const ServerOptions& options);

  LabServer(const LabServer&) = delete;
  LabServer& operator=(const LabServer&) = delete;
  // Stops (request_stop) and joins if wait() was not called.
  ~LabServer();

  // The bound address, with the real port when options.port was 0.
  const net::SocketAddress& address() const { return address_; }

  // Asks every thread to stop and drain; returns at once. Idempotent.
  void request_stop();

  // Blocks until every thread has exited (after request_stop()). Returns 0 after a clean drain;
  // 1 when the drain timed out with requests still in flight (they were cut off) or a loop failed.
  // Later calls return the same value.
  int wait();

  // After wait(): the first event loop's failure (epoll_pwait2, io_uring_enter; kIoError with the
  // errno), ok when every loop ran until asked to stop.
  const core::Status& failure() const { return failure_; }

 private:
  LabServer();

  std::unique_ptr<ServerShared> shared_;
  net::SocketAddress address_;
  std::vector<std::unique_ptr<ServerWorker>> workers_;
  std::vector<std::thread> threads_;
  std::vector<char> clean_;  // per worker: 1 after a clean exit, set by its thread
  // Declared after workers_, so destroyed before them: its last replies go to their queues.
  std::unique_ptr<ShipmentService> service_;
  bool joined_ = false;
  int result_ = 0;
  core::Status failure_;
};

// `knee serve`: blocks SIGTERM and SIGINT (before any thread starts, so only this call receives
// them), starts the server, calls `on_listening` with its address, serves until one of the
// signals arrives, then drains. Returns true after a clean drain, false when requests in flight
// were cut off. Errors: those of LabServer::start, and an event loop's failure (failure()).
core::Result<bool> serve_until_signalled(
    const ServerOptions& options,
    const std::function<void(const net::SocketAddress&)>& on_listening);

}  // namespace knee::lab
