// Status (core/status.h): an OS failure keeps its errno as a value, bad input keeps the option
// field it was in, and context is added without losing either.
#include "core/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace knee::core {
namespace {

TEST(Status, AnOsFailureKeepsItsErrnoAndNamesIt) {
  const Status s = Status::from_errno("connect 127.0.0.1:1", ECONNREFUSED);
  EXPECT_EQ(s.code(), Status::Code::kIoError);
  EXPECT_EQ(s.os_error(), ECONNREFUSED);
  EXPECT_EQ(s.message(), "connect 127.0.0.1:1: Connection refused (ECONNREFUSED)");
  EXPECT_EQ(Status::io_error("disk full").os_error(), 0);
}

TEST(Status, BadInputKeepsItsFieldApartFromTheText) {
  const Status s = Status::invalid_field("connections", "0 is below 1");
  EXPECT_EQ(s.field(), "connections");
  EXPECT_EQ(s.message(), "0 is below 1");
  EXPECT_EQ(s.what(), "connections: 0 is below 1");
  EXPECT_EQ(Status::invalid_argument("no field").what(), "no field");
  EXPECT_EQ(s.with_field("levels").field(), "levels");
}

TEST(Status, ContextIsAddedWithoutLosingCodeErrnoOrField) {
  const Status s = Status::from_errno("connect 127.0.0.1:1", ECONNREFUSED)
                       .with_code(Status::Code::kUnavailable)
                       .with_context("scenario fast");
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.os_error(), ECONNREFUSED);
  EXPECT_EQ(s.message(), "scenario fast: connect 127.0.0.1:1: Connection refused (ECONNREFUSED)");
  EXPECT_EQ(Status::invalid_field("threads", "3 > 2").with_context("x").field(), "threads");
}

}  // namespace
}  // namespace knee::core
