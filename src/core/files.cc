#include "core/files.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace knee::core {

namespace {

// Whether `a` and `b` name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// The mode a new file at `path` gets: the existing file's, or 0666 less the umask.
mode_t mode_for(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return st.st_mode & 07777;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

OutputFile::~OutputFile() {
  if (temp_path_.empty()) return;
  file_.close();
  ::unlink(temp_path_.c_str());
}

Status OutputFile::open(std::string_view flag, std::string path,
                        const std::vector<std::string>& inputs) {
  flag_ = flag;
  path_ = std::move(path);
  if (path_.empty()) return Status::ok();
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
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  std::string temp = dir + "." + name + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    return Status::invalid_argument(
        fmt::format("{}: cannot write '{}': {}; give a writable file path", flag_, path_,
                    std::strerror(errno)));
  }
  ::fchmod(fd, mode_for(path_));
  ::close(fd);
  temp_path_ = temp;
  file_.open(temp_path_, std::ios::binary | std::ios::trunc);
  if (!file_) {
    return Status::invalid_argument(
        fmt::format("{}: cannot write '{}'; give a writable file path", flag_, path_));
  }
  return Status::ok();
}

Status OutputFile::commit() {
  file_.close();
  if (!file_) return Status::io_error(fmt::format("{}: cannot write '{}'", flag_, path_));
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return Status::io_error(
        fmt::format("{}: cannot write '{}': {}", flag_, path_, std::strerror(errno)));
  }
  temp_path_.clear();
  return Status::ok();
}

Status OutputFile::write(const std::string& text) {
  file_ << text;
  return commit();
}

Result<std::string> read_text_file(std::string_view flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::invalid_argument(
        fmt::format("{}: cannot read '{}': {}", flag, path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace knee::core
