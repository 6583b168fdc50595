// The send ring (net/send_ring.h): bytes wait until submit() and then arrive whole and in order,
// for several connections at once; a connection over its queue cap is refused and named
// writable once its peer reads; shutdown_write() lets queued bytes go first; a closed
// connection's last bytes are still written and its socket then closed; one whose peer never
// reads is cancelled; a send error comes back from the next send_some().
#include "net/send_ring.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "support/socket_pair.h"

namespace knee::net {
namespace {

using knee::testing::SocketPair;

using namespace std::chrono_literals;

// The ring, or null after a failure; a kernel without io_uring (ENOSYS) or one forbidding it
// (EPERM: kernel.io_uring_disabled, a seccomp filter) skips the test instead.
std::unique_ptr<SendRing> make_ring() {
  auto ring = SendRing::create();
  const int err = ring ? 0 : ring.status().os_error();
  if (err == ENOSYS || err == EPERM) return nullptr;
  EXPECT_TRUE(ring) << ring.status().message();
  return ring ? std::move(ring).value() : nullptr;
}

// Skips the test where make_ring() found no io_uring.
#define REQUIRE_RING(ring) \
  if (!(ring)) GTEST_SKIP() << "no io_uring in this kernel, or forbidden here"

// What the peer can read now, without waiting; "<EOF>" appended when it sees the end.
std::string read_available(int fd) {
  std::string got;
  std::array<char, 65536> buf{};
  while (true) {
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n > 0) {
      got.append(buf.data(), static_cast<size_t>(n));
      continue;
    }
    if (n == 0) got += "<EOF>";
    return got;
  }
}

// Reaps until `done()` holds or 5 s pass, waiting on the ring's fd between rounds.
template <typename Done>
bool reap_until(
    SendRing& ring, Done done, const std::function<void(uint64_t)>& writable = [](uint64_t) {}) {
  const auto deadline = core::Clock::now() + 5s;
  while (core::Clock::now() < deadline) {
    ring.reap(writable);
    if (ring.has_queued()) EXPECT_TRUE(ring.submit());
    if (done()) return true;
    pollfd p{ring.fd(), POLLIN, 0};
    ::poll(&p, 1, 10);
  }
  return false;
}

// Writes to `p.ours` through the ring until the socket (whose peer never reads) and the
// connection's queue are full, then closes the connection: an orphan with bytes unwritten.
void orphan_unread_bytes(SendRing& ring, SocketPair& p) {
  auto t = ring.adopt(std::move(p.ours), 1);
  const std::string chunk(64 * 1024, 'y');
  for (int i = 0; i < 100 && t->send_some(chunk).status == IoStatus::kDone; ++i) {
    ring.reap([](uint64_t) {});
    ASSERT_TRUE(ring.submit());
  }
}

// What the peer reads until the end shows ("<EOF>" last), reaping meanwhile; what came within
// 5 s otherwise.
std::string read_until_closed(SendRing& ring, int fd) {
  std::string got;
  reap_until(ring, [&] {
    got += read_available(fd);
    return got.ends_with("<EOF>");
  });
  return got;
}

TEST(SendRing, BytesWaitForSubmitThenArriveForEveryConnection) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  std::vector<SocketPair> pairs(3);
  std::vector<std::unique_ptr<UringTransport>> transports;
  for (size_t i = 0; i < pairs.size(); ++i) {
    transports.push_back(ring->adopt(std::move(pairs[i].ours), i));
    const std::string text = "response " + std::to_string(i);
    const IoResult r = transports[i]->send_some(text);
    ASSERT_EQ(r.status, IoStatus::kDone);
    EXPECT_EQ(r.bytes, text.size()) << "queued whole";
  }
  EXPECT_EQ(read_available(pairs[0].peer.get()), "") << "nothing written before submit()";
  EXPECT_TRUE(ring->has_queued());
  ASSERT_TRUE(ring->submit());
  EXPECT_FALSE(ring->has_queued());
  ASSERT_TRUE(reap_until(*ring, [&] {
    return transports[0]->unsent() + transports[1]->unsent() + transports[2]->unsent() == 0;
  }));
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(read_available(pairs[i].peer.get()), "response " + std::to_string(i));
  }
}

TEST(SendRing, ManySendsKeepTheirOrder) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  std::vector<SocketPair> pairs(2);  // two, so that submit() goes through the ring, not send(2)
  auto a = ring->adopt(std::move(pairs[0].ours), 1);
  auto b = ring->adopt(std::move(pairs[1].ours), 2);
  std::string expected, got;
  for (int i = 0; i < 2000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    expected += line;
    ASSERT_EQ(a->send_some(line).status, IoStatus::kDone);
    ASSERT_EQ(b->send_some("x").status, IoStatus::kDone);
    if (i % 7 == 0) {
      ring->reap([](uint64_t) {});
      ASSERT_TRUE(ring->submit());
    }
    got += read_available(pairs[0].peer.get());
  }
  ASSERT_TRUE(ring->submit());
  ASSERT_TRUE(reap_until(*ring, [&] {
    got += read_available(pairs[0].peer.get());
    return a->unsent() == 0 && got.size() >= expected.size();
  }));
  EXPECT_EQ(got, expected);
}

TEST(SendRing, AConnectionOverItsCapIsRefusedThenNamedWritable) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  SocketPair p;
  auto t = ring->adopt(std::move(p.ours), 42);
  const std::string chunk(16 * 1024, 'z');
  size_t queued = 0;
  IoResult r;
  for (int i = 0; i < 1000; ++i) {  // the peer reads nothing: the socket fills, then the queue
    r = t->send_some(chunk);
    if (r.status != IoStatus::kDone) break;
    queued += r.bytes;
    ring->reap([](uint64_t) {});
    ASSERT_TRUE(ring->submit());
  }
  ASSERT_EQ(r.status, IoStatus::kWouldBlock);
  EXPECT_TRUE(r.wants_write);
  EXPECT_GE(t->unsent(), SendRing::kMaxQueuedBytes);
  std::vector<uint64_t> writable;
  size_t read = 0;
  ASSERT_TRUE(reap_until(
      *ring,
      [&] {
        read += read_available(p.peer.get()).size();
        return !writable.empty();
      },
      [&](uint64_t tag) { writable.push_back(tag); }));
  EXPECT_EQ(writable, std::vector<uint64_t>{42});
  ASSERT_TRUE(reap_until(*ring, [&] {
    read += read_available(p.peer.get()).size();
    return t->unsent() == 0 && read == queued;
  }));
  EXPECT_EQ(read, queued) << "every byte accepted was written once";
}

TEST(SendRing, ShutdownWriteLetsQueuedBytesGoFirst) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  std::vector<SocketPair> pairs(2);
  auto t = ring->adopt(std::move(pairs[0].ours), 1);
  auto other = ring->adopt(std::move(pairs[1].ours), 2);
  ASSERT_EQ(t->send_some("last response").status, IoStatus::kDone);
  ASSERT_EQ(other->send_some("x").status, IoStatus::kDone);
  t->shutdown_write();
  EXPECT_EQ(read_available(pairs[0].peer.get()), "") << "no FIN before the bytes";
  ASSERT_TRUE(ring->submit());
  EXPECT_EQ(read_until_closed(*ring, pairs[0].peer.get()), "last response<EOF>");
}

TEST(SendRing, AClosedConnectionsLastBytesAreWrittenThenItsSocketCloses) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  SocketPair p;
  auto t = ring->adopt(std::move(p.ours), 1);
  ASSERT_EQ(t->send_some("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n").status, IoStatus::kDone);
  t.reset();  // closed before the loop submitted
  EXPECT_EQ(ring->orphans(), 1u);
  ASSERT_TRUE(ring->submit());
  EXPECT_EQ(read_until_closed(*ring, p.peer.get()),
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n<EOF>");
  EXPECT_EQ(ring->orphans(), 0u);
}

TEST(SendRing, AClosedConnectionWithNothingLeftClosesAtOnce) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  SocketPair p;
  auto t = ring->adopt(std::move(p.ours), 1);
  t.reset();
  EXPECT_EQ(ring->orphans(), 0u);
  EXPECT_EQ(read_available(p.peer.get()), "<EOF>");
}

TEST(SendRing, AnOrphanWhosePeerNeverReadsIsCancelledAndClosed) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  SocketPair p;
  orphan_unread_bytes(*ring, p);
  ASSERT_EQ(ring->orphans(), 1u) << "bytes still wait for the peer";
  ring->expire_orphans(core::Clock::now(), 1h);
  ring->reap([](uint64_t) {});
  EXPECT_EQ(ring->orphans(), 1u) << "not yet past the limit";
  ring->expire_orphans(core::Clock::now() + 3s, 2s);
  ASSERT_TRUE(reap_until(*ring, [&] { return ring->orphans() == 0; }));
  std::string got;
  const auto deadline = core::Clock::now() + 5s;
  while (!got.ends_with("<EOF>") && core::Clock::now() < deadline) {
    got += read_available(p.peer.get());
    pollfd readable{p.peer.get(), POLLIN, 0};
    ::poll(&readable, 1, 10);
  }
  EXPECT_TRUE(got.ends_with("<EOF>")) << "the socket was closed";
}

// Regression (review): the orphan was stamped with the real clock and compared with the owner's,
// so under a fake clock (tests/support/fake_clock.h starts at 1000 s) it never expired. The limit
// now runs on the times the owner passes, from the first call that sees the orphan.
TEST(SendRing, AnOrphansLimitRunsOnTheOwnersClock) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  SocketPair p;
  orphan_unread_bytes(*ring, p);
  ASSERT_EQ(ring->orphans(), 1u);
  const core::TimePoint start{std::chrono::seconds(1000)};  // long before this host's uptime
  ring->expire_orphans(start, 2s);
  ring->expire_orphans(start + 1s, 2s);
  ring->reap([](uint64_t) {});
  EXPECT_EQ(ring->orphans(), 1u) << "1 s of the owner's 2 s";
  ring->expire_orphans(start + 2s, 2s);
  EXPECT_TRUE(reap_until(*ring, [&] { return ring->orphans() == 0; }));
}

TEST(SendRing, ASendErrorComesBackFromTheNextSend) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  std::vector<SocketPair> pairs(2);  // two, so that the error comes from the ring's completion
  auto t = ring->adopt(std::move(pairs[0].ours), 1);
  auto other = ring->adopt(std::move(pairs[1].ours), 2);
  pairs[0].peer.reset();  // the client went away
  ASSERT_EQ(t->send_some("response").status, IoStatus::kDone) << "queued";
  ASSERT_EQ(other->send_some("x").status, IoStatus::kDone);
  ASSERT_TRUE(ring->submit());
  ASSERT_TRUE(reap_until(*ring, [&] { return t->unsent() == 0; }));
  const IoResult r = t->send_some("next");
  EXPECT_EQ(r.status, IoStatus::kError);
  EXPECT_EQ(r.error, EPIPE);
}

// Regression (review): a writable callback that submitted (the lab server does before burning
// CPU) could empty another blocked queue with a send(2), whose tag went into the list being
// walked and was then dropped: that connection was never told it could write again.
TEST(SendRing, AConnectionEmptiedDuringACallbackIsNamedByTheNextReap) {
  auto ring = make_ring();
  REQUIRE_RING(ring);
  std::vector<SocketPair> pairs(2);
  for (SocketPair& p : pairs) {  // room for a whole queue in the socket: send(2) takes it all
    const int size = 4 * SendRing::kMaxQueuedBytes;
    if (::setsockopt(p.ours.get(), SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0) {
      GTEST_SKIP() << "SO_SNDBUFFORCE needs CAP_NET_ADMIN";
    }
  }
  auto x = ring->adopt(std::move(pairs[0].ours), 10);
  auto y = ring->adopt(std::move(pairs[1].ours), 20);
  const std::string chunk(16 * 1024, 'q');
  auto fill = [&](UringTransport& t) {  // queued to the cap, nothing submitted: blocked
    while (t.send_some(chunk).status == IoStatus::kDone) {
    }
  };
  fill(*x);
  ASSERT_TRUE(ring->submit());  // x alone: one send(2) writes all of it, x is named
  ASSERT_EQ(x->unsent(), 0u);
  EXPECT_TRUE(ring->has_ready());
  fill(*y);
  std::vector<uint64_t> named;
  ring->reap([&](uint64_t tag) {
    named.push_back(tag);
    if (tag == 10) ASSERT_TRUE(ring->submit());  // y alone: emptied by a send(2) in here
  });
  EXPECT_EQ(named, std::vector<uint64_t>{10});
  ASSERT_EQ(y->unsent(), 0u);
  EXPECT_TRUE(ring->has_ready()) << "y's tag waits for the next reap()";
  ring->reap([&](uint64_t tag) { named.push_back(tag); });
  EXPECT_EQ(named, (std::vector<uint64_t>{10, 20}));
}

}  // namespace
}  // namespace knee::net
