#include "probes/fs_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

namespace knee::probes {
namespace {

bool is_absolute(std::string_view path) { return !path.empty() && path.front() == '/'; }

// Closes a file descriptor on every return path.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() { ::close(fd_); }

 private:
  int fd_;
};

}  // namespace

FsReader::FsReader(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string FsReader::resolve(std::string_view path) const {
  std::string full = root_;
  full += path;
  return full;
}

core::Result<std::string> FsReader::read(std::string_view path) const {
  if (!is_absolute(path)) {
    return core::Status::invalid_argument("read " + std::string(path) +
                                          ": path must be absolute (start with '/')");
  }
  const std::string full = resolve(path);
  const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return core::Status::from_errno("open " + full, errno);
  const FdCloser closer(fd);

  std::string content;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return core::Status::from_errno("read " + full, errno);
    }
    content.append(buf, static_cast<size_t>(n));
  }
  return content;
}

bool FsReader::exists(std::string_view path) const {
  if (!is_absolute(path)) return false;
  std::error_code ec;
  return std::filesystem::exists(resolve(path), ec);
}

std::vector<std::string> FsReader::list_dir(std::string_view path) const {
  std::vector<std::string> names;
  if (!is_absolute(path)) return names;
  std::error_code ec;
  std::filesystem::directory_iterator it(resolve(path), ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) names.clear();
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace knee::probes
