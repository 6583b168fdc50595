#include "core/status.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace knee::core {

std::string errno_name(int err) {
  // strerrorname_np exists in glibc >= 2.32 (Debian 12 ships 2.36).
  const char* name = strerrorname_np(err);
  return name != nullptr ? std::string(name) : "E" + std::to_string(err);
}

Status Status::from_errno(std::string_view operation, int err) {
  std::string msg(operation);
  msg += ": ";
  msg += std::strerror(err);
  msg += " (" + errno_name(err) + ")";
  return Status(Code::kIoError, std::move(msg));
}

}  // namespace knee::core
