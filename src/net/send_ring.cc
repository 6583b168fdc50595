#include "net/send_ring.h"

#include <liburing.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>

namespace knee::net {

using core::Result;
using core::Status;

// One connection's unsent bytes. `queued` fills while `sending` is in flight; a completion swaps
// them, so a steady load reuses the same two buffers and allocates nothing per response.
struct SendQueue {
  Fd socket;
  uint64_t tag = 0;
  std::string queued;   // not yet handed to the kernel
  std::string sending;  // handed to the kernel: [sent, size) still to go
  size_t sent = 0;
  bool in_flight = false;  // a send of `sending` is submitted and not completed
  bool dirty = false;      // in SendRing::dirty_
  bool blocked = false;    // send_some() refused bytes: tell the owner when room comes back
  bool shut_pending = false;
  bool cancelled = false;
  int error = 0;                  // the errno of a failed send; nothing more is sent
  core::TimePoint orphaned_at{};  // when expire_orphans() first saw it orphaned (epoch: not yet)
  bool orphaned = false;

  size_t unsent() const { return queued.size() + (sending.size() - sent); }
};

namespace {
// user_data of a cancellation's own completion (a SendQueue* is never 0).
constexpr uint64_t kCancelData = 0;
}  // namespace

std::string_view io_path_name(IoPath io) { return io == IoPath::kUring ? "uring" : "epoll"; }

UringTransport::UringTransport(SendRing& ring, std::unique_ptr<SendQueue> queue)
    : ring_(ring), queue_(std::move(queue)) {}

UringTransport::~UringTransport() { ring_.orphan(std::move(queue_)); }

int UringTransport::fd() const { return queue_->socket.get(); }

size_t UringTransport::unsent() const { return queue_->unsent(); }

IoResult UringTransport::finish_connect() {
  const int err = connect_error(queue_->socket.get());
  return err == 0 ? IoResult::done(0) : IoResult::failed(err);
}

IoResult UringTransport::send_some(std::string_view data) {
  SendQueue& q = *queue_;
  if (q.error != 0) return IoResult::failed(q.error);
  if (data.empty()) return IoResult::done(0);
  const size_t unsent = q.unsent();
  if (unsent >= SendRing::kMaxQueuedBytes) {
    q.blocked = true;
    return IoResult::would_block(/*wants_write=*/true);
  }
  const size_t n = std::min(data.size(), SendRing::kMaxQueuedBytes - unsent);
  q.queued.append(data.substr(0, n));
  ring_.mark_dirty(q);
  // A response waits for the work of those queued after it: a full batch goes at once.
  if (ring_.dirty_.size() >= SendRing::kMaxBatch) (void)ring_.submit();
  return IoResult::done(n);
}

IoResult UringTransport::recv_some(std::span<char> buffer) {
  return recv_plain(queue_->socket.get(), buffer);
}

void UringTransport::shutdown_write() {
  SendQueue& q = *queue_;
  if (q.unsent() > 0 && q.error == 0) {
    q.shut_pending = true;  // after the last byte (SendRing::settle)
    return;
  }
  ::shutdown(q.socket.get(), SHUT_WR);
}

Result<std::unique_ptr<SendRing>> SendRing::create(unsigned entries) {
  auto ring = std::make_unique<io_uring>();
  io_uring_params params{};
  // The completion queue holds sends and cancellations of every connection: room for many.
  params.flags = IORING_SETUP_CQSIZE;
  params.cq_entries = entries * 16;
  if (const int e = io_uring_queue_init_params(entries, ring.get(), &params); e < 0) {
    return Status::from_errno("io_uring_queue_init", -e);
  }
  return std::unique_ptr<SendRing>(new SendRing(std::move(ring)));
}

SendRing::SendRing(std::unique_ptr<io_uring> ring) : ring_(std::move(ring)) {}

SendRing::~SendRing() {
  if (in_flight_ > 0) {
    // The kernel may still read the buffers of sends in flight: cancel them all and wait (at
    // most a second) for their completions before the buffers go.
    if (io_uring_sqe* sqe = io_uring_get_sqe(ring_.get())) {
      io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL);
      io_uring_sqe_set_data64(sqe, kCancelData);
      ++in_flight_;
      io_uring_submit(ring_.get());
    }
    const auto deadline = core::Clock::now() + std::chrono::seconds(1);
    while (in_flight_ > 0 && core::Clock::now() < deadline) {
      io_uring_cqe* cqe = nullptr;
      __kernel_timespec wait{0, 10'000'000};
      if (io_uring_wait_cqe_timeout(ring_.get(), &cqe, &wait) != 0 || cqe == nullptr) continue;
      io_uring_cqe_seen(ring_.get(), cqe);
      --in_flight_;
    }
  }
  io_uring_queue_exit(ring_.get());
}

int SendRing::fd() const { return ring_->ring_fd; }

bool SendRing::has_ready() const { return !ready_.empty(); }

bool SendRing::has_queued() const { return !dirty_.empty() || io_uring_sq_ready(ring_.get()) > 0; }

std::unique_ptr<UringTransport> SendRing::adopt(Fd socket, uint64_t tag) {
  auto q = std::make_unique<SendQueue>();
  q->socket = std::move(socket);
  q->tag = tag;
  return std::unique_ptr<UringTransport>(new UringTransport(*this, std::move(q)));
}

void SendRing::mark_dirty(SendQueue& q) {
  if (q.dirty || q.in_flight) return;  // a completion marks it again when it still has bytes
  q.dirty = true;
  dirty_.push_back(&q);
}

Status SendRing::submit() {
  // One connection to write: a send(2) of its own costs less than io_uring_enter's set-up.
  if (dirty_.size() == 1) {
    SendQueue* q = dirty_.front();
    q->dirty = false;
    dirty_.clear();
    if (send_now(*q)) return Status::success();  // q may be gone (an orphan, done)
    q->dirty = true;
    dirty_.push_back(q);
  }
  for (SendQueue* q : dirty_) {
    q->dirty = false;
    if (q->in_flight || q->error != 0) continue;
    if (q->sent == q->sending.size()) {
      q->sending.clear();
      q->sent = 0;
      std::swap(q->sending, q->queued);
    }
    if (q->sending.empty()) continue;
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    if (sqe == nullptr) {  // the submission queue is full: hand it over, then go on
      (void)io_uring_submit(ring_.get());
      sqe = io_uring_get_sqe(ring_.get());
    }
    if (sqe == nullptr) {  // the kernel takes no more now: the rest stays queued for next time
      q->dirty = true;
      retry_.push_back(q);
      continue;
    }
    io_uring_prep_send(sqe, q->socket.get(), q->sending.data() + q->sent,
                       q->sending.size() - q->sent, MSG_NOSIGNAL);
    io_uring_sqe_set_data(sqe, q);
    q->in_flight = true;
    ++in_flight_;
  }
  dirty_.swap(retry_);
  retry_.clear();
  if (io_uring_sq_ready(ring_.get()) == 0) return Status::success();
  // EBUSY (completions overflowed: reap first), EAGAIN and EINTR leave the entries in the
  // submission queue for the next call.
  if (const int e = io_uring_submit(ring_.get());
      e < 0 && e != -EINTR && e != -EAGAIN && e != -EBUSY) {
    return Status::from_errno("io_uring_enter", -e);
  }
  return Status::success();
}

bool SendRing::send_now(SendQueue& q) {
  if (q.in_flight || q.error != 0 || q.sent != q.sending.size()) return false;
  const ssize_t n = ::send(q.socket.get(), q.queued.data(), q.queued.size(), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n < 0) {
    q.error = errno;
    q.queued.clear();
  } else {
    q.queued.erase(0, static_cast<size_t>(n));  // a rest goes through the ring
    if (!q.queued.empty()) return false;
  }
  if (!q.orphaned && q.blocked) {
    q.blocked = false;
    ready_.push_back(q.tag);  // the next reap() says so
  }
  settle(q);  // may free an orphan's q
  return true;
}

void SendRing::reap(const std::function<void(uint64_t tag)>& writable) {
  io_uring_cqe* cqe = nullptr;
  unsigned head = 0;
  unsigned seen = 0;
  io_uring_for_each_cqe(ring_.get(), head, cqe) {
    ++seen;
    --in_flight_;
    if (cqe->user_data == kCancelData) continue;
    auto* q = static_cast<SendQueue*>(io_uring_cqe_get_data(cqe));
    q->in_flight = false;
    const int res = q->cancelled ? -ECANCELED : cqe->res;  // an expired orphan sends no more
    if (res > 0) {
      q->sent += static_cast<size_t>(res);
    } else if (res != -EINTR && res != -EAGAIN) {
      q->error = res == 0 ? EPIPE : -res;  // ECANCELED for an expired orphan
      q->queued.clear();
      q->sending.clear();
      q->sent = 0;
    }
    if (q->unsent() > 0 && q->error == 0) mark_dirty(*q);  // the rest, on the next submit()
    if (!q->orphaned && q->blocked && (q->error != 0 || q->unsent() < kMaxQueuedBytes)) {
      q->blocked = false;
      ready_.push_back(q->tag);
    }
    settle(*q);  // may free an orphan's q
  }
  io_uring_cq_advance(ring_.get(), seen);
  // A callback may submit (the lab server does before burning CPU), and a send(2) that empties a
  // blocked queue adds to ready_: those wait for the next reap(), whose caller asks has_ready().
  notify_.swap(ready_);
  for (uint64_t tag : notify_) writable(tag);
  notify_.clear();
}

void SendRing::settle(SendQueue& q) {
  const bool done = q.unsent() == 0 || q.error != 0;
  if (!done) return;
  if (q.shut_pending && q.error == 0) ::shutdown(q.socket.get(), SHUT_WR);
  q.shut_pending = false;
  if (q.orphaned && !q.in_flight) orphans_.erase(&q);  // closes its socket
}

void SendRing::orphan(std::unique_ptr<SendQueue> q) {
  if (!q) return;
  if ((q->unsent() == 0 || q->error != 0) && !q->in_flight) {
    if (q->dirty) std::erase(dirty_, q.get());
    return;  // nothing left to write: the socket closes now
  }
  q->orphaned = true;
  SendQueue* key = q.get();
  orphans_.emplace(key, std::move(q));
}

void SendRing::expire_orphans(core::TimePoint now, core::Nanos limit) {
  bool any = false;
  std::vector<SendQueue*> unsubmitted;  // queued only: nothing for the kernel to cancel
  for (auto& [key, q] : orphans_) {
    if (q->cancelled) continue;
    if (q->orphaned_at == core::TimePoint{}) {  // first seen now, by the owner's clock
      q->orphaned_at = now;
      continue;
    }
    if (now - q->orphaned_at < limit) continue;
    if (!q->in_flight) {
      unsubmitted.push_back(key);
      continue;
    }
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    if (sqe == nullptr) {
      io_uring_submit(ring_.get());
      sqe = io_uring_get_sqe(ring_.get());
      if (sqe == nullptr) break;  // the next call tries again
    }
    q->cancelled = true;
    io_uring_prep_cancel64(sqe, reinterpret_cast<uint64_t>(key), 0);
    io_uring_sqe_set_data64(sqe, kCancelData);
    ++in_flight_;
    any = true;
  }
  for (SendQueue* q : unsubmitted) {
    if (q->dirty) std::erase(dirty_, q);
    orphans_.erase(q);  // closes its socket
  }
  if (any) io_uring_submit(ring_.get());
}

}  // namespace knee::net
