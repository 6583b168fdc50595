#include "core/files.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace knee::core {

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

bool same_path(const std::string& a, const std::string& b) {
  if (same_file(a, b)) return true;
  std::error_code ea;
  std::error_code eb;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ea);
  const std::filesystem::path cb = std::filesystem::weakly_canonical(b, eb);
  return ea || eb ? a == b : ca == cb;
}

namespace {

// The process's umask, from /proc/self/status ("Umask:\t0022", Linux 4.7+): reading it with
// umask() would change it for a moment under every other thread. 022 when unknown.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) == 0) {
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    }
  }
  return 022;
}

// The mode a new file at `path` gets: the existing file's, or 0666 less the umask.
mode_t mode_for(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return st.st_mode & 07777;
  return 0666 & ~current_umask();
}

// A path the user can fix (a missing or read-only directory, no permission) is bad input;
// anything else (no space, no file descriptors) is the system's.
bool path_error(int err) {
  return err == EACCES || err == ENOENT || err == ENOTDIR || err == EROFS || err == ENAMETOOLONG ||
         err == EISDIR || err == ELOOP || err == EPERM;
}

}  // namespace

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (temp_path_.empty()) return;
  file_.close();
  file_.clear();
  ::unlink(temp_path_.c_str());
  temp_path_.clear();
}

Status OutputFile::open(std::string_view flag, std::string path,
                        const std::vector<std::string>& inputs) {
  flag_ = flag;
  path_ = std::move(path);
  if (path_.empty()) return Status::success();
  for (const std::string& input : inputs) {
    if (input == path_ || same_file(input, path_)) {
      return Status::invalid_argument(fmt::format(
          "{}: '{}' is also an input of this command; write to another file (nothing was "
          "changed)",
          flag_, path_));
    }
  }
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Status::invalid_argument(
        fmt::format("{}: '{}' is a directory; give a file path", flag_, path_));
  }
  // The file is replaced by a rename, which would put a regular file in place of a device or a
  // pipe (/dev/null, a FIFO) and of a symbolic link itself: a device or pipe is refused, and a
  // link is followed, so that its target is what gets written.
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return Status::invalid_argument(fmt::format(
        "{}: '{}' is not a regular file (a device, pipe or socket), and knee writes whole files "
        "by renaming; give a file path{}",
        flag_, path_, flag_ == "-o" ? ", or - for stdout" : ""));
  }
  struct stat link {};
  if (::lstat(path_.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    if (char* target = ::realpath(path_.c_str(), nullptr)) {
      path_ = target;
      std::free(target);
    }
  }
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  std::string temp = dir + "." + name + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    const int err = errno;
    const std::string message =
        fmt::format("{}: cannot write '{}': {}", flag_, path_, std::strerror(err));
    if (!path_error(err)) return Status::io_error(message);
    return Status::invalid_argument(message + "; give a writable file path");
  }
  ::fchmod(fd, mode_for(path_));
  ::close(fd);
  temp_path_ = temp;
  file_.open(temp_path_, std::ios::binary | std::ios::trunc);
  if (!file_) {
    return Status::invalid_argument(
        fmt::format("{}: cannot write '{}'; give a writable file path", flag_, path_));
  }
  return Status::success();
}

Status OutputFile::commit() {
  file_.close();
  if (!file_) return Status::io_error(fmt::format("{}: cannot write '{}'", flag_, path_));
  // On disk before the rename, so that a crash leaves the old file or the whole new one.
  if (const int fd = ::open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced) {
      return Status::io_error(
          fmt::format("{}: cannot write '{}': {}", flag_, path_, std::strerror(errno)));
    }
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return Status::io_error(
        fmt::format("{}: cannot write '{}': {}", flag_, path_, std::strerror(errno)));
  }
  temp_path_.clear();
  return Status::success();
}

Status OutputFile::write(const std::string& text) {
  file_ << text;
  return commit();
}

Result<std::string> read_text_file(std::string_view flag, const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::invalid_argument(
        fmt::format("{}: cannot read '{}': {}", flag, path, std::strerror(errno)));
  }
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      const std::string message =
          fmt::format("{}: cannot read '{}': {}", flag, path, std::strerror(err));
      return err == EISDIR ? Status::invalid_argument(message) : Status::io_error(message);
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace knee::core
