// Tests that run once per way of writing (net::IoPath): with a send(2) per write under epoll and
// with the send ring of --io uring. A fixture derived from IoPathTest sets io_under_test() for the
// test's own set-up (a lab server's options, a load's) to copy; KNEE_INSTANTIATE_IO runs each of
// its TEST_Ps as /epoll and /uring, and /uring skips on a kernel without io_uring.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "net/send_ring.h"

namespace knee::net {
// gtest's name for a parameter in failure messages.
inline void PrintTo(IoPath io, std::ostream* os) { *os << io_path_name(io); }
}  // namespace knee::net

namespace knee::testing {

// The IoPath of the test running now (kEpoll outside IoPathTest fixtures).
inline net::IoPath& io_under_test() {
  static net::IoPath io = net::IoPath::kEpoll;
  return io;
}

class IoPathTest : public ::testing::TestWithParam<net::IoPath> {
 protected:
  void SetUp() override {
    if (GetParam() == net::IoPath::kUring) {
      auto ring = net::SendRing::create();  // a kernel without io_uring, or one forbidding it
      if (!ring) GTEST_SKIP() << "no io_uring here: " << ring.status().message();
    }
    io_under_test() = GetParam();
  }
  void TearDown() override { io_under_test() = net::IoPath::kEpoll; }
};

// Test name suffixes: /epoll and /uring.
inline std::string io_name(const ::testing::TestParamInfo<net::IoPath>& info) {
  return std::string(net::io_path_name(info.param));
}

}  // namespace knee::testing

// Runs every TEST_P of `fixture` with both IoPaths.
#define KNEE_INSTANTIATE_IO(fixture)                                                            \
  INSTANTIATE_TEST_SUITE_P(                                                                     \
      Io, fixture, ::testing::Values(::knee::net::IoPath::kEpoll, ::knee::net::IoPath::kUring), \
      ::knee::testing::io_name)
