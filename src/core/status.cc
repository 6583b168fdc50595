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
  return Status(Code::kIoError,
                fmt::format("{}: {} ({})", operation, std::strerror(err), errno_name(err)));
}

}  // namespace knee::core
