// Files written whole or not at all, and read whole (the project's rule: no output overwrites
// an input, and files are written whole or not at all). Every command that writes a result file
// goes through OutputFile.
//
// Thread-safety: an OutputFile belongs to one thread.
#pragma once

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace knee::core {

// Whether `a` and `b` name the same existing file (same device and inode: through links and
// different spellings of one path); false when either does not exist.
bool same_file(const std::string& a, const std::string& b);
// Whether `a` and `b` would name the same file once written: same_file, or the same path after
// ".", ".." and the symbolic links of its existing part are resolved
// (std::filesystem::weakly_canonical), so files not yet created compare too. No errors: a path
// that cannot be resolved (a permission denied on the way) is compared as spelled.
bool same_path(const std::string& a, const std::string& b);

// A file named by a flag, written whole or not at all: open() creates a temporary file
// beside the path (".NAME.XXXXXX", so a bad path is found before anything is measured), the
// write goes there, is synced to disk and renamed over the path only once it is complete. A
// command that fails before writing leaves the path as it was (the destructor removes the
// temporary file); one killed outright (SIGKILL, a crash) leaves the path as it was and may
// leave its hidden temporary behind. The file gets the existing file's mode, or 0666 less the
// umask (read from /proc/self/status, never changed).
class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Opens `path` when it is not empty. `inputs`: the files the command reads; an output that is
  // one of them (the same file, by device and inode) is refused. Errors: kInvalidArgument naming
  // `flag`: the path is an input, a directory, or not writable there; kIoError when the system
  // refuses (no space, no file descriptors).
  Status open(std::string_view flag, std::string path, const std::vector<std::string>& inputs = {});
  bool wanted() const { return !path_.empty(); }
  // Writes `text`, then renames the file into place. Errors: kIoError naming the flag and the
  // path.
  Status write(const std::string& text);
  // The temporary file, for output written as it comes; commit() when it is complete.
  std::ostream& stream() { return file_; }
  // Closes the temporary file and renames it over the path. Errors: kIoError naming the flag.
  Status commit();
  // Removes the temporary file unwritten, for a caller that checked the path early and opens it
  // again once the output is ready (so a process killed meanwhile leaves nothing behind).
  void discard();

 private:
  std::string flag_;
  std::string path_;
  std::string temp_path_;  // empty once committed
  std::ofstream file_;
};

// The whole of file `path`. Errors: kInvalidArgument "<flag>: cannot read '<path>': <why>"
// when it cannot be opened (or is a directory), kIoError when reading it fails.
Result<std::string> read_text_file(std::string_view flag, const std::string& path);

}  // namespace knee::core
