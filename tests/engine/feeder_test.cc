// The feeders (engine/feeder.h) against a fake pool of connection slots and fake times: the open
// loop releases each request at its intended time, classifies it by that time at the warm-up and
// phase boundaries, queues while no slot is idle, opens slots only while more requests wait than
// are being opened, and counts what never left as never_sent; the closed loop keeps one request
// per slot until it stops. No sockets, no sleeping.
#include "engine/feeder.h"

#include <gtest/gtest.h>

#include <vector>

namespace knee::engine {
namespace {

using namespace std::chrono_literals;
using core::TimePoint;

// Records what a feeder asks; slots connect only when the test says so.
class FakePool final : public ConnectionPool {
 public:
  explicit FakePool(const Phases& phases, uint32_t slots) : slots_(slots), in_system_(phases) {}
  struct Send {
    uint32_t slot;
    TimePoint now, intended;
    bool measured;
  };
  uint32_t slots() const override { return slots_; }
  void open(uint32_t slot, TimePoint) override { opened.push_back(slot); }
  void send(uint32_t slot, TimePoint now, TimePoint intended, bool measured) override {
    sends.push_back({slot, now, intended, measured});
    if (measured) ++stats_.sent;
  }
  void close(uint32_t slot) override { closed.push_back(slot); }
  void close_unbusy(TimePoint) override { ++closed_unbusy; }
  InSystem& in_system() override { return in_system_; }
  core::RunStats& stats() override { return stats_; }

  std::vector<uint32_t> opened, closed;
  std::vector<Send> sends;
  int closed_unbusy = 0;

 private:
  uint32_t slots_;
  InSystem in_system_;
  core::RunStats stats_;
};

Phases phases_at(TimePoint start, core::Nanos warmup, core::Nanos duration) {
  return Phases{start, start + warmup, start + warmup + duration, 1s};
}

TEST(OpenLoopFeeder, ReleasesEachRequestAtItsIntendedTimeAndClassifiesItByThatTime) {
  const TimePoint t0{};
  const Phases phases = phases_at(t0, 20ms, 30ms);  // 100 req/s: one every 10 ms
  FakePool pool(phases, 4);
  OpenLoopFeeder feeder(phases, ArrivalSchedule(Arrival::kUniform, 100, 1, 0, 1));
  feeder.start(pool, t0);
  feeder.tick(pool, t0);  // the arrival at 0 ms is due: a slot is opened for it
  ASSERT_EQ(pool.opened.size(), 1u);
  EXPECT_TRUE(pool.sends.empty()) << "no slot is connected yet";
  feeder.on_idle(pool, pool.opened[0], t0 + 1ms);  // connected 1 ms later
  ASSERT_EQ(pool.sends.size(), 1u);
  EXPECT_EQ(pool.sends[0].intended, t0);
  EXPECT_EQ(pool.sends[0].now, t0 + 1ms) << "it left late, and its latency runs from 0 ms";
  EXPECT_FALSE(pool.sends[0].measured) << "intended during warm-up";
  for (int ms = 10; ms <= 60; ms += 10) {
    feeder.on_idle(pool, pool.sends.back().slot, t0 + core::Nanos(ms * 1'000'000 - 1));
    feeder.tick(pool, t0 + std::chrono::milliseconds(ms));
  }
  // Arrivals at 0..40 ms: the one at 20 ms, exactly measure_from, is measured; nothing is released
  // at or after measure_until (50 ms).
  ASSERT_EQ(pool.sends.size(), 5u);
  std::vector<bool> measured;
  for (const auto& s : pool.sends) measured.push_back(s.measured);
  EXPECT_EQ(measured, (std::vector<bool>{false, false, true, true, true}));
  EXPECT_EQ(pool.stats().scheduled, 3u);
  EXPECT_EQ(pool.stats().sent, 3u);
  EXPECT_FALSE(feeder.next_send()) << "the next arrival would be at measure_until";
  EXPECT_TRUE(feeder.drained());
}

TEST(OpenLoopFeeder, QueuesWhileNoSlotIsIdleAndCountsWhatNeverLeft) {
  const TimePoint t0{};
  const Phases phases = phases_at(t0, 0ms, 100ms);
  FakePool pool(phases, 2);
  OpenLoopFeeder feeder(phases, ArrivalSchedule(Arrival::kUniform, 100, 1, 0, 1));
  feeder.start(pool, t0);
  feeder.tick(pool, t0 + 45ms);  // five arrivals due, two slots: both opened, none more
  EXPECT_EQ(pool.opened.size(), 2u);
  EXPECT_EQ(feeder.backlog(), 5u);
  EXPECT_EQ(pool.stats().max_backlog, 5u);
  feeder.on_idle(pool, pool.opened[0], t0 + 46ms);
  EXPECT_EQ(feeder.backlog(), 4u);
  ASSERT_EQ(pool.sends.size(), 1u);
  EXPECT_EQ(pool.sends[0].intended, t0) << "the oldest waiting request goes first";
  // A slot that closes is free again and is reopened for the waiting requests.
  feeder.on_free(pool, pool.opened[1], t0 + 47ms);
  EXPECT_EQ(pool.opened.size(), 3u);
  feeder.stop(pool, t0 + 100ms);
  feeder.abort_waiting(pool, t0 + 1100ms);
  EXPECT_TRUE(feeder.drained());
  EXPECT_EQ(pool.stats().scheduled, 5u);
  EXPECT_EQ(pool.stats().never_sent, 4u);
  EXPECT_EQ(pool.stats().scheduled, pool.stats().sent + pool.stats().never_sent);
}

// Regression (issue 12): a burst of arrivals opened one connection per waiting request; over
// TLS at 20000 req/s that was 19904 handshakes at once and nothing completed.
// Regression: a server that stalled held the pool, and the sends that waited for it made the
// client rule say "the client could not keep its schedule with connections free".
TEST(OpenLoopFeeder, LatenessIsTheClientsOnlyFromWhenAConnectionWasThere) {
  const TimePoint t0{};
  const Phases phases = phases_at(t0, 0ms, 100ms);  // 100 req/s: one every 10 ms
  FakePool pool(phases, 1);
  OpenLoopFeeder feeder(phases, ArrivalSchedule(Arrival::kUniform, 100, 1, 0, 1));
  feeder.start(pool, t0);
  feeder.tick(pool, t0);
  feeder.on_idle(pool, 0, t0 + 100us);  // connected: the 0 ms request leaves 0.1 ms late
  for (auto ms : {10ms, 20ms, 30ms}) feeder.tick(pool, t0 + ms);  // the server stalls
  ASSERT_EQ(feeder.backlog(), 3u);
  for (auto ms : {35ms, 36ms, 37ms}) feeder.on_idle(pool, 0, t0 + ms);  // and answers again
  ASSERT_EQ(pool.sends.size(), 4u);
  EXPECT_EQ(pool.sends[1].now - pool.sends[1].intended, 25ms) << "late, waiting for the pool";
  EXPECT_EQ(pool.stats().late_with_connection_free, 0u);
  feeder.on_idle(pool, 0, t0 + 38ms);  // idle from 38 ms
  feeder.tick(pool, t0 + 43ms);        // the client wakes 3 ms after the 40 ms request was due
  ASSERT_EQ(pool.sends.size(), 5u);
  EXPECT_EQ(pool.stats().late_with_connection_free, 1u);
  feeder.on_idle(pool, 0, t0 + 44ms);
  feeder.tick(pool, t0 + 50ms + 900us);  // 0.9 ms late: not late
  EXPECT_EQ(pool.stats().late_with_connection_free, 1u);
}

// Regression (a new user's trial of --stages): the pool was never exhausted while a request
// waited for the connection opened for it, so the connect's time counted as the client's own
// lateness "with connections free", and the first send of a run named the client.
TEST(OpenLoopFeeder, WaitingForANewConnectionIsNotTheClientsLateness) {
  const TimePoint t0{};
  const Phases phases = phases_at(t0, 0ms, 100ms);  // 100 req/s: one every 10 ms
  FakePool pool(phases, 4);
  OpenLoopFeeder feeder(phases, ArrivalSchedule(Arrival::kUniform, 100, 1, 0, 1));
  feeder.start(pool, t0);
  feeder.tick(pool, t0);
  ASSERT_EQ(pool.opened.size(), 1u);
  feeder.on_idle(pool, pool.opened[0], t0 + 5ms);  // a slow connect (a TLS handshake)
  ASSERT_EQ(pool.sends.size(), 1u);
  EXPECT_EQ(pool.sends[0].now - pool.sends[0].intended, 5ms) << "its latency keeps the wait";
  EXPECT_EQ(pool.stats().late_with_connection_free, 0u) << "it waited for the server's connect";
  // The connection idle from 6 ms; the client wakes 2 ms after the 10 ms request was due.
  feeder.on_idle(pool, pool.opened[0], t0 + 6ms);
  feeder.tick(pool, t0 + 12ms);
  ASSERT_EQ(pool.sends.size(), 2u);
  EXPECT_EQ(pool.stats().late_with_connection_free, 1u) << "that lateness is the client's";
}

TEST(OpenLoopFeeder, OpensAtMostKMaxOpeningConnectionsAtOnce) {
  const TimePoint t0{};
  const Phases phases = phases_at(t0, 0ms, 1s);
  FakePool pool(phases, 1000);
  OpenLoopFeeder feeder(phases, ArrivalSchedule(Arrival::kUniform, 100000, 1, 0, 1));
  feeder.start(pool, t0);
  feeder.tick(pool, t0 + 5ms);  // 501 arrivals due, 1000 slots free
  EXPECT_EQ(feeder.backlog(), 501u);
  EXPECT_EQ(pool.opened.size(), OpenLoopFeeder::kMaxOpening);
  // One connects and takes a request; one more may open in its place.
  feeder.on_idle(pool, pool.opened[0], t0 + 6ms);
  EXPECT_EQ(pool.sends.size(), 1u);
  EXPECT_EQ(pool.opened.size(), OpenLoopFeeder::kMaxOpening + 1);
}

TEST(ClosedLoopFeeder, KeepsOneRequestPerSlotUntilItStops) {
  const TimePoint t0{};
  const Phases phases = phases_at(t0, 10ms, 10ms);
  FakePool pool(phases, 3);
  ClosedLoopFeeder feeder(phases);
  feeder.start(pool, t0);
  EXPECT_EQ(pool.opened, (std::vector<uint32_t>{0, 1, 2}));
  feeder.on_idle(pool, 1, t0 + 5ms);
  feeder.on_idle(pool, 1, t0 + 10ms);
  ASSERT_EQ(pool.sends.size(), 2u);
  EXPECT_FALSE(pool.sends[0].measured) << "sent during warm-up";
  EXPECT_TRUE(pool.sends[1].measured) << "sent at measure_from";
  EXPECT_EQ(pool.sends[1].intended, pool.sends[1].now) << "no schedule: sent when intended";
  feeder.on_free(pool, 2, t0 + 11ms);
  EXPECT_EQ(pool.opened.size(), 4u) << "a closed slot is reopened";
  feeder.stop(pool, t0 + 20ms);
  EXPECT_EQ(pool.closed_unbusy, 1);
  feeder.on_idle(pool, 1, t0 + 21ms);
  EXPECT_EQ(pool.closed, (std::vector<uint32_t>{1})) << "after the phase nothing new is sent";
  feeder.on_free(pool, 0, t0 + 22ms);
  EXPECT_EQ(pool.opened.size(), 4u) << "nor reopened";
  EXPECT_TRUE(feeder.drained());
}

TEST(InSystem, IntegratesOnlyOverTheMeasuredPhase) {
  const TimePoint t0{};
  const Phases phases = phases_at(t0, 10ms, 10ms);
  InSystem in(phases);
  in.change(t0 + 5ms, +2);   // two enter during warm-up
  in.change(t0 + 15ms, -1);  // one leaves half-way: 2 for 5 ms
  in.change(t0 + 30ms, -1);  // the other after the phase: 1 for 5 ms more
  EXPECT_DOUBLE_EQ(in.integral_ns(), 2 * 5e6 + 1 * 5e6);
  EXPECT_EQ(in.count(), 0);
}

}  // namespace
}  // namespace knee::engine
