// Status and Result<T>: expected failures as values (LevelDB's Status, shaped like C++23's
// std::expected, which GCC 12 does not ship).
//
// A Status is either ok or carries a Code and a message that names the operation, the input and,
// where there is one, the OS error ("connect 127.0.0.1:9: Connection refused (ECONNREFUSED)").
// Beside the text it keeps, as values, the errno of an OS failure (os_error(), 0 when none) and,
// for bad input, the name of the option field that was wrong (field(), e.g. "connections"), so
// callers branch on values and map fields to their own words (cli/ maps "connections" to
// "-c/--connections", a scenario to "c="), never on the text. message() is the text without the
// field; what() is "<field>: <message>" (the message alone without a field).
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
  // The success value. Not named ok(): a static ok() also compiles as `st.ok()` on any Status,
  // which is always a success and so always true; test a Status with is_ok() or its bool.
  static Status success() { return Status(); }
  static Status invalid_argument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  // Bad input in one named option field ("connections", "rate_rps"): what() reads
  // "<field>: <msg>".
  static Status invalid_field(std::string field, std::string msg) {
    Status s(Code::kInvalidArgument, std::move(msg));
    s.field_ = std::move(field);
    return s;
  }
  static Status io_error(std::string msg) { return {Code::kIoError, std::move(msg)}; }
  static Status unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status parse_error(std::string msg) { return {Code::kParseError, std::move(msg)}; }
  static Status internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }
  // An OS failure: "<operation>: <strerror> (<ERRNO NAME>)", Code kIoError, os_error() = err.
  static Status from_errno(std::string_view operation, int err);

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  // The text, without the field name.
  const std::string& message() const { return message_; }
  // The errno of an OS failure, 0 when the failure did not come from the OS.
  int os_error() const { return os_error_; }
  // The option field that was wrong (invalid_field), empty otherwise.
  const std::string& field() const { return field_; }
  // "<field>: <message>", or the message when there is no field: the line to show a person.
  std::string what() const { return field_.empty() ? message_ : field_ + ": " + message_; }

  // The same failure with `context` in front of the message ("scenario fast: ..."); code, errno
  // and field are kept.
  Status with_context(std::string_view context) const;
  // The same failure with another code (e.g. an I/O error that means "unreachable").
  Status with_code(Code code) const;
  // The same failure with the field replaced (an empty one drops it).
  Status with_field(std::string field) const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
  int os_error_ = 0;
  std::string field_;
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

  // The failure; a success (Status::success()) when this holds a value.
  Status status() const { return has_value() ? Status::success() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace knee::core
