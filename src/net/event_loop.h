// The per-thread event loop of the load engine and the lab server: a thin wrapper over one epoll
// instance, with nanosecond wait deadlines (epoll_pwait2) and a wake-up from other threads.
//
// The loop has no callbacks: its owner registers fds with a 64-bit tag of its choosing, calls
// wait() with the time left until its own nearest timer (see TimerHeap; the owner reads its own
// clock, so a test's fake clock drives the loop too), and dispatches the returned events by tag.
// This keeps every queue visible in the owner's code, which is what knee measures.
//
// Tags: EventTag packs a connection slot and the slot's generation. A slot's generation changes
// whenever its connection closes, so an event that was already returned for an old connection
// (a later entry of the same wait() batch) is recognised as stale and ignored, and a timer entry
// carrying the tag likewise.
//
// Ownership: the loop owns its epoll fd and wake-up eventfd, never the registered fds.
// Thread-safety: one thread calls add/modify/remove/wait; any thread may call wake().
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <span>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "net/socket.h"

namespace knee::net {

// (slot, generation) in one 64-bit epoll tag. Slots above kMaxSlot are reserved for the owner's
// own fixed tags (a listener) and for the loop's wake-up.
struct EventTag {
  static constexpr uint32_t kMaxSlot = 0xffff'fff0u;
  uint32_t slot = 0;
  uint32_t generation = 0;

  uint64_t value() const { return (uint64_t{generation} << 32) | uint64_t{slot}; }
  static EventTag of(uint64_t v) {
    return EventTag{static_cast<uint32_t>(v & 0xffff'ffffu), static_cast<uint32_t>(v >> 32)};
  }
  bool operator==(const EventTag&) const = default;
};

class EventLoop {
 public:
  // Creates the epoll instance and the wake-up eventfd. Errors: kIoError naming the call.
  static core::Result<EventLoop> create();

  EventLoop(EventLoop&&) = default;
  EventLoop& operator=(EventLoop&&) = default;

  // Registers fd for `events` (EPOLLIN, EPOLLOUT, ...); `tag` comes back with each event.
  core::Status add(int fd, uint32_t events, uint64_t tag);
  core::Status modify(int fd, uint32_t events, uint64_t tag);
  // Unregisters fd (closing it also does). Never fails visibly.
  void remove(int fd);

  // Waits until an fd is ready, wake() is called, or `timeout` has passed (nullopt: no limit; 0
  // only polls). Fills `out` and returns how many events it holds; wake-ups are consumed here
  // and not returned. Errors: kIoError from epoll (EINTR returns 0).
  core::Result<int> wait(std::span<epoll_event> out, std::optional<core::Nanos> timeout);

  // Makes a wait() in progress (or the next one) return early. Safe from any thread.
  void wake();

 private:
  EventLoop(Fd epoll, Fd wake) : epoll_(std::move(epoll)), wake_(std::move(wake)) {}
  Fd epoll_;
  Fd wake_;
};

// A min-heap of deadlines with a payload, for an event loop's owner: its next_deadline() goes to
// EventLoop::wait(), and pop_due() hands back what is due. Cancellation is the owner's business:
// put a generation number in T and ignore stale entries. Not thread-safe (one owner).
template <typename T>
class TimerHeap {
 public:
  void push(core::TimePoint deadline, T payload) { heap_.push(Entry{deadline, seq_++, payload}); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  std::optional<core::TimePoint> next_deadline() const {
    if (heap_.empty()) return std::nullopt;
    return heap_.top().deadline;
  }
  // Calls fn(payload) for every entry whose deadline is <= now, earliest first (FIFO among equal
  // deadlines). fn may push new entries.
  template <typename F>
  void pop_due(core::TimePoint now, F&& fn) {
    while (!heap_.empty() && heap_.top().deadline <= now) {
      T payload = heap_.top().payload;
      heap_.pop();
      fn(payload);
    }
  }

 private:
  struct Entry {
    core::TimePoint deadline;
    uint64_t seq;
    T payload;
    bool operator>(const Entry& o) const {
      return deadline != o.deadline ? deadline > o.deadline : seq > o.seq;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  uint64_t seq_ = 0;
};

}  // namespace knee::net
