// Lab server tests that run once per way of writing responses (ServerOptions::Io): with epoll's
// send(2) per response and with the send ring of --io uring. A fixture derived from ServerIoTest
// sets io_under_test() for the test's start_server() to copy into its options.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "lab/lab_server.h"
#include "net/send_ring.h"

namespace knee::lab {
// gtest's name for a parameter in failure messages.
inline void PrintTo(ServerOptions::Io io, std::ostream* os) {
  *os << (io == ServerOptions::Io::kUring ? "uring" : "epoll");
}
}  // namespace knee::lab

namespace knee::lab::io_test {

// The Io of the test running now (kEpoll outside ServerIoTest fixtures).
inline ServerOptions::Io& io_under_test() {
  static ServerOptions::Io io = ServerOptions::Io::kEpoll;
  return io;
}

class ServerIoTest : public ::testing::TestWithParam<ServerOptions::Io> {
 protected:
  void SetUp() override {
    if (GetParam() == ServerOptions::Io::kUring) {
      auto ring = net::SendRing::create();  // a kernel without io_uring, or one forbidding it
      if (!ring) GTEST_SKIP() << "no io_uring here: " << ring.status().message();
    }
    io_under_test() = GetParam();
  }
  void TearDown() override { io_under_test() = ServerOptions::Io::kEpoll; }
};

// Test name suffixes: /epoll and /uring.
inline std::string io_name(const ::testing::TestParamInfo<ServerOptions::Io>& info) {
  return info.param == ServerOptions::Io::kUring ? "uring" : "epoll";
}

}  // namespace knee::lab::io_test

// Runs every TEST_P of `fixture` with both kinds of Io.
#define KNEE_INSTANTIATE_SERVER_IO(fixture)                                           \
  INSTANTIATE_TEST_SUITE_P(Io, fixture,                                               \
                           ::testing::Values(::knee::lab::ServerOptions::Io::kEpoll,  \
                                             ::knee::lab::ServerOptions::Io::kUring), \
                           ::knee::lab::io_test::io_name)
