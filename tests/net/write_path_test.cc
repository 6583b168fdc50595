// The write path (net/write_path.h), once per way of writing: bytes written through wrap()'s
// transports reach the peer whole and in order by the end of the next pass(); a connection
// refused bytes is named writable by EPOLLOUT on the epoll path and by pass() on the ring's; a
// closed connection's unwritten bytes are still written, and under the ring given up after
// expire()'s limit.
#include "net/write_path.h"

#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "support/io_param.h"
#include "support/socket_pair.h"

namespace knee::net {
namespace {

using knee::testing::SocketPair;
using namespace std::chrono_literals;

// What the peer can read now, without waiting.
std::string read_available(int fd) {
  std::string got;
  std::array<char, 65536> buf{};
  ssize_t n = 0;
  while ((n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT)) > 0) {
    got.append(buf.data(), static_cast<size_t>(n));
  }
  return got;
}

class WritePathTest : public knee::testing::IoPathTest {
 protected:
  void SetUp() override {
    IoPathTest::SetUp();
    if (IsSkipped()) return;
    auto loop = EventLoop::create();
    ASSERT_TRUE(loop) << loop.status().message();
    loop_.emplace(std::move(loop).value());
    auto path = WritePath::open(GetParam(), *loop_);
    ASSERT_TRUE(path) << path.status().message();
    path_ = std::move(path).value();
  }

  // Passes and waits on the loop until `done()` holds or 5 s pass; collects what pass() and
  // EPOLLOUT name writable.
  template <typename Done>
  bool pass_until(Done done) {
    const auto deadline = core::Clock::now() + 5s;
    std::array<epoll_event, 16> events{};
    while (core::Clock::now() < deadline) {
      EXPECT_TRUE(path_.pass([this](uint64_t tag) { named_.push_back(tag); }));
      if (done()) return true;
      auto n = loop_->wait(events, path_.pending() ? 0ms : 10ms);
      if (!n) return false;
      for (int i = 0; i < *n; ++i) {
        const epoll_event& e = events[static_cast<size_t>(i)];
        const uint64_t tag = e.data.u64;  // a copy: epoll_event is packed
        if (tag != kSendRingTag && (e.events & EPOLLOUT) != 0) named_.push_back(tag);
      }
    }
    return false;
  }

  std::optional<EventLoop> loop_;
  WritePath path_;
  std::vector<uint64_t> named_;  // tags named writable, by pass() or by EPOLLOUT
};

TEST_P(WritePathTest, SaysWhichPathItIsAndWhichEventsWritingNeeds) {
  EXPECT_EQ(path_.io(), GetParam());
  EXPECT_EQ(path_.write_events(), GetParam() == IoPath::kEpoll ? uint32_t{EPOLLOUT} : 0U);
  EXPECT_FALSE(path_.pending());
  EXPECT_EQ(path_.unwritten_connections(), 0U);
}

TEST_P(WritePathTest, BytesOfSeveralConnectionsArriveWholeAndInOrderAfterAPass) {
  std::vector<SocketPair> pairs(3);
  std::vector<std::unique_ptr<Transport>> ts;
  for (size_t i = 0; i < pairs.size(); ++i) ts.push_back(path_.wrap(std::move(pairs[i].ours), i));
  for (size_t i = 0; i < ts.size(); ++i) {
    for (int k = 0; k < 50; ++k) {
      ASSERT_EQ(ts[i]->send_some(std::to_string(i) + ":" + std::to_string(k) + ";").status,
                IoStatus::kDone);
    }
  }
  std::vector<std::string> got(pairs.size());
  std::vector<std::string> want(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (int k = 0; k < 50; ++k) want[i] += std::to_string(i) + ":" + std::to_string(k) + ";";
  }
  auto all_in = [&] {
    for (size_t i = 0; i < pairs.size(); ++i) got[i] += read_available(pairs[i].peer.get());
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (got[i].size() < want[i].size()) return false;
    }
    return true;
  };
  ASSERT_TRUE(pass_until(all_in));
  EXPECT_EQ(got, want);
  EXPECT_FALSE(path_.pending());
}

TEST_P(WritePathTest, AConnectionRefusedBytesIsNamedWritableOnceItsPeerReads) {
  SocketPair p;
  const int ours = p.ours.get();
  auto t = path_.wrap(std::move(p.ours), 7);
  // Watched as an owner would: reads, plus the path's events for writing.
  ASSERT_TRUE(loop_->add(ours, EPOLLIN | EPOLLET | path_.write_events(), 7));
  const std::string chunk(64 * 1024, 'x');
  size_t written = 0;
  bool refused = false;
  for (int i = 0; i < 200 && !refused; ++i) {
    const IoResult r = t->send_some(chunk);
    if (r.status == IoStatus::kWouldBlock) {
      refused = true;
    } else {
      ASSERT_EQ(r.status, IoStatus::kDone);
      written += r.bytes;
      ASSERT_TRUE(path_.pass([](uint64_t) {}));
    }
  }
  ASSERT_TRUE(refused) << "the peer never read, yet " << written << " bytes were taken";
  named_.clear();
  size_t drained = 0;
  ASSERT_TRUE(pass_until([&] {
    drained += read_available(p.peer.get()).size();
    return !named_.empty();
  }));
  EXPECT_EQ(named_.front(), 7U);
}

TEST_P(WritePathTest, AClosedConnectionsLastBytesAreStillWritten) {
  SocketPair p;
  const int ours = p.ours.get();
  auto t = path_.wrap(std::move(p.ours), 1);
  ASSERT_TRUE(loop_->add(ours, EPOLLIN | EPOLLET | path_.write_events(), 1));
  ASSERT_EQ(t->send_some("the last response").status, IoStatus::kDone);
  path_.release(*loop_, *t);
  t.reset();
  std::string got;
  ASSERT_TRUE(pass_until([&] {
    got += read_available(p.peer.get());
    return got.size() >= 17;
  }));
  EXPECT_EQ(got, "the last response");
  ASSERT_TRUE(pass_until([&] { return path_.unwritten_connections() == 0; }));
}

TEST_P(WritePathTest, UnwrittenBytesOfAClosedConnectionAreGivenUpAfterTheLimit) {
  SocketPair p;
  auto t = path_.wrap(std::move(p.ours), 1);
  const std::string chunk(64 * 1024, 'y');
  for (int i = 0; i < 100 && t->send_some(chunk).status == IoStatus::kDone; ++i) {
    ASSERT_TRUE(path_.pass([](uint64_t) {}));
  }
  path_.release(*loop_, *t);
  t.reset();
  if (GetParam() == IoPath::kEpoll) {  // what the socket's buffer took, close(2) leaves there
    EXPECT_EQ(path_.unwritten_connections(), 0U);
    return;
  }
  EXPECT_EQ(path_.unwritten_connections(), 1U);
  const core::TimePoint t0{std::chrono::seconds(1000)};
  path_.expire(t0, 1s);  // first seen closed now, on the caller's clock
  path_.expire(t0 + 999ms, 1s);
  ASSERT_TRUE(path_.pass([](uint64_t) {}));
  EXPECT_EQ(path_.unwritten_connections(), 1U) << "given up before its limit";
  path_.expire(t0 + 1s, 1s);
  EXPECT_TRUE(pass_until([&] { return path_.unwritten_connections() == 0; }));
}

KNEE_INSTANTIATE_IO(WritePathTest);

}  // namespace
}  // namespace knee::net
