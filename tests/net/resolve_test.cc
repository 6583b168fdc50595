// net::resolve_all and net::first_reachable (net/socket.h) on real loopback sockets: "localhost"
// is both loopback addresses whatever /etc/hosts says, and the first address that accepts a
// connection is the one a run uses.
#include <gtest/gtest.h>

#include <string>

#include "net/socket.h"

namespace knee::net {
namespace {

using namespace std::chrono_literals;

TEST(ResolveAll, LocalhostIsBothLoopbacksInOrder) {
  auto all = resolve_all("LocalHost", 8080);
  ASSERT_TRUE(all) << all.status().message();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].to_string(), "127.0.0.1:8080");
  EXPECT_EQ((*all)[1].to_string(), "[::1]:8080");
  auto literal = resolve_all("::1", 9);
  ASSERT_TRUE(literal);
  ASSERT_EQ(literal->size(), 1u);
  EXPECT_EQ(literal->front().to_string(), "[::1]:9");
  // (No unknown name here: resolving one would ask the host's DNS server, off this machine.)
}

// Regression (a new user's trial): with `knee serve --host ::1`, `knee run http://localhost:P/`
// said "connect 127.0.0.1:P: Connection refused" and stopped.
TEST(FirstReachable, AServerOnIpv6LoopbackOnlyIsReachedAsLocalhost) {
  auto v6 = resolve("::1", 0);
  ASSERT_TRUE(v6);
  auto listener = listen_tcp(*v6, false, 4, Blocking::kYes);
  ASSERT_TRUE(listener) << listener.status().message();
  auto bound = local_address(listener->get());
  ASSERT_TRUE(bound);
  const int port = bound->port();
  auto reached = first_reachable("localhost", port, 1s);
  ASSERT_TRUE(reached) << reached.status().message();
  EXPECT_EQ(reached->to_string(), "[::1]:" + std::to_string(port));

  listener = listen_tcp(loopback_v4(0), false, 4, Blocking::kYes);  // v6 listener closed
  ASSERT_TRUE(listener);
  const int closed_port = local_address(listener->get())->port();
  listener->reset();
  auto none = first_reachable("localhost", closed_port, 1s);
  ASSERT_FALSE(none);
  EXPECT_NE(none.status().message().find("connect 127.0.0.1:" + std::to_string(closed_port)),
            std::string::npos)
      << none.status().message();
  EXPECT_NE(none.status().message().find("; connect [::1]:"), std::string::npos)
      << "every address tried is named";
}

}  // namespace
}  // namespace knee::net
