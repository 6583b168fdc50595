#include "engine/feeder.h"

#include <algorithm>

namespace knee::engine {

using core::TimePoint;

void InSystem::change(TimePoint t, int delta) {
  // Integrates the count over the measured phase only.
  // Regression: under ThreadSanitizer a -n run over 4 connections measured L = 4.02: another
  // worker's last send had ended the phase while this one waited, and the response that woke it
  // was integrated past that end.
  const TimePoint from = std::max(since_, phases_.measure_from);
  TimePoint to = std::min(t, phases_.measure_until);
  if (published_end_ != nullptr) {
    if (const int64_t end = published_end_->load(std::memory_order_acquire); end != 0) {
      to = std::min(to, TimePoint(core::Nanos(end)));
    }
  }
  if (to > from && count_ > 0) {
    integral_ns_ += static_cast<double>(count_) * static_cast<double>(core::elapsed_ns(from, to));
  }
  if (t > since_) since_ = t;
  count_ += delta;
}

// ---- closed loop ----

void ClosedLoopFeeder::start(ConnectionPool& pool, TimePoint now) {
  for (uint32_t i = 0; i < pool.slots(); ++i) pool.open(i, now);
}

void ClosedLoopFeeder::on_idle(ConnectionPool& pool, uint32_t slot, TimePoint now) {
  // Nothing is sent at or after the end of the phase, even before the worker notices it: a
  // request sent then would belong to neither phase (regression: with -w 0 they were counted as
  // warm-up).
  if (stopping_ || now >= phases_.measure_until) {
    pool.close(slot);
    return;
  }
  pool.send(slot, now, now, phases_.measured(now));
}

void ClosedLoopFeeder::on_free(ConnectionPool& pool, uint32_t slot, TimePoint now) {
  if (!stopping_ && now < phases_.measure_until) pool.open(slot, now);
}

void ClosedLoopFeeder::stop(ConnectionPool& pool, TimePoint now) {
  stopping_ = true;
  pool.close_unbusy(now);
}

// ---- open loop ----

void OpenLoopFeeder::start(ConnectionPool& pool, TimePoint /*now*/) {
  slot_.assign(pool.slots(), Slot::kFree);
  // Lowest slot first, so {conn} numbers grow from 0 as connections are needed.
  for (uint32_t i = pool.slots(); i-- > 0;) free_.push_back(i);
}

void OpenLoopFeeder::tick(ConnectionPool& pool, TimePoint now) {
  release_due(pool, now);
  dispatch(pool, now);
}

std::optional<TimePoint> OpenLoopFeeder::next_send() const {
  if (stopping_) return std::nullopt;
  const TimePoint next = phases_.start + core::Nanos(schedule_.next_ns());
  // Nothing is scheduled at or after the end of the phase, so that arrival sets no deadline.
  if (next >= phases_.measure_until) return std::nullopt;
  return next;
}

void OpenLoopFeeder::release_due(ConnectionPool& pool, TimePoint now) {
  core::RunStats& stats = pool.stats();
  while (true) {
    const TimePoint intended = phases_.start + core::Nanos(schedule_.next_ns());
    if (intended > now || intended >= phases_.measure_until) break;
    const bool measured = intended >= phases_.measure_from;
    ++(measured ? stats.scheduled : stats.warmup.scheduled);
    backlog_.push_back(Due{intended, measured});
    pool.in_system().change(intended, +1);
    schedule_.advance();
  }
  stats.max_backlog = std::max<uint64_t>(stats.max_backlog, backlog_.size());
}

// Hands waiting requests to idle slots, opening new ones (up to the cap, kMaxOpening at a time)
// while more requests wait than slots are being opened.
void OpenLoopFeeder::dispatch(ConnectionPool& pool, TimePoint now) {
  while (!backlog_.empty()) {
    if (!idle_.empty()) {
      const uint32_t i = idle_.back();
      idle_.pop_back();
      if (slot_[i] != Slot::kIdle) continue;  // closed or reused since it was pushed
      const Due due = backlog_.front();
      backlog_.pop_front();
      if (due.measured && now - std::max(due.intended, *idle_since_) > kLate) {
        ++pool.stats().late_with_connection_free;
      }
      set_slot(i, Slot::kBusy, now);
      pool.in_system().change(now, -1);  // leaves the backlog; the send counts it in flight
      pool.send(i, now, due.intended, due.measured);
      continue;
    }
    if (backlog_.size() <= opening_ || opening_ >= kMaxOpening || free_.empty()) break;
    const uint32_t i = free_.back();
    free_.pop_back();
    if (slot_[i] != Slot::kFree) continue;
    set_slot(i, Slot::kOpening, now);
    pool.open(i, now);
  }
}

void OpenLoopFeeder::set_slot(uint32_t i, Slot to, TimePoint now) {
  if (slot_[i] == Slot::kOpening) --opening_;
  if (slot_[i] == Slot::kBusy) --busy_;
  if (slot_[i] == Slot::kIdle) --idle_count_;
  if (to == Slot::kOpening) ++opening_;
  if (to == Slot::kBusy) ++busy_;
  if (to == Slot::kIdle) ++idle_count_;
  slot_[i] = to;
  // Read in dispatch() before the slot it takes turns busy, so it holds while one is idle.
  if (idle_count_ == 0) idle_since_.reset();
  if (idle_count_ > 0 && !idle_since_) idle_since_ = now;
  // Exhausted: no connection is idle or free to open; the ones connecting count as taken (a
  // server that closes after each response, or accepts slowly, keeps slots connecting).
  const bool full = busy_ + opening_ == slot_.size();
  if (full && !full_since_) full_since_ = now;
  if (!full && full_since_) {
    full_ns_ += full_stretch_ns(now);
    full_since_.reset();
  }
}

int64_t OpenLoopFeeder::full_stretch_ns(TimePoint until) const {
  if (!full_since_) return 0;
  const TimePoint from = std::max(*full_since_, phases_.measure_from);
  until = std::min(until, phases_.measure_until);
  return until > from ? core::elapsed_ns(from, until) : 0;
}

int64_t OpenLoopFeeder::pool_full_ns(TimePoint now) const {
  return full_ns_ + full_stretch_ns(now);  // exhausted now: the stretch so far counts
}

void OpenLoopFeeder::stop(ConnectionPool& pool, TimePoint now) {
  stopping_ = true;
  if (full_since_) {
    full_ns_ += full_stretch_ns(now);
    full_since_ = now;  // counted up to here; the phase is over, so nothing more adds
  }
  pool.stats().pool_full_ns += full_ns_;
  full_ns_ = 0;
}

void OpenLoopFeeder::on_idle(ConnectionPool& pool, uint32_t slot, TimePoint now) {
  set_slot(slot, Slot::kIdle, now);
  idle_.push_back(slot);
  dispatch(pool, now);
}

void OpenLoopFeeder::on_free(ConnectionPool& pool, uint32_t slot, TimePoint now) {
  set_slot(slot, Slot::kFree, now);
  free_.push_back(slot);
  dispatch(pool, now);
}

void OpenLoopFeeder::abort_waiting(ConnectionPool& pool, TimePoint now) {
  core::RunStats& stats = pool.stats();
  for (const Due& due : backlog_) {
    if (due.measured) {
      ++stats.never_sent;
    } else {
      ++stats.warmup.never_sent;
      ++stats.warmup.carried_over;  // waited from the warm-up into the measured phase and past it
    }
    pool.in_system().change(now, -1);
  }
  backlog_.clear();
}

}  // namespace knee::engine
