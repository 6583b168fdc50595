// FakeClock: a core::ClockSource whose time moves only when a test says so, so schedules,
// timeouts, grace periods and warm-up boundaries are tested without waiting for them (ninja's
// fake clock). A loop driven by it blocks at most 1 ms of real time per wait (blocking_time), so it
// notices at once when the test moves the time on; everything that happens on real sockets
// between two advances happens at the same fake instant.
//
// Thread-safety: now() and blocking_time() may be called from the worker's thread while the test
// thread calls advance() or set(); the time is one atomic.
#pragma once

#include <atomic>
#include <chrono>

#include "core/clock.h"

namespace knee::testing {

class FakeClock final : public core::ClockSource {
 public:
  explicit FakeClock(core::TimePoint start = core::TimePoint(std::chrono::seconds(1000)))
      : ns_(start.time_since_epoch().count()) {}
  core::TimePoint now() const override {
    return core::TimePoint(core::Nanos(ns_.load(std::memory_order_acquire)));
  }
  core::Nanos blocking_time(core::TimePoint deadline) const override {
    return deadline > now() ? std::chrono::milliseconds(1) : core::Nanos(0);
  }
  void advance(core::Nanos d) { ns_.fetch_add(d.count(), std::memory_order_acq_rel); }
  void set(core::TimePoint t) {
    ns_.store(t.time_since_epoch().count(), std::memory_order_release);
  }

 private:
  std::atomic<int64_t> ns_;
};

}  // namespace knee::testing
