// WritePath: how an epoll loop's plain-TCP connections write, whichever `--io` chose. kEpoll: a
// TcpTransport per connection, a send(2) per write, EPOLLOUT when the socket is full. kUring: a
// SendRing whose transports queue their writes, handed to the kernel together once per loop pass
// (net/send_ring.h). The seam the load worker and the lab server share, so neither branches on the
// ring (convention 17: the next way of writing, or multishot receive, plugs in here).
//
// How an owner uses it, per loop pass: wrap() each new socket; before computing the wait's
// deadline, pass() (completions taken, connections with room again named, queued sends
// submitted), and wait without sleeping while pending(); before destroying a transport,
// release() it; every so often expire(); at the end, submit_queued() and destroy the path.
//
// Ownership: a kUring path owns its ring, which must outlive the transports it made.
// Thread-safety: one thread (the loop's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/clock.h"
#include "core/status.h"
#include "net/event_loop.h"
#include "net/send_ring.h"
#include "net/socket.h"
#include "net/transport.h"

namespace knee::net {

class WritePath {
 public:
  // The epoll path: nothing to open.
  WritePath() = default;
  // Opens the path `io` names. kUring: a SendRing, its fd watched by `loop` (EPOLLIN under
  // kSendRingTag; the owner ignores those events, pass() takes the completions).
  // Errors: kIoError with field "io" when no io_uring can be set up, its message saying whether
  // the kernel has none or forbids it (ENOSYS, EPERM) or could not give one (ENOMEM and the
  // like) and naming the way out ("leave --io at epoll"); EventLoop::add's, with no field.
  static core::Result<WritePath> open(IoPath io, EventLoop& loop);
  // Whether open(io, ...) can succeed here, asked before anything starts: kUring sets up a small
  // io_uring and lets it go. Errors: open()'s with field "io". kEpoll always succeeds.
  static core::Status check(IoPath io);

  IoPath io() const { return ring_ ? IoPath::kUring : IoPath::kEpoll; }

  // A transport for `socket`, connected or connecting; `tag` is what pass() names it by when it
  // has room again (the owner's epoll tag for it).
  std::unique_ptr<Transport> wrap(Fd socket, uint64_t tag);

  // The epoll events a connection is watched for that are about writing: EPOLLOUT on the epoll
  // path; none on the ring's, where pass() names the connections that have room again.
  uint32_t write_events() const;

  // Before the loop's wait: up to 4 rounds of taking completions, calling writable(tag) for each
  // connection that was refused bytes and has room again (it may write more), and submitting
  // what is queued. A no-op on the epoll path.
  // Errors: kIoError from io_uring_enter.
  core::Status pass(const std::function<void(uint64_t tag)>& writable);

  // Whether pass() left work (a partial send's rest, a connection with room again): the wait
  // must not sleep then. Always false on the epoll path.
  bool pending() const;

  // Call before destroying a connection's transport (any: one not from wrap() holds nothing
  // back): the ring keeps a socket with unwritten bytes open until they are out, so that socket
  // leaves `loop` now; only then, since an epoll_ctl per close would cost a connection per
  // request (--no-keepalive) more than the ring saves.
  void release(EventLoop& loop, const Transport& transport) const;

  // Hands what is queued to the kernel now, not at the next pass(): before a long CPU burn, and
  // at the loop's end (destroying the path then cancels what is still unwritten).
  void submit_queued();

  // Sockets of closed connections whose bytes the ring is still writing (0 on the epoll path).
  size_t unwritten_connections() const;

  // Gives up on the unwritten bytes of closed connections that an earlier call already saw
  // closed at least `limit` before `now`: the limit runs on the caller's clock from the first
  // call after the close, so it ends up to one calling period late (SendRing::expire_orphans).
  void expire(core::TimePoint now, core::Nanos limit);

 private:
  explicit WritePath(std::unique_ptr<SendRing> ring) : ring_(std::move(ring)) {}

  std::unique_ptr<SendRing> ring_;  // null: the epoll path
};

}  // namespace knee::net
