// Status and Result<T>: expected failures as values (LevelDB's Status, shaped like C++23's
// std::expected, which GCC 12 does not ship).
//
// A Status is either ok or carries a Code and a message that names the operation, the input and,
// where there is one, the OS error ("connect 127.0.0.1:9: Connection refused (ECONNREFUSED)").
// Broken invariants are asserts, not Statuses. Values are cheap to move; not thread-safe to share
// mutably, like any value type.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace knee::core {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,  // the caller's input is wrong (exit code 2 at the command line)
    kIoError,          // the OS refused: socket, file, process (exit code 1)
    kUnavailable,      // the target could not be reached (exit code 1)
    kParseError,       // bytes from outside did not follow the expected format
    kInternal,         // a failure that is neither of the above
  };

  Status() = default;  // ok
  static Status ok() { return Status(); }
  static Status invalid_argument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status io_error(std::string msg) { return {Code::kIoError, std::move(msg)}; }
  static Status unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status parse_error(std::string msg) { return {Code::kParseError, std::move(msg)}; }
  static Status internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }
  // An OS failure: "<operation>: <strerror> (<ERRNO NAME>)", Code kIoError.
  static Status from_errno(std::string_view operation, int err);

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// The symbolic name of an errno value ("ECONNREFUSED"), or "E<number>" when unknown.
std::string errno_name(int err);

// Either a T or a failed Status. Accessing value() of a failed Result is a broken invariant.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit like std::expected
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).is_ok() && "a Result needs a value or a failed Status");
  }

  bool has_value() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The failure; ok() when this holds a value.
  Status status() const { return has_value() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace knee::core
