#include "net/write_path.h"

#include <sys/epoll.h>

#include <cerrno>
#include <utility>

namespace knee::net {

namespace {

// SendRing::create's failure in the user's terms, with the field the flag is found by.
core::Status unavailable(const core::Status& failed) {
  const int err = failed.os_error();
  return failed.with_field("io").with_context(
      err == ENOSYS || err == EPERM
          ? "uring: this kernel has no io_uring or forbids it; leave --io at epoll"
          : "uring: io_uring could not be set up here; leave --io at epoll");
}

}  // namespace

core::Status WritePath::check(IoPath io) {
  if (io == IoPath::kEpoll) return core::Status::success();
  auto ring = SendRing::create(8);
  return ring ? core::Status::success() : unavailable(ring.status());
}

core::Result<WritePath> WritePath::open(IoPath io, EventLoop& loop) {
  if (io == IoPath::kEpoll) return WritePath();
  auto ring = SendRing::create();
  if (!ring) return unavailable(ring.status());
  if (core::Status added = loop.add(ring.value()->fd(), EPOLLIN, kSendRingTag); !added) {
    return added;  // level-triggered: completions left unreaped wake the next wait too
  }
  return WritePath(std::move(ring).value());
}

std::unique_ptr<Transport> WritePath::wrap(Fd socket, uint64_t tag) {
  if (ring_) return ring_->adopt(std::move(socket), tag);
  return std::make_unique<TcpTransport>(std::move(socket));
}

uint32_t WritePath::write_events() const { return ring_ ? 0U : static_cast<uint32_t>(EPOLLOUT); }

core::Status WritePath::pass(const std::function<void(uint64_t tag)>& writable) {
  if (!ring_) return core::Status::success();
  // Writing on a connection that has room again can queue more, and so can a partial send's
  // rest; a few rounds settle it, and what is left makes the owner's wait a poll (pending()).
  for (int round = 0; round < 4; ++round) {
    ring_->reap(writable);
    if (!pending()) return core::Status::success();
    if (core::Status submitted = ring_->submit(); !submitted) return submitted;
  }
  return core::Status::success();
}

bool WritePath::pending() const { return ring_ && (ring_->has_queued() || ring_->has_ready()); }

void WritePath::release(EventLoop& loop, const Transport& transport) const {
  // Closing a socket removes it from epoll (never dup'ed); one the ring keeps open would stay.
  if (ring_ && transport.unsent() > 0) loop.remove(transport.fd());
}

void WritePath::submit_queued() {
  if (ring_ && ring_->has_queued()) (void)ring_->submit();  // an error shows on the next write
}

size_t WritePath::unwritten_connections() const { return ring_ ? ring_->orphans() : 0; }

void WritePath::expire(core::TimePoint now, core::Nanos limit) {
  if (ring_) ring_->expire_orphans(now, limit);
}

}  // namespace knee::net
