#include "lab/server_worker.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>

#include "http/request_parser.h"
#include "lab/connection.h"
#include "lab/endpoints.h"
#include "lab/h2_session.h"

namespace knee::lab {

using core::Clock;
using core::Result;
using core::Status;

namespace {

// Responses queued for one connection before it stops parsing pipelined requests to flush them.
constexpr size_t kOutFlushBytes = 64 * 1024;
constexpr size_t kMaxEvents = 256;
constexpr int kMaxAcceptsPerEvent = 128;
// Epoll tag of the listener; the loop keeps ~0 for its wake-up, connections use net::EventTag
// with slot <= EventTag::kMaxSlot.
constexpr uint64_t kListenerTag = ~uint64_t{0} - 1;
// After its last response a closing connection reads and drops what the client still sends, for
// at most this long, so the response is not destroyed by a reset (lingering close, RFC 9112 §9.6).
constexpr core::Nanos kLingerTimeout = std::chrono::seconds(2);
// Accepting pauses this long when the process is out of file descriptors or memory.
constexpr core::Nanos kAcceptPause = std::chrono::milliseconds(100);
// Edge-triggered, registered once with the write path's events (EPOLLOUT on the epoll path; the
// send ring says itself when a connection may write again): no epoll_ctl per request.
constexpr uint32_t kConnectionEvents = EPOLLIN | EPOLLRDHUP | EPOLLET;
// A closed connection's responses still unwritten are given up after this long (--io uring).
constexpr core::Nanos kOrphanTimeout = kLingerTimeout;
// HTTP/2: concurrent streams a connection may open (SETTINGS_MAX_CONCURRENT_STREAMS), as nginx.
constexpr uint32_t kMaxStreams = 128;
// Read buffers a worker keeps for reuse once their connections went idle (8 MiB at most): a
// steady load takes and gives back the same few, a burst of connections leaves no lasting RSS.
constexpr size_t kMaxSpareBuffers = 256;

uint64_t tag_of(uint32_t slot, uint32_t generation) {
  return net::EventTag{slot, generation}.value();
}

}  // namespace

// Passes a session's requests to the worker with the connection's slot.
struct H2Handler final : H2ServerSession::Handler {
  H2Handler(ServerWorker& w, uint32_t s) : worker(w), slot(s) {}
  void on_request(int32_t stream_id, std::string_view method, std::string_view path,
                  size_t field_bytes, uint64_t body_bytes) override {
    worker.on_h2_request(slot, stream_id, method, path, field_bytes, body_bytes);
  }
  void on_stream_closed(int32_t stream_id) override { worker.on_h2_stream_closed(slot, stream_id); }
  ServerWorker& worker;
  uint32_t slot;
};

Connection::Connection(uint32_t index) : slot(index) {}

Connection::~Connection() = default;

Result<std::unique_ptr<ServerWorker>> ServerWorker::create(const ServerShared& shared, int index,
                                                           net::Fd listener) {
  auto loop = net::EventLoop::create();
  if (!loop) return loop.status();
  Status added = loop->add(listener.get(), EPOLLIN, kListenerTag);
  if (!added) return added;
  auto path =
      net::WritePath::open(shared.options.tls ? net::IoPath::kEpoll : shared.options.io, *loop);
  if (!path) return path.status();
  return std::unique_ptr<ServerWorker>(new ServerWorker(
      shared, index, std::move(loop).value(), std::move(listener), std::move(path).value()));
}

ServerWorker::ServerWorker(const ServerShared& shared, int index, net::EventLoop loop,
                           net::Fd listener, net::WritePath write_path)
    : shared_(shared),
      counters_(shared.counters[static_cast<size_t>(index)]),
      metrics_(shared.metrics[static_cast<size_t>(index)]),
      loop_(std::move(loop)),
      replies_([this] { loop_.wake(); }),
      listener_(std::move(listener)),
      write_path_(std::move(write_path)),
      loop_now_(Clock::now()),
      check_period_(limit_check_period(shared.options)) {
  next_check_ = loop_now_ + check_period_;
  append_json_string(instance_json_, shared.options.instance);
  body_.reserve(512);
  fast_ = FixedResponse::make(200, kJson,
                              fmt::format(R"({{"ok":true,"instance":{}}})", instance_json_));
  not_found_ = FixedResponse::make(404, kJson, R"({"error":"not found"})");
  method_not_allowed_ =
      FixedResponse::make(405, kJson, R"({"error":"method not allowed"})", "Allow: GET, HEAD\r\n");
  bad_ms_ = FixedResponse::make(
      400, kJson, R"({"error":"ms must be a number of milliseconds from 0 to 60000"})");
  bad_stall_ = FixedResponse::make(
      400, kJson,
      R"json({"error":"every and for are seconds with 0 < for <= every, ms milliseconds (0 to 60000)"})json");
  bad_request_ = FixedResponse::make(400, kJson, R"({"error":"bad request"})");
  uri_too_long_ = FixedResponse::make(414, kJson, R"({"error":"request line too long"})");
  fields_too_large_ = FixedResponse::make(431, kJson, R"({"error":"header section too large"})");
  not_implemented_ =
      FixedResponse::make(501, kJson, R"({"error":"Transfer-Encoding is not supported"})");
  version_not_supported_ =
      FixedResponse::make(505, kJson, R"({"error":"only HTTP/1.0 and HTTP/1.1 are supported"})");
  no_service_ = FixedResponse::make(
      404, kJson,
      R"({"error":"the shipment service is off: make a data set with knee lab data, then start knee serve --state DIR"})");
  events_method_ =
      FixedResponse::make(405, kJson, R"({"error":"method not allowed"})", "Allow: POST\r\n");
  body_too_large_ =
      FixedResponse::make(413, kJson, R"({"error":"an event body has at most 16384 bytes"})");
  request_timeout_ = FixedResponse::make(
      408, kJson,
      fmt::format(
          R"json({{"error":"the request did not arrive within the header timeout ({} ms)"}})json",
          std::chrono::duration_cast<std::chrono::milliseconds>(shared.options.header_timeout)
              .count()));
  request_too_large_ =
      FixedResponse::make(413, kJson,
                          fmt::format(R"({{"error":"a request body has at most {} bytes here"}})",
                                      shared.options.max_body_bytes));
  too_many_connections_ =
      FixedResponse::make(503, kJson, R"({"error":"too many connections; try again later"})");
  h2_post_ = FixedResponse::make(
      501, kJson,
      R"({"error":"POST over HTTP/2 is not supported by the lab server; use HTTP/1.1"})");
}

ServerWorker::~ServerWorker() = default;

bool ServerWorker::run() {
  std::array<epoll_event, kMaxEvents> events{};
  bool failed = false;
  while (true) {
    if (!draining_ && shared_.stop.load(std::memory_order_acquire)) begin_drain();
    failure_ = write_path_.pass([this](uint64_t tag) { on_writable(tag); });
    if (!failure_) {
      failed = true;
      break;
    }
    // A closed connection's last responses still being written count as work in flight.
    if (draining_ && live_ == 0 && write_path_.unwritten_connections() == 0) break;
    const std::optional<core::TimePoint> deadline = next_deadline();
    std::optional<core::Nanos> timeout;
    if (deadline) timeout = std::max(core::Nanos(0), *deadline - Clock::now());
    if (write_path_.pending()) timeout = core::Nanos(0);
    auto ready = loop_.wait(events, timeout);
    if (!ready) {
      failure_ = ready.status();
      failed = true;
      break;
    }
    loop_now_ = Clock::now();
    date_.refresh(std::time(nullptr));
    for (int i = 0; i < *ready; ++i) dispatch(events[static_cast<size_t>(i)]);
    take_replies();
    core::TimePoint now = Clock::now();
    if (accept_resume_ && now >= *accept_resume_) {
      accept_resume_.reset();
      if (!draining_ && listener_.valid()) {
        if (loop_.add(listener_.get(), EPOLLIN, kListenerTag)) {
          accepting_ = true;
          accept_all();
        } else {
          accept_resume_ = now + kAcceptPause;
        }
      }
    }
    timers_.pop_due(now, [this](net::EventTag ref) { on_timer(ref); });
    if (now >= next_check_) {
      check_limits();
      write_path_.expire(now, kOrphanTimeout);
      next_check_ = now + check_period_;
    }
    if (draining_ && !idle_closed_ && Clock::now() >= drain_idle_deadline_) close_idle();
    const bool unwritten = write_path_.unwritten_connections() > 0;
    if (draining_ && (live_ > 0 || unwritten) && Clock::now() >= drain_deadline_) break;
  }
  force_close_all();
  write_path_.submit_queued();  // what was queued goes; the path's end cancels what is left
  if (write_path_.unwritten_connections() > 0) cut_off_ = true;  // closed ones' responses
  listener_.reset();
  return !failed && !cut_off_;
}

bool ServerWorker::writing(const Connection& c) {
  return c.out_sent < c.out.size() || (c.transport && c.transport->unsent() > 0);
}

void ServerWorker::on_writable(uint64_t tag) {
  const net::EventTag t = net::EventTag::of(tag);
  if (t.slot >= slots_.size()) return;
  Connection& c = *slots_[t.slot];
  if (c.generation == t.generation && c.state != ConnState::kFree) drive(c);
}

std::optional<core::TimePoint> ServerWorker::next_deadline() const {
  std::optional<core::TimePoint> deadline = timers_.next_deadline();
  auto earliest = [&](core::TimePoint t) {
    if (!deadline || t < *deadline) deadline = t;
  };
  if (accept_resume_) earliest(*accept_resume_);
  earliest(next_check_);
  if (draining_) earliest(idle_closed_ ? drain_deadline_ : drain_idle_deadline_);
  return deadline;
}

void ServerWorker::dispatch(const epoll_event& event) {
  const uint64_t tag = event.data.u64;
  if (tag == kListenerTag) {
    if (accepting_) accept_all();
    return;
  }
  if (tag == net::kSendRingTag) return;  // write_path_.pass() takes the completions every iteration
  const net::EventTag t = net::EventTag::of(tag);
  if (t.slot >= slots_.size()) return;
  Connection& c = *slots_[t.slot];
  if (c.generation != t.generation || c.state == ConnState::kFree) return;  // closed since
  if ((event.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) c.readable = true;
  if ((event.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) c.peer_shut = true;
  drive(c);
}

void ServerWorker::accept_all() {
  for (int i = 0; i < kMaxAcceptsPerEvent && accepting_; ++i) {
    auto fd = net::accept_tcp(listener_.get());
    if (fd) {
      open_connection(std::move(fd).value());
      continue;
    }
    const int err = fd.status().os_error();
    if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == EPERM) continue;
    if (err != EAGAIN && err != EWOULDBLOCK) pause_accepting();  // EMFILE, ENFILE, ENOBUFS...
    return;
  }
}

void ServerWorker::pause_accepting() {
  loop_.remove(listener_.get());
  accepting_ = false;
  accept_resume_ = Clock::now() + kAcceptPause;
}

uint32_t ServerWorker::take_slot() {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();  // LIFO: the most recently used buffers are the warmest
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(std::make_unique<Connection>(slot));
  }
  Connection& c = *slots_[slot];
  c.h2.reset();
  c.h2_handler.reset();
  c.parent = kNoParent;
  c.fresh = true;
  return slot;
}

void ServerWorker::open_connection(net::Fd fd) {
  if (shared_.open_connections.fetch_add(1, std::memory_order_relaxed) >= shared_.max_connections) {
    shared_.open_connections.fetch_sub(1, std::memory_order_relaxed);
    refuse(std::move(fd));
    return;
  }
  net::set_nodelay(fd.get());
  const uint32_t slot = take_slot();
  Connection& c = *slots_[slot];
  if (shared_.options.tls) {
    auto tls = net::TlsTransport::accept(std::move(fd), *shared_.options.tls);
    if (!tls) {  // OpenSSL out of memory: the socket closes, the slot stays free
      free_slots_.push_back(slot);
      shared_.open_connections.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    c.transport = std::move(tls).value();
    c.state = ConnState::kHandshake;
  } else {
    c.transport = write_path_.wrap(std::move(fd), tag_of(slot, c.generation));
    c.state = ConnState::kActive;
  }
  c.readable = true;  // the request often arrives with the handshake
  c.peer_shut = false;
  c.close_after_write = false;
  c.in_begin = c.in_end = 0;
  c.discard = 0;
  c.parser = http::RequestParser(shared_.options.max_header_bytes);
  c.out.clear();
  c.out_sent = 0;
  c.pending = Pending::kNone;
  c.opened = c.last_activity = c.head_started = loop_now_;
  ++live_;
  const uint32_t events = kConnectionEvents | write_path_.write_events();
  if (!loop_.add(c.transport->fd(), events, tag_of(slot, c.generation))) {
    close_connection(c);
    return;
  }
  drive(c);
}

void ServerWorker::close_connection(Connection& c) {
  if (c.state == ConnState::kFree) return;
  if (c.state == ConnState::kWaiting) add_in_flight(-1);  // its request is abandoned
  if (c.transport) shared_.open_connections.fetch_sub(1, std::memory_order_relaxed);
  if (c.transport) write_path_.release(loop_, *c.transport);
  c.transport.reset();
  release_buffer(c);
  c.h2.reset();
  c.h2_handler.reset();
  // Its streams still waiting on timers go with it: nobody is left to answer.
  const std::map<int32_t, uint32_t> waiting = std::move(c.waiting_streams);
  c.waiting_streams.clear();
  c.peer_done = false;
  c.state = ConnState::kFree;
  ++c.generation;  // late events and timers for this connection are now stale
  --live_;
  free_slots_.push_back(c.slot);
  for (const auto& [id, child] : waiting) {
    Connection& stream = *slots_[child];
    if (stream.parent == c.slot && stream.state == ConnState::kWaiting) close_connection(stream);
  }
}

void ServerWorker::start_closing(Connection& c) {
  c.transport->shutdown_write();
  c.state = ConnState::kLingering;
  c.close_after_write = false;
  c.readable = true;
  timers_.push(Clock::now() + kLingerTimeout, net::EventTag{c.slot, c.generation});
  linger(c);
}

void ServerWorker::linger(Connection& c) {
  acquire_buffer(c);
  c.in_begin = c.in_end = 0;  // what is left is dropped
  for (int i = 0; i < 16; ++i) {
    const net::IoResult r = c.transport->recv_some({c.in.get(), kInBufferBytes});
    if (r.status == net::IoStatus::kDone) continue;
    if (r.status == net::IoStatus::kWouldBlock) {
      c.readable = false;
      release_buffer(c);
      return;
    }
    close_connection(c);  // EOF: the client has read everything and closed; or an error
    return;
  }
}

// Moves a connection as far as it can go without blocking: flush queued responses, answer
// buffered requests, read more. Returns when it would block, waits on a timer, or closed.
void ServerWorker::drive(Connection& c) {
  if (c.parent != kNoParent) {  // a stream slot whose request was answered
    if (Connection* connection = forward_stream(c)) drive(*connection);
    return;
  }
  while (true) {
    if (c.h2) {
      drive_h2(c);
      return;
    }
    if (c.state == ConnState::kHandshake) {
      const net::IoResult r = c.transport->finish_connect();
      if (r.status == net::IoStatus::kWouldBlock) return;  // edge-triggered: both directions armed
      if (r.status != net::IoStatus::kDone) {
        close_connection(c);  // not TLS, a bad certificate on the client's side, a reset
        return;
      }
      c.state = ConnState::kActive;
      c.readable = true;  // the first request may have come with the handshake's last flight
      if (c.transport->tls() != nullptr && c.transport->tls()->alpn == "h2") start_h2(c);
      continue;
    }
    if (c.state == ConnState::kLingering) {
      if (c.readable) linger(c);
      return;
    }
    if (c.out_sent < c.out.size() && !flush(c)) return;
    if (c.state == ConnState::kWaiting) return;
    if (c.close_after_write) {
      start_closing(c);
      return;
    }
    if (draining_ && idle_closed_) {  // answered what it had in flight; nothing new starts
      close_connection(c);
      return;
    }
    bool preface_pending = false;  // the first bytes so far are the start of the h2c preface
    if (c.fresh && c.in_end > c.in_begin) {
      const std::string_view got(c.in.get() + c.in_begin, c.in_end - c.in_begin);
      const std::string_view preface = H2ServerSession::kClientPreface;
      const size_t n = std::min(got.size(), preface.size());
      if (got.substr(0, n) != preface.substr(0, n)) {
        c.fresh = false;  // HTTP/1.1
      } else if (n == preface.size()) {
        start_h2(c);  // h2c with prior knowledge (RFC 9113 §3.3)
        continue;
      } else {
        preface_pending = true;
      }
    }
    if (!preface_pending && serve_buffered(c) == Step::kProgress) continue;
    // The buffer holds no complete request: send what was answered, then read.
    if (c.out_sent < c.out.size() && !flush(c)) return;
    if (!c.readable) {
      if (c.in_begin == c.in_end) release_buffer(c);  // idle: no buffer held
      return;
    }
    acquire_buffer(c);
    if (c.in_begin == c.in_end) {
      c.in_begin = c.in_end = 0;
    } else if (c.in_begin > 0) {
      std::memmove(c.in.get(), c.in.get() + c.in_begin, c.in_end - c.in_begin);
      c.in_end -= c.in_begin;
      c.in_begin = 0;
    }
    const size_t space = kInBufferBytes - c.in_end;
    if (space == 0) {  // cannot happen: the parser decides within kMaxHeadBytes
      respond_fixed(c, fields_too_large_, ConnectionMode::kClose, false);
      continue;
    }
    const net::IoResult r = c.transport->recv_some({c.in.get() + c.in_end, space});
    if (r.status == net::IoStatus::kDone) {
      // A request's clock (header_timeout) starts with its first byte; a body being skipped
      // keeps the clock of its head.
      if (c.in_end == 0 && c.discard == 0 && r.bytes > 0) c.head_started = loop_now_;
      c.last_activity = loop_now_;
      c.in_end += r.bytes;
      // A short read emptied the socket; with edge triggering, new bytes bring a new event. Not
      // so an EOF that came with the same edge: after a shutdown, read on until it shows.
      // TLS may hold decrypted bytes, or a close read after them, that no edge will announce.
      if (r.bytes < space && !c.peer_shut && !c.transport->buffered()) c.readable = false;
      continue;
    }
    if (r.status == net::IoStatus::kWouldBlock) {
      c.readable = false;
      if (c.in_begin == c.in_end) release_buffer(c);
      return;
    }
    close_connection(c);  // EOF between requests (or mid-head), or a reset
    return;
  }
}

void ServerWorker::start_h2(Connection& c) {
  auto handler = std::make_unique<H2Handler>(*this, c.slot);
  auto session = H2ServerSession::create(*handler, kMaxStreams, shared_.options.max_body_bytes);
  if (!session) {
    close_connection(c);
    return;
  }
  c.h2_handler = std::move(handler);
  c.h2 = std::move(session).value();
  c.fresh = false;
  // What was read so far (the preface, perhaps requests) goes to the session.
  const std::string_view got =
      c.in ? std::string_view(c.in.get() + c.in_begin, c.in_end - c.in_begin) : std::string_view();
  const bool ok = got.empty() || c.h2->receive(got, loop_now_).is_ok();
  release_buffer(c);  // the session keeps what it needs; h2 reads into a transient buffer
  if (!ok) close_connection(c);
}

void ServerWorker::drive_h2(Connection& c) {
  const uint32_t generation = c.generation;
  while (c.generation == generation) {
    if (!c.h2->pull(c.out)) {
      close_connection(c);
      return;
    }
    if (c.out_sent < c.out.size() && !flush(c)) return;  // EPOLLOUT brings it back
    if (c.h2->finished() ||
        ((draining_ || c.peer_done) && c.waiting_streams.empty() && c.h2->open_streams() == 0)) {
      close_connection(c);
      return;
    }
    if (!c.readable || c.peer_done) return;
    acquire_buffer(c);
    const net::IoResult r = c.transport->recv_some({c.in.get(), kInBufferBytes});
    if (r.status == net::IoStatus::kWouldBlock) {
      c.readable = false;
      release_buffer(c);
      return;
    }
    if (r.status == net::IoStatus::kClosed && !c.waiting_streams.empty()) {
      // The client half-closed: answer the streams still waiting, then close (as over
      // HTTP/1.1).
      c.peer_done = true;
      c.readable = false;
      return;
    }
    if (r.status != net::IoStatus::kDone) {
      close_connection(c);  // EOF or a reset
      return;
    }
    c.last_activity = loop_now_;
    if (r.bytes < kInBufferBytes && !c.peer_shut && !c.transport->buffered()) c.readable = false;
    const bool ok = c.h2->receive(std::string_view(c.in.get(), r.bytes), loop_now_).is_ok();
    release_buffer(c);
    if (!ok) {
      close_connection(c);  // the client broke HTTP/2 framing
      return;
    }
  }
}

void ServerWorker::on_h2_request(uint32_t slot, int32_t stream_id, std::string_view method,
                                 std::string_view path, size_t field_bytes, uint64_t body_bytes) {
  const uint32_t generation = slots_[slot]->generation;
  const uint32_t s = take_slot();
  Connection& stream = *slots_[s];
  stream.state = ConnState::kActive;
  stream.parent = slot;
  stream.parent_generation = generation;
  stream.stream_id = stream_id;
  stream.fresh = false;
  stream.out.clear();
  stream.out_sent = 0;
  stream.close_after_write = false;
  stream.pending = Pending::kNone;
  stream.route = Route::kNone;  // until handle() routes it: a refused path counts as "other"
  stream.started = Clock::now();
  stream.timed = true;
  ++live_;
  // The HTTP/1.1 parser's limits and target bytes hold over HTTP/2 too, with its answers.
  const bool bad_byte = std::any_of(path.begin(), path.end(), [](char ch) {
    return static_cast<unsigned char>(ch) <= 0x20 || static_cast<unsigned char>(ch) >= 0x7f;
  });
  if (path.size() > http::kMaxRequestLineBytes) {
    respond_fixed(stream, uri_too_long_, ConnectionMode::kKeepAlive, false);
  } else if (field_bytes > shared_.options.max_header_bytes) {
    respond_fixed(stream, fields_too_large_, ConnectionMode::kKeepAlive, false);
  } else if (bad_byte || path.empty()) {
    respond_fixed(stream, bad_request_, ConnectionMode::kKeepAlive, false);
  } else if (body_bytes > shared_.options.max_body_bytes) {
    respond_fixed(stream, request_too_large_, ConnectionMode::kKeepAlive, false);
  } else {
    http::RequestHead head;
    head.method = method;
    head.target = path;
    handle(stream, head);
  }
  if (stream.state == ConnState::kWaiting) {
    slots_[slot]->waiting_streams[stream_id] = s;
  } else {
    forward_stream(stream);
  }
}

void ServerWorker::on_h2_stream_closed(uint32_t slot, int32_t stream_id) {
  Connection& c = *slots_[slot];
  auto it = c.waiting_streams.find(stream_id);
  if (it == c.waiting_streams.end()) return;
  Connection& stream = *slots_[it->second];
  c.waiting_streams.erase(it);
  // Reset by the client while its timer runs: the work is dropped, the slot freed (its timer
  // finds a new generation and does nothing).
  if (stream.parent == slot && stream.state == ConnState::kWaiting) close_connection(stream);
}

Connection* ServerWorker::forward_stream(Connection& stream) {
  Connection* connection = slots_[stream.parent].get();
  const bool alive = connection->generation == stream.parent_generation && connection->h2;
  if (alive) connection->waiting_streams.erase(stream.stream_id);
  if (alive) connection->h2->respond(stream.stream_id, stream.out, /*head_only=*/false);
  stream.out.clear();
  close_connection(stream);
  return alive ? connection : nullptr;
}

// Writes queued output. True when all of it went; false when the socket is full (EPOLLOUT will
// bring the connection back) or the connection failed and was closed.
bool ServerWorker::flush(Connection& c) {
  while (c.out_sent < c.out.size()) {
    const net::IoResult r = c.transport->send_some(std::string_view(c.out).substr(c.out_sent));
    if (r.status == net::IoStatus::kDone) {
      c.out_sent += r.bytes;
      c.last_activity = loop_now_;
      continue;
    }
    if (r.status != net::IoStatus::kWouldBlock) close_connection(c);
    return false;
  }
  c.out.clear();
  c.out_sent = 0;
  return true;
}

// Answers the complete requests at the front of the read buffer, in order. kNeedBytes when the
// next request is incomplete; kProgress when it stopped for another reason (a request waits on a
// timer, the connection will close, or enough output is queued).
ServerWorker::Step ServerWorker::serve_buffered(Connection& c) {
  while (true) {
    if (c.discard > 0) {
      uint64_t take = std::min<uint64_t>(c.discard, c.in_end - c.in_begin);
      c.in_begin += static_cast<size_t>(take);
      c.discard -= take;
      if (c.discard > 0) return Step::kNeedBytes;
      c.head_started = loop_now_;  // the body is in: the next request's clock starts
    }
    if (c.out.size() >= kOutFlushBytes) return Step::kProgress;
    if (!c.in) return Step::kNeedBytes;  // nothing read yet
    const std::string_view bytes(c.in.get() + c.in_begin, c.in_end - c.in_begin);
    const http::ParseOutcome outcome = c.parser.parse(bytes);
    if (outcome == http::ParseOutcome::kNeedMore) return Step::kNeedBytes;
    if (outcome != http::ParseOutcome::kComplete) {
      const FixedResponse* r = &bad_request_;
      if (outcome == http::ParseOutcome::kUriTooLong) r = &uri_too_long_;
      if (outcome == http::ParseOutcome::kHeaderFieldsTooLarge) r = &fields_too_large_;
      if (outcome == http::ParseOutcome::kNotImplemented) r = &not_implemented_;
      if (outcome == http::ParseOutcome::kVersionNotSupported) r = &version_not_supported_;
      reject(c, *r);
      return Step::kProgress;
    }
    const http::RequestHead& head = c.parser.head();
    if (head.content_length > shared_.options.max_body_bytes) {
      reject(c, request_too_large_);
      return Step::kProgress;
    }
    std::string_view body;
    if (head.method == "POST" && route_of(split_target(head.target).path) == Route::kEvents &&
        head.content_length > 0 && head.content_length <= kMaxEventBody) {
      if (bytes.size() - head.head_bytes < head.content_length) {
        // The whole body first. Parsed again then: the buffer may move meanwhile, and the head
        // views into it.
        if (head.head_bytes + head.content_length > kInBufferBytes) {
          respond_fixed(c, body_too_large_, ConnectionMode::kClose, false);
          return Step::kProgress;
        }
        c.parser.reset();
        return Step::kNeedBytes;
      }
      body = bytes.substr(head.head_bytes, static_cast<size_t>(head.content_length));
    }
    handle(c, head, body);
    const uint64_t body_here =
        std::min<uint64_t>(head.content_length, bytes.size() - head.head_bytes);
    c.in_begin += head.head_bytes + static_cast<size_t>(body_here);
    c.discard = head.content_length - body_here;
    c.parser.reset();
    c.head_started = loop_now_;  // the next request's clock (or its body's) starts now
    if (c.state == ConnState::kWaiting || c.close_after_write) return Step::kProgress;
  }
}

void ServerWorker::handle(Connection& c, const http::RequestHead& head, std::string_view body) {
  count_request();
  add_in_flight(1);
  const Target target = split_target(head.target);
  const Route route = route_of(target.path);
  c.route = route;
  c.started = Clock::now();
  c.timed = true;
  const bool is_head = head.method == "HEAD";
  const ConnectionMode mode = mode_for(head.keep_alive, head.minor_version);
  auto wait_then_finish = [&](Pending kind, double ms, core::Nanos delay) {
    c.pending = kind;
    c.pending_head = is_head;
    c.pending_keep_alive = head.keep_alive;
    c.pending_minor = head.minor_version;
    c.pending_ms = ms;
    if (delay <= core::Nanos::zero()) {
      finish_pending(c);
      return;
    }
    c.state = ConnState::kWaiting;
    timers_.push(Clock::now() + delay, net::EventTag{c.slot, c.generation});
  };

  if (shared_.options.extra_cpu.count() > 0 && route != Route::kHealth &&
      route != Route::kMetrics) {
    burn(shared_.options.extra_cpu);  // --extra-cpu: this replica is the slow one
  }
  if (route == Route::kNone) {
    respond_fixed(c, not_found_, mode, is_head);
  } else if ((route == Route::kShipment || route == Route::kEvents || route == Route::kBilling) &&
             shared_.service == nullptr) {
    respond_fixed(c, no_service_, mode, is_head);
  } else if (route == Route::kEvents) {
    handle_event(c, head, body, mode);
  } else if (route == Route::kBilling) {
    handle_billing(c, head, target.query, mode);
  } else if (!is_head && head.method != "GET") {
    respond_fixed(c, method_not_allowed_, mode, false);
  } else {
    switch (route) {
      case Route::kFast:
        respond_fixed(c, fast_, mode, is_head);
        break;
      case Route::kHealth: {
        uint64_t total = 0, refused = 0, header_timeouts = 0, idle_closed = 0;
        int64_t in_flight = 0;
        for (size_t i = 0; i < static_cast<size_t>(shared_.workers); ++i) {
          const WorkerCounters& w = shared_.counters[i];
          total += w.total_requests.load(std::memory_order_relaxed);
          in_flight += w.in_flight.load(std::memory_order_relaxed);
          refused += w.refused.load(std::memory_order_relaxed);
          header_timeouts += w.header_timeouts.load(std::memory_order_relaxed);
          idle_closed += w.idle_closed.load(std::memory_order_relaxed);
        }
        const auto uptime =
            std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - shared_.started);
        body_.clear();
        fmt::format_to(
            std::back_inserter(body_),
            R"({{"status":"ok","instance":{},"uptimeSec":{},"inFlight":{},"totalRequests":{})",
            instance_json_, uptime.count(), in_flight, total);
        fmt::format_to(
            std::back_inserter(body_),
            R"(,"connections":{{"open":{},"refused":{},"headerTimeouts":{},"idleClosed":{}}})",
            shared_.open_connections.load(std::memory_order_relaxed), refused, header_timeouts,
            idle_closed);
        if (shared_.service != nullptr) shared_.service->append_health(body_);
        body_.push_back('}');
        respond(c, 200, mode, is_head);
        break;
      }
      case Route::kTracking:
        if (!find_query_param(target.query, "no", c.pending_id)) {
          c.pending_id
              .clear();  // not assign("-"): GCC 12 -O2 warns falsely (-Wrestrict, PR 105329)
          c.pending_id.push_back('-');
        }
        wait_then_finish(Pending::kTracking, 0, shared_.options.wait);
        break;
      case Route::kSlowAsync:
      case Route::kSlowSync: {
        std::optional<double> ms = find_query_param(target.query, "ms", body_)
                                       ? parse_ms(body_)
                                       : std::optional<double>(kDefaultSlowMs);
        if (!ms) {
          respond_fixed(c, bad_ms_, mode, is_head);
          break;
        }
        if (route == Route::kSlowAsync) {
          wait_then_finish(Pending::kSlowAsync, *ms, ms_to_nanos(*ms));
          break;
        }
        burn(ms_to_nanos(*ms));  // blocks this loop: the point of /slow-sync
        body_.clear();
        fmt::format_to(std::back_inserter(body_),
                       R"({{"ok":true,"mode":"sync-blocking","ms":{},"instance":{}}})", *ms,
                       instance_json_);
        respond(c, 200, mode, is_head);
        break;
      }
      case Route::kStall: {
        // every= and for= in seconds (defaults 10 and 1), ms= in ms (default 1).
        auto param = [&](std::string_view name, double fallback) -> std::optional<double> {
          if (!find_query_param(target.query, name, body_) || body_.empty()) return fallback;
          return parse_ms(body_);
        };
        std::optional<double> every = param("every", 10), window = param("for", 1),
                              ms = param("ms", 1);
        if (!every || !window || !ms || *every <= 0 || *window > *every) {
          respond_fixed(c, bad_stall_, mode, is_head);
          break;
        }
        core::Nanos delay = stall_delay(Clock::now() - shared_.started, ms_to_nanos(*every * 1000),
                                        ms_to_nanos(*window * 1000), ms_to_nanos(*ms));
        wait_then_finish(Pending::kStall, static_cast<double>(delay.count()) / 1e6, delay);
        break;
      }
      case Route::kShipment:
        handle_shipment(c, head, shipment_of(target.path), mode, is_head);
        break;
      case Route::kMetrics:
        respond_metrics(c, mode, is_head);
        break;
      case Route::kNone:
      case Route::kEvents:
      case Route::kBilling:
      case Route::kCount:
        break;
    }
  }
  if (c.state != ConnState::kWaiting) add_in_flight(-1);
}

// Completes the request that waited: /tracking burns its CPU share, then both answer.
void ServerWorker::finish_pending(Connection& c) {
  c.state = ConnState::kActive;
  const ConnectionMode mode = mode_for(c.pending_keep_alive, c.pending_minor);
  body_.clear();
  if (c.pending == Pending::kTracking) {
    burn(shared_.options.cpu);
    body_.append(R"({"no":)");
    append_json_string(body_, c.pending_id);
    body_.append(R"(,"state":"at transit hub","zone":"35","step":4})");
  } else {
    fmt::format_to(std::back_inserter(body_), R"({{"ok":true,"mode":"{}","ms":{},"instance":{}}})",
                   c.pending == Pending::kStall ? "stall" : "async", c.pending_ms, instance_json_);
  }
  c.pending = Pending::kNone;
  respond(c, 200, mode, c.pending_head);
}

void ServerWorker::respond_fixed(Connection& c, const FixedResponse& r, ConnectionMode mode,
                                 bool head_only) {
  observe(c, r.status());
  r.append_to(c.out, date_.value(), mode, head_only);
  if (mode == ConnectionMode::kClose) c.close_after_write = true;
}

void ServerWorker::respond(Connection& c, int status, ConnectionMode mode, bool head_only) {
  observe(c, status);
  append_response(c.out, status, kJson, body_, date_.value(), mode, head_only);
  if (mode == ConnectionMode::kClose) c.close_after_write = true;
}

ConnectionMode ServerWorker::mode_for(bool keep_alive, int minor_version) const {
  if (!keep_alive || draining_) return ConnectionMode::kClose;
  return minor_version == 0 ? ConnectionMode::kKeepAlive10 : ConnectionMode::kKeepAlive;
}

void ServerWorker::on_timer(net::EventTag ref) {
  if (ref.slot >= slots_.size()) return;
  Connection& c = *slots_[ref.slot];
  if (c.generation != ref.generation) return;  // the connection closed since
  if (c.state == ConnState::kWaiting && c.pending != Pending::kStore) {
    finish_pending(c);
    add_in_flight(-1);
    drive(c);
  } else if (c.state == ConnState::kLingering) {
    close_connection(c);
  }
}

// Stop accepting, let connections finish their request in flight, and keep idle ones for
// drain_idle: a request on one is answered with Connection: close (mode_for).
void ServerWorker::begin_drain() {
  draining_ = true;
  drain_deadline_ = Clock::now() + shared_.options.drain_timeout;
  drain_idle_deadline_ =
      Clock::now() + std::min(shared_.options.drain_idle, shared_.options.drain_timeout);
  if (accepting_) loop_.remove(listener_.get());
  accepting_ = false;
  accept_resume_.reset();
  listener_.reset();
  // By index: answering a stream may take a new slot and grow slots_.
  for (size_t i = 0, n = slots_.size(); i < n; ++i) {
    Connection& c = *slots_[i];
    if (c.parent != kNoParent) continue;  // a stream's request: answered, then dropped
    if (c.h2 && c.state == ConnState::kActive) {
      c.h2->goaway();  // no new streams; those begun are answered, then it closes
      drive(c);
      continue;
    }
    if (c.state == ConnState::kHandshake) {
      close_connection(c);  // no request yet
      continue;
    }
    if (c.state != ConnState::kActive) continue;  // waiting: answers, then closes
    if (c.out_sent < c.out.size()) {
      c.close_after_write = true;  // still writing an answer: finish it, then close
    }
  }
  if (shared_.options.drain_idle <= core::Nanos(0)) close_idle();
}

// The drain's idle grace is over: HTTP/1.1 connections with nothing in hand close.
void ServerWorker::close_idle() {
  idle_closed_ = true;
  for (size_t i = 0, n = slots_.size(); i < n; ++i) {
    Connection& c = *slots_[i];
    if (c.parent != kNoParent || c.h2 || c.state != ConnState::kActive) continue;
    if (c.out_sent >= c.out.size() && !c.close_after_write) close_connection(c);
  }
}

void ServerWorker::force_close_all() {
  for (auto& slot : slots_) {
    Connection& c = *slot;
    if (c.state == ConnState::kWaiting || (c.state == ConnState::kActive && writing(c))) {
      cut_off_ = true;
    }
    close_connection(c);
  }
}

void ServerWorker::refuse(net::Fd fd) {
  bump(counters_.refused);
  if (shared_.options.tls) return;  // a 503 in clear text means nothing to a TLS client: close
  net::TcpTransport t(std::move(fd));
  // A request that came with the connection is read first, so that the close sends a FIN after
  // the 503 rather than a reset that could destroy it; one sent later may meet the reset.
  std::array<char, 4096> scratch{};
  (void)t.recv_some(scratch);
  body_.clear();
  too_many_connections_.append_to(body_, date_.value(), ConnectionMode::kClose, false);
  (void)t.send_some(body_);
}

void ServerWorker::check_limits() {
  const ServerOptions& o = shared_.options;
  const core::TimePoint now = loop_now_;
  // By index: answering may take a stream slot and grow slots_.
  for (size_t i = 0, n = slots_.size(); i < n; ++i) {
    Connection& c = *slots_[i];
    if (c.state == ConnState::kFree || c.parent != kNoParent) continue;
    if (c.state == ConnState::kHandshake) {
      if (now - c.opened >= o.header_timeout) close_connection(c);  // no request to answer yet
      continue;
    }
    // Waiting on the server's own work, or lingering on a timer of its own: not the client's.
    if (c.state != ConnState::kActive) continue;
    if (c.h2) {
      // A stream whose request is not complete is the client's, as an HTTP/1.1 head is; streams
      // answered but not yet written wait on the client's reading, as a blocked flush does.
      const std::optional<core::TimePoint> oldest = c.h2->oldest_incomplete();
      const bool late = oldest && now - *oldest >= o.header_timeout;
      const bool idle =
          !oldest && c.waiting_streams.empty() && now - c.last_activity >= o.idle_timeout;
      if (late || idle) {
        bump(late ? counters_.header_timeouts : counters_.idle_closed);
        if (late) {
          // Regression (a trial): the late streams got no answer, only GOAWAY and a close; like
          // an HTTP/1.1 head that took too long, each gets 408.
          std::string timed_out;
          request_timeout_.append_to(timed_out, date_.value(), ConnectionMode::kKeepAlive, false);
          // Counted as HTTP/1.1 counts its 408 (reject()): route "other", answered at once.
          for (size_t k = c.h2->answer_incomplete(now - o.header_timeout, timed_out); k > 0; --k) {
            metrics_.observe(Route::kNone, request_timeout_.status(), core::Nanos(0));
          }
        }
        c.h2->goaway();  // RFC 9113 section 9.1: say so before closing the connection
        if (late && c.waiting_streams.empty()) {
          // As after HTTP/1.1's 408 (review): the answers go out, the write side shuts and what
          // the client still sends is read and dropped, since a close with unread bytes would
          // reset the connection and could take the 408 with it. The session goes first: done
          // (GOAWAY sent, no stream open), drive_h2 would close at once.
          const bool pulled = c.h2->pull(c.out).is_ok();
          c.h2.reset();
          c.h2_handler.reset();
          if (!pulled) {
            close_connection(c);
            continue;
          }
          c.close_after_write = true;
          drive(c);
          continue;
        }
        const uint32_t generation = c.generation;
        drive(c);
        if (c.generation == generation) close_connection(c);
      }
      continue;
    }
    const bool mid_request = c.in_end > c.in_begin || c.discard > 0;
    if (!writing(c) && mid_request) {
      if (now - c.head_started < o.header_timeout) continue;
      bump(counters_.header_timeouts);
      if (c.discard > 0) {  // a body being skipped: its request was answered; no 408 after that
        close_connection(c);
        continue;
      }
      c.in_begin = c.in_end = 0;
      c.parser.reset();
      reject(c, request_timeout_);
      drive(c);
    } else if (now - c.last_activity >= o.idle_timeout) {
      bump(counters_.idle_closed);  // idle, or a client that reads none of its responses
      close_connection(c);
    }
  }
}

void ServerWorker::acquire_buffer(Connection& c) {
  if (c.in) return;
  if (spare_buffers_.empty()) {
    c.in = std::make_unique_for_overwrite<char[]>(kInBufferBytes);
  } else {
    c.in = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
  }
  c.in_begin = c.in_end = 0;
}

void ServerWorker::release_buffer(Connection& c) {
  if (!c.in) return;
  if (spare_buffers_.size() < kMaxSpareBuffers) spare_buffers_.push_back(std::move(c.in));
  c.in.reset();
  c.in_begin = c.in_end = 0;
}

void ServerWorker::count_request() { bump(counters_.total_requests); }

void ServerWorker::reject(Connection& c, const FixedResponse& r) {
  c.route = Route::kNone;  // counted in /metrics as route "other"
  c.started = Clock::now();
  c.timed = true;
  respond_fixed(c, r, ConnectionMode::kClose, false);
}

void ServerWorker::burn(core::Nanos cpu) {
  if (cpu <= core::Nanos::zero()) return;
  // Responses queued for the send ring go before the loop spends CPU on another request.
  write_path_.submit_queued();
  burn_thread_cpu(cpu);
  loop_now_ = Clock::now();  // later events of this batch happen after the burn
}

void ServerWorker::bump(std::atomic<uint64_t>& counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void ServerWorker::add_in_flight(int64_t delta) {
  counters_.in_flight.store(counters_.in_flight.load(std::memory_order_relaxed) + delta,
                            std::memory_order_relaxed);
}

}  // namespace knee::lab
