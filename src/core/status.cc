#include "core/status.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace knee::core {

std::string errno_name(int err) {
  // strerrorname_np exists in glibc >= 2.32 (Debian 12 ships 2.36).
  const char* name = strerrorname_np(err);
  return name != nullptr ? std::string(name) : fmt::format("E{}", err);
}

Status Status::from_errno(std::string_view operation, int err) {
  Status s(Code::kIoError,
           fmt::format("{}: {} ({})", operation, std::strerror(err), errno_name(err)));
  s.os_error_ = err;
  return s;
}

Status Status::with_context(std::string_view context) const {
  Status s = *this;
  s.message_ = fmt::format("{}: {}", context, message_);
  return s;
}

Status Status::with_code(Code code) const {
  Status s = *this;
  s.code_ = code;
  return s;
}

Status Status::with_field(std::string field) const {
  Status s = *this;
  s.field_ = std::move(field);
  return s;
}

}  // namespace knee::core
