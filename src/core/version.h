// The version of this knee build: one number, set in the top CMakeLists.txt (project VERSION),
// and the git commit it was built from (cmake/version.cmake writes both at build time).
// `knee --version` prints "knee " + version_string(); every result's host context records it
// (probes::HostContext::knee_version), so a saved result says which build measured it.
#pragma once

#include <string>

namespace knee::core {

extern const char* const kVersion;  // "0.1.0"
extern const char* const kCommit;   // "6f645c6d1a2b", "6f645c6d1a2b-dirty", or "" (no checkout)

// "0.1.0 (6f645c6d1a2b)", or "0.1.0" when built outside a git checkout.
std::string version_string();

}  // namespace knee::core
