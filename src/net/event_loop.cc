#include "net/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>

namespace knee::net {

using core::Result;
using core::Status;

namespace {
constexpr uint64_t kWakeTag = std::numeric_limits<uint64_t>::max();
}  // namespace

Result<EventLoop> EventLoop::create() {
  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return Status::from_errno("epoll_create1", errno);
  Fd epoll(ep);
  int ev = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (ev < 0) return Status::from_errno("eventfd", errno);
  Fd wake(ev);
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kWakeTag;
  if (::epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e) != 0) return Status::from_errno("epoll_ctl", errno);
  return EventLoop(std::move(epoll), std::move(wake));
}

Status EventLoop::add(int fd, uint32_t events, uint64_t tag) {
  epoll_event e{};
  e.events = events;
  e.data.u64 = tag;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &e) != 0) {
    return Status::from_errno("epoll_ctl ADD", errno);
  }
  return Status::success();
}

Status EventLoop::modify(int fd, uint32_t events, uint64_t tag) {
  epoll_event e{};
  e.events = events;
  e.data.u64 = tag;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &e) != 0) {
    return Status::from_errno("epoll_ctl MOD", errno);
  }
  return Status::success();
}

void EventLoop::remove(int fd) { ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr); }

Result<int> EventLoop::wait(std::span<epoll_event> out, std::optional<core::Nanos> timeout) {
  timespec ts{};
  timespec* limit = nullptr;
  if (timeout) {
    const int64_t ns = std::max<int64_t>(0, timeout->count());
    ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    limit = &ts;
  }
  int n = ::epoll_pwait2(epoll_.get(), out.data(), static_cast<int>(out.size()), limit, nullptr);
  if (n < 0) {
    if (errno == EINTR) return 0;
    return Status::from_errno("epoll_pwait2", errno);
  }
  // Drop the wake-up event, keeping the order of the rest.
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    if (out[static_cast<size_t>(i)].data.u64 == kWakeTag) {
      uint64_t v;
      [[maybe_unused]] ssize_t r = ::read(wake_.get(), &v, sizeof v);
      continue;
    }
    out[static_cast<size_t>(kept++)] = out[static_cast<size_t>(i)];
  }
  return kept;
}

void EventLoop::wake() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t r = ::write(wake_.get(), &one, sizeof one);
}

}  // namespace knee::net
