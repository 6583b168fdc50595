// The event loop and the timer heap (net/event_loop.h): readiness comes back with its tag, a
// timeout returns with no events, wake() ends a wait early, timers pop in deadline order (FIFO
// among equal ones), and EventTag packs a slot and its generation.
#include "net/event_loop.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <thread>
#include <vector>

#include "support/socket_pair.h"

namespace knee::net {
namespace {

using knee::testing::SocketPair;

using namespace std::chrono_literals;

TEST(EventLoop, ReturnsReadinessWithItsTag) {
  auto loop = EventLoop::create();
  ASSERT_TRUE(loop) << loop.status().message();
  SocketPair p;
  const EventTag tag{7, 3};
  ASSERT_TRUE(loop->add(p.ours.get(), EPOLLIN, tag.value()));
  std::array<epoll_event, 4> events{};
  auto none = loop->wait(events, 0ns);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0) << "nothing to read yet";
  ASSERT_EQ(::write(p.peer.get(), "x", 1), 1);
  auto one = loop->wait(events, 1s);
  ASSERT_TRUE(one);
  ASSERT_EQ(*one, 1);
  EXPECT_EQ(EventTag::of(events[0].data.u64), tag);
  EXPECT_TRUE(events[0].events & EPOLLIN);
}

TEST(EventLoop, ModifyAndRemoveChangeWhatIsReported) {
  auto loop = EventLoop::create();
  ASSERT_TRUE(loop);
  SocketPair p;
  ASSERT_TRUE(loop->add(p.ours.get(), EPOLLIN, 1));
  std::array<epoll_event, 4> events{};
  ASSERT_TRUE(loop->modify(p.ours.get(), EPOLLOUT, 2));
  auto writable = loop->wait(events, 1s);
  ASSERT_TRUE(writable);
  ASSERT_EQ(*writable, 1);
  // A copy: epoll_event is packed on x86-64, and EXPECT_EQ binds a reference to a misaligned
  // member (clang's UBSan stops there).
  const uint64_t data = events[0].data.u64;
  EXPECT_EQ(data, 2u);
  loop->remove(p.ours.get());
  auto after = loop->wait(events, 0ns);
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, 0);
  EXPECT_FALSE(loop->modify(p.ours.get(), EPOLLIN, 3)) << "a removed fd cannot be modified";
}

TEST(EventLoop, TimeoutReturnsNoEventsAndWakeEndsAWaitEarly) {
  auto loop = EventLoop::create();
  ASSERT_TRUE(loop);
  std::array<epoll_event, 4> events{};
  auto timed_out = loop->wait(events, 1ms);
  ASSERT_TRUE(timed_out);
  EXPECT_EQ(*timed_out, 0);
  std::thread waker([&] { loop->wake(); });
  // Without the wake-up this would block for an hour; the wake-up itself is not returned.
  auto woken = loop->wait(events, std::chrono::hours(1));
  waker.join();
  ASSERT_TRUE(woken);
  EXPECT_EQ(*woken, 0);
}

TEST(EventTag, PacksSlotAndGeneration) {
  const EventTag t{EventTag::kMaxSlot, 0xffff'ffffu};
  EXPECT_EQ(EventTag::of(t.value()), t);
  EXPECT_NE((EventTag{1, 1}.value()), (EventTag{1, 2}.value()))
      << "a slot's next generation gets a tag of its own";
}

TEST(TimerHeap, PopsDueEntriesInDeadlineOrderAndFifoAmongEqualOnes) {
  TimerHeap<int> heap;
  const core::TimePoint t0{};
  heap.push(t0 + 30ms, 3);
  heap.push(t0 + 10ms, 1);
  heap.push(t0 + 20ms, 21);
  heap.push(t0 + 20ms, 22);
  EXPECT_EQ(heap.next_deadline(), t0 + 10ms);
  std::vector<int> popped;
  heap.pop_due(t0 + 20ms, [&](int v) { popped.push_back(v); });
  EXPECT_EQ(popped, (std::vector<int>{1, 21, 22}));
  EXPECT_EQ(heap.size(), 1u);
  // An entry pushed while popping is popped too when it is due.
  heap.pop_due(t0 + 30ms, [&](int v) {
    popped.push_back(v);
    if (v == 3) heap.push(t0 + 30ms, 4);
  });
  EXPECT_EQ(popped, (std::vector<int>{1, 21, 22, 3, 4}));
  EXPECT_TRUE(heap.empty());
  EXPECT_FALSE(heap.next_deadline());
}

}  // namespace
}  // namespace knee::net
