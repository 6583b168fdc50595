// FsReader: the one seam through which probes read /proc, /sys and /etc (conventions 8, like
// ninja's DiskInterface). Every path a probe asks for is absolute ("/proc/stat") and is resolved
// under a root directory: "/" on a real host, a fixture tree such as tests/probes/fixtures/host1
// in tests, so probes parse recorded files without depending on the machine running the tests.
//
// Thread-safety: immutable after construction; const methods are safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace knee::probes {

class FsReader {
 public:
  // root: directory the absolute paths are resolved under; "/" reads the real system.
  explicit FsReader(std::string root = "/");

  // The whole content of the file at `path` (absolute, e.g. "/proc/loadavg"), read to EOF so
  // /proc files that report size 0 work.
  // Errors: kInvalidArgument when path is not absolute; kIoError naming the resolved path and the
  // OS error ("open /fixtures/host1/proc/stat: No such file or directory (ENOENT)").
  core::Result<std::string> read(std::string_view path) const;

  // Whether `path` (absolute) exists under the root. False for relative paths.
  bool exists(std::string_view path) const;

  // Names of the entries in directory `path` (absolute), sorted, without "." and "..".
  // Empty when the directory is missing or unreadable, or the path is relative.
  std::vector<std::string> list_dir(std::string_view path) const;

  // The root given at construction, without trailing slashes ("" for "/").
  const std::string& root() const { return root_; }

 private:
  std::string resolve(std::string_view path) const;

  std::string root_;
};

// `s` without leading and trailing spaces, tabs and line ends (values read from /proc and /sys).
inline std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

}  // namespace knee::probes
