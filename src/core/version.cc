#include "core/version.h"

namespace knee::core {

std::string version_string() {
  std::string s = kVersion;
  if (*kCommit != '\0') {
    s += " (";
    s += kCommit;
    s += ")";
  }
  return s;
}

}  // namespace knee::core
