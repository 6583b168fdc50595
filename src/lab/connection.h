// The lab server's connection slot, shared by the files of ServerWorker (server_worker.cc: the
// loop, HTTP/1.1 and HTTP/2; service_routes.cc: the shipment service's routes and /metrics).
// Internal to lab/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "http/request_parser.h"
#include "lab/endpoints.h"
#include "lab/h2_session.h"
#include "net/transport.h"

namespace knee::lab {

// A connection's read buffer holds any head the parser can still be undecided about, plus
// pipelined requests behind it.
inline constexpr size_t kInBufferBytes = 32 * 1024;
static_assert(kInBufferBytes >= http::kMaxHeadBytes + 1024);
inline constexpr std::string_view kJson = "application/json";
// POST /events: the largest body read, in bytes; larger ones get 413 (an event is ~100 bytes).
inline constexpr uint64_t kMaxEventBody = 16 * 1024;
// Connection::parent of a connection with a socket.
inline constexpr uint32_t kNoParent = ~uint32_t{0};

struct H2Handler;

enum class ConnState : uint8_t {
  kFree,       // slot unused
  kHandshake,  // --tls: the TLS handshake is under way
  kActive,     // reading, parsing, answering
  kWaiting,    // a request waits on a timer; later requests stay in the buffer
  kLingering,  // last response sent, write side shut; dropping input until EOF or timeout
};

enum class Pending : uint8_t { kNone, kTracking, kSlowAsync, kStall, kStore };

struct Connection {
  // Both in server_worker.cc, where H2Handler is complete.
  explicit Connection(uint32_t index);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint32_t slot;
  uint32_t generation = 0;
  ConnState state = ConnState::kFree;
  std::unique_ptr<net::Transport> transport;
  bool readable = false;           // edge-triggered: bytes may be waiting in the socket
  bool peer_shut = false;          // EPOLLRDHUP/HUP seen: an EOF is waiting behind any bytes
  bool close_after_write = false;  // the queued output ends with a "Connection: close" response
  // kInBufferBytes while bytes are being read or wait in it (also while a request waits on a
  // timer with pipelined bytes behind it), else null: a connection with nothing buffered gives
  // its buffer back to the worker (ServerWorker::release_buffer), so that 10,000 idle ones do
  // not hold a touched 32 KiB each. Bytes [in_begin, in_end) are not yet consumed.
  std::unique_ptr<char[]> in;
  size_t in_begin = 0;
  size_t in_end = 0;
  uint64_t discard = 0;  // body bytes of the last request still to skip, in bytes
  http::RequestParser parser;
  std::string out;  // responses not yet written; bytes [0, out_sent) are written
  size_t out_sent = 0;
  // For the limits (ServerOptions), times of the worker's loop iteration: when the connection
  // was accepted, when it last read or wrote a byte, and when the request now in its buffer began.
  core::TimePoint opened{};
  core::TimePoint last_activity{};
  core::TimePoint head_started{};
  // The request waiting on a timer (state kWaiting).
  Pending pending = Pending::kNone;
  bool pending_head = false;
  bool pending_keep_alive = true;
  int pending_minor = 1;
  double pending_ms = 0;
  std::string pending_id;  // /tracking's no=, decoded
  // The request being answered, for /metrics: its route and when it was parsed; timed until
  // its response is queued.
  Route route = Route::kNone;
  core::TimePoint started{};
  bool timed = false;
  // HTTP/2: a connection's session; or, for a stream slot (no transport), the connection it
  // belongs to (its slot and generation) and its stream id.
  std::unique_ptr<H2ServerSession> h2;
  std::unique_ptr<H2Handler> h2_handler;
  bool fresh = false;  // nothing served yet: the client preface may still come (h2c)
  uint32_t parent = kNoParent;
  uint32_t parent_generation = 0;
  int32_t stream_id = 0;
  // A connection's streams waiting on a timer: stream id -> stream slot, to drop their work when
  // the client resets them or goes (else a reset stream costs a slot and a timer each).
  std::map<int32_t, uint32_t> waiting_streams;
  bool peer_done = false;  // HTTP/2: the client's EOF was read; streams waiting are still answered
};

}  // namespace knee::lab
