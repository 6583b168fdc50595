// A connected pair of non-blocking AF_UNIX stream sockets for tests of what moves bytes (the
// event loop, the send ring): `ours` goes to the code under test, the test reads and writes
// `peer`. Both close with the pair.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include "net/socket.h"

namespace knee::testing {

struct SocketPair {
  net::Fd ours, peer;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    ours.reset(fds[0]);
    peer.reset(fds[1]);
  }
};

}  // namespace knee::testing
