// SendRing: the sends of many connections handed to the kernel in one system call, through
// io_uring (liburing 2.3; io_uring_setup(2), io_uring_prep_send(3)), for the owner of an epoll
// loop. Readiness and reads stay with epoll and recv(2); only writes change path. A response that
// took a sendto(2) of its own now waits in user space until the loop's next submit(), which passes
// every waiting response of that iteration to the kernel at once. With page-table isolation a
// system call's entry and exit cost about a microsecond (the ladder's syscall rung), so this is
// `--io uring` of the lab server (its responses) and of the load worker (its requests).
//
// How a connection uses it: SendRing::adopt() wraps a connected (or connecting) socket in a
// UringTransport. Its send_some() copies the bytes into the connection's queue and returns kDone
// at once, until kMaxQueuedBytes wait unsent; then kWouldBlock (wants_write), and reap() names the
// connection's tag when room came back (the EPOLLOUT of this path). finish_connect() reads a
// non-blocking connect's outcome (SO_ERROR) as TcpTransport's does; nothing is queued before it. A
// send error (EPIPE, ECONNRESET) is returned by the next send_some(); recv_some() is a plain
// recv(2). shutdown_write() waits for the queued bytes to go first.
//
// A closed connection: destroying its transport while bytes still wait or are in flight leaves
// them to the ring, which keeps the socket open until they are written (as close(2) would leave
// them in the socket's buffer) and then closes it. One the peer never reads is cancelled after
// the limit given to expire_orphans(). The owner removes the socket from its epoll set before
// destroying the transport: the socket may outlive it.
//
// Needs Linux 5.19 or later (IORING_ASYNC_CANCEL_ANY at the ring's end; Debian 12 ships 6.1).
//
// Ownership: the ring owns its io_uring and the sockets of closed connections; each transport
// owns its socket. The ring must outlive its transports. Thread-safety: one thread (the loop's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "net/socket.h"
#include "net/transport.h"

struct io_uring;

namespace knee::net {

// How the writes of an owner that offers both paths reach the kernel (`--io` of knee serve and
// knee run): kEpoll, a send(2) per write, EPOLLOUT when the socket is full; kUring, queued and
// handed over together through a SendRing.
enum class IoPath : uint8_t { kEpoll, kUring };
// "epoll" or "uring", as --io takes it.
std::string_view io_path_name(IoPath io);
// The epoll tag under which an owner registers SendRing::fd() (above EventTag::kMaxSlot).
inline constexpr uint64_t kSendRingTag = ~uint64_t{0} - 2;

class SendRing;
struct SendQueue;

// A connection whose writes go through a SendRing (see above).
class UringTransport final : public Transport {
 public:
  ~UringTransport() override;
  UringTransport(const UringTransport&) = delete;
  UringTransport& operator=(const UringTransport&) = delete;

  int fd() const override;
  IoResult finish_connect() override;
  IoResult send_some(std::string_view data) override;
  IoResult recv_some(std::span<char> buffer) override;
  void shutdown_write() override;

  // Bytes queued or in flight, not yet written (the owner's drain and limits count them).
  size_t unsent() const override;

 private:
  friend class SendRing;
  UringTransport(SendRing& ring, std::unique_ptr<SendQueue> queue);
  SendRing& ring_;
  std::unique_ptr<SendQueue> queue_;
};

class SendRing {
 public:
  // Unsent bytes one connection may hold before send_some() says kWouldBlock, in bytes.
  static constexpr size_t kMaxQueuedBytes = 256 * 1024;
  // Connections with queued bytes at which send_some() submits at once rather than waiting for
  // the loop's submit(): a response waits at most for the work of this many others.
  static constexpr size_t kMaxBatch = 32;

  // An io_uring with room for `entries` sends per submit (more are submitted in several calls).
  // Errors: kIoError with the errno of io_uring_setup (ENOSYS: no io_uring in this kernel;
  // EPERM: disabled by sysctl kernel.io_uring_disabled or a seccomp filter).
  static core::Result<std::unique_ptr<SendRing>> create(unsigned entries = 256);
  // Cancels what is still in flight (waiting at most a second for the kernel to let go of the
  // buffers), then closes the sockets of closed connections.
  ~SendRing();
  SendRing(const SendRing&) = delete;
  SendRing& operator=(const SendRing&) = delete;

  // The ring's file descriptor: readable (EPOLLIN) when completions wait for reap().
  int fd() const;

  // Wraps socket `socket`, connected or connecting (nothing is queued before finish_connect());
  // `tag` is what reap() reports for it.
  std::unique_ptr<UringTransport> adopt(Fd socket, uint64_t tag);

  // Hands every queued send to the kernel in one io_uring_enter (none when nothing is queued; a
  // send(2) when one connection alone has bytes, which costs less).
  // Errors: kIoError from io_uring_enter.
  core::Status submit();

  // Takes the completions that arrived, without a system call: resubmits the rest of a partial
  // send on the next submit(), closes the sockets of closed connections that are done, and calls
  // writable(tag) for each live connection that was refused bytes and now has room.
  void reap(const std::function<void(uint64_t tag)>& writable);

  // Whether submit() has work: queued bytes not yet handed to the kernel.
  bool has_queued() const;
  // Whether reap() has connections to name writable without a completion (a send(2) of
  // submit() emptied a blocked queue): call reap() before waiting.
  bool has_ready() const;

  // Sockets of closed connections still holding bytes (their peer has not read them yet).
  size_t orphans() const { return orphans_.size(); }

  // Cancels the sends of closed connections that an earlier call already saw closed at least
  // `limit` before `now` (so the limit runs on the caller's clock, from the first call after the
  // close); their sockets close when the cancellation completes (reap()).
  void expire_orphans(core::TimePoint now, core::Nanos limit);

 private:
  friend class UringTransport;
  explicit SendRing(std::unique_ptr<io_uring> ring);
  void mark_dirty(SendQueue& q);
  // The transport of `q` is gone: keep q until its bytes are written, or close it now.
  void orphan(std::unique_ptr<SendQueue> q);
  void settle(SendQueue& q);  // after a completion: shutdown, close, or nothing
  // Writes all of q's queued bytes with one send(2), when nothing of q is in flight. False when
  // some are left for the ring (the socket was full); true when written or failed.
  bool send_now(SendQueue& q);

  std::unique_ptr<io_uring> ring_;
  std::vector<SendQueue*> dirty_;  // queued bytes, no send in flight
  std::vector<SendQueue*> retry_;  // submit()'s scratch: those the kernel took no entry for
  std::unordered_map<SendQueue*, std::unique_ptr<SendQueue>> orphans_;
  size_t in_flight_ = 0;          // sends and cancellations submitted, not yet completed
  std::vector<uint64_t> ready_;   // tags for reap() to report writable
  std::vector<uint64_t> notify_;  // reap()'s: those it reports now
};

}  // namespace knee::net
