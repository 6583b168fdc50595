// The durable-write rungs of the latency ladder, and what stands behind the directory written to.
// Sources: statfs(2) and linux/magic.h for filesystem magics; proc(5) for /proc/self/mountinfo;
// the kernel's sysfs-block ABI (Documentation/ABI/stable/sysfs-block) for /sys/dev/block and
// queue/rotational; fdatasync(2), fsync(2) and open(2) O_DSYNC for what each flush waits for.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/ladder.h"

namespace knee::probes {
namespace {

using core::Result;
using core::Status;

constexpr int64_t kBlockBytes = 4096;

constexpr int64_t kTmpfsMagic = 0x01021994;
constexpr int64_t kRamfsMagic = 0x858458f6;
constexpr int64_t kOverlayMagic = 0x794c7630;

// "\040" -> " ": mountinfo escapes space, tab, newline and backslash as 3-digit octal.
std::string unescape_octal(std::string_view s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '\\' && k + 3 < s.size() && s[k + 1] >= '0' && s[k + 1] <= '3' && s[k + 2] >= '0' &&
        s[k + 2] <= '7' && s[k + 3] >= '0' && s[k + 3] <= '7') {
      out += static_cast<char>((s[k + 1] - '0') * 64 + (s[k + 2] - '0') * 8 + (s[k + 3] - '0'));
      k += 3;
    } else {
      out += s[k];
    }
  }
  return out;
}

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t at = 0;
  while (at < line.size()) {
    const size_t begin = line.find_first_not_of(' ', at);
    if (begin == std::string_view::npos) break;
    const size_t end = line.find(' ', begin);
    fields.push_back(line.substr(begin, end == std::string_view::npos ? end : end - begin));
    at = end == std::string_view::npos ? line.size() : end;
  }
  return fields;
}

bool holds(std::string_view mount_point, std::string_view path) {
  if (mount_point == "/") return true;
  return path == mount_point ||
         (path.size() > mount_point.size() && path.substr(0, mount_point.size()) == mount_point &&
          path[mount_point.size()] == '/');
}

// KEY=value of a uevent file.
std::string uevent_value(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == '=') {
      return std::string(trim(line.substr(key.size() + 1)));
    }
  }
  return "";
}

std::string read_trimmed(const FsReader& fs, const std::string& path) {
  const Result<std::string> text = fs.read(path);
  return text ? std::string(trim(*text)) : std::string();
}

// The whole disk behind a mount: /sys/dev/block/MAJ:MIN/uevent names the device; a partition's
// disk is the parent directory (the sysfs link resolves first, then ".."). A source "/dev/NAME"
// is the fallback (btrfs reports an anonymous 0:N device).
void find_block_device(const FsReader& fs, const MountInfo& mount, DiskTarget& t) {
  std::string base = "/sys/dev/block/" + mount.major_minor;
  Result<std::string> uevent = fs.read(base + "/uevent");
  if ((!uevent || uevent_value(*uevent, "DEVNAME").empty()) &&
      mount.source.rfind("/dev/", 0) == 0) {
    base = "/sys/class/block/" + mount.source.substr(5);
    uevent = fs.read(base + "/uevent");
  }
  if (!uevent) return;
  std::string name = uevent_value(*uevent, "DEVNAME");
  if (uevent_value(*uevent, "DEVTYPE") == "partition") {
    if (const Result<std::string> parent = fs.read(base + "/../uevent")) {
      const std::string disk = uevent_value(*parent, "DEVNAME");
      if (!disk.empty()) name = disk;
    }
  }
  if (name.empty()) return;
  t.device = name;
  t.device_model = read_trimmed(fs, "/sys/block/" + name + "/device/model");
  const std::string rotational = read_trimmed(fs, "/sys/block/" + name + "/queue/rotational");
  t.rotational = rotational == "0" ? 0 : rotational == "1" ? 1 : -1;
}

std::string super_option(std::string_view options, std::string_view key) {
  while (!options.empty()) {
    const size_t comma = options.find(',');
    const std::string_view opt = options.substr(0, comma);
    options = comma == std::string_view::npos ? std::string_view() : options.substr(comma + 1);
    if (opt.size() > key.size() && opt.substr(0, key.size()) == key && opt[key.size()] == '=') {
      return std::string(opt.substr(key.size() + 1));
    }
  }
  return "";
}

}  // namespace

std::string fs_type_name(int64_t magic) {
  switch (magic) {
    case 0xEF53:
      return "ext2/ext3/ext4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0xF2F52010:
      return "f2fs";
    case 0x2fc12fc1:
      return "zfs";
    case kTmpfsMagic:
      return "tmpfs";
    case kRamfsMagic:
      return "ramfs";
    case kOverlayMagic:
      return "overlay";
    case 0x6969:
      return "nfs";
    case 0x65735546:
      return "fuse";
    case 0x4d44:
      return "vfat";
    case 0x2011BAB0:
      return "exfat";
    case 0xFF534D42:
      return "cifs";
    case 0xFE534D42:
      return "smb2";
    case 0x01021997:
      return "9p";
    case 0x73717368:
      return "squashfs";
    case 0x5346544e:
      return "ntfs";
    default:
      return "";
  }
}

Result<MountInfo> mount_of(std::string_view text, std::string_view path) {
  std::optional<MountInfo> best;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const std::vector<std::string_view> f = split_spaces(line);
    size_t dash = 6;  // optional fields end with a lone "-"
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 7 || dash + 2 >= f.size()) continue;
    MountInfo m;
    m.major_minor = std::string(f[2]);
    m.mount_point = unescape_octal(f[4]);
    m.fs_type = std::string(f[dash + 1]);
    m.source = unescape_octal(f[dash + 2]);
    m.super_options = dash + 3 < f.size() ? std::string(f[dash + 3]) : std::string();
    if (!holds(m.mount_point, path)) continue;
    if (!best || m.mount_point.size() >= best->mount_point.size()) best = std::move(m);
  }
  if (!best) {
    return Status::parse_error(fmt::format("no mount in /proc/self/mountinfo holds {}", path));
  }
  return *best;
}

Result<DiskTarget> describe_dir(const FsReader& fs, const std::string& dir) {
  DiskTarget t;
  t.dir = dir;
  char resolved[PATH_MAX];
  if (::realpath(dir.c_str(), resolved) == nullptr) {
    return Status::invalid_argument(
        fmt::format("--dir {}: {} ({})", dir, std::strerror(errno), core::errno_name(errno)));
  }
  t.path = resolved;
  struct stat st {};
  if (::stat(t.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::invalid_argument(
        fmt::format("--dir {}: not a directory; give a folder on a real disk", dir));
  }
  struct statfs sfs {};
  if (::statfs(t.path.c_str(), &sfs) != 0) {
    return Status::invalid_argument(fmt::format("--dir {}: statfs: {} ({})", dir,
                                                std::strerror(errno), core::errno_name(errno)));
  }
  const auto magic = static_cast<int64_t>(sfs.f_type);
  t.fs_type = fs_type_name(magic);
  if (t.fs_type.empty()) t.fs_type = fmt::format("unknown (statfs magic 0x{:x})", magic);
  t.memory = magic == kTmpfsMagic || magic == kRamfsMagic;

  if (const Result<std::string> mountinfo = fs.read("/proc/self/mountinfo")) {
    if (const Result<MountInfo> mount = mount_of(*mountinfo, t.path)) {
      t.mount_point = mount->mount_point;
      t.source = mount->source;
      // mountinfo names the type exactly ("ext4" where statfs has one magic for ext2/3/4).
      if (!mount->fs_type.empty()) t.fs_type = mount->fs_type;
      find_block_device(fs, *mount, t);
      if (magic == kOverlayMagic) {
        const std::string upper = super_option(mount->super_options, "upperdir");
        struct statfs upper_fs {};
        if (!upper.empty() && ::statfs(upper.c_str(), &upper_fs) == 0) {
          const auto upper_magic = static_cast<int64_t>(upper_fs.f_type);
          t.memory = upper_magic == kTmpfsMagic || upper_magic == kRamfsMagic;
        } else {
          t.warnings.push_back(fmt::format(
              "--dir {} is on an overlay filesystem whose upper layer ({}) could not be checked: "
              "if it lives in memory, the durable-write numbers mean nothing",
              dir, upper.empty() ? "not named in mountinfo" : upper));
        }
      }
    }
  }
  if (t.device.rfind("zram", 0) == 0 || t.device.rfind("ram", 0) == 0) t.memory = true;
  if (t.memory) {
    t.warnings.push_back(
        fmt::format("--dir {} is on {}, a filesystem in memory: writes never reach a drive, so the "
                    "durable-write numbers mean nothing; pass --dir on a real disk",
                    dir, t.device.rfind("zram", 0) == 0 ? t.device : t.fs_type));
  } else if (t.device.empty()) {
    t.warnings.push_back(fmt::format(
        "no block device found behind --dir {} ({}, source {}): a network or virtual filesystem "
        "adds its own latency to every flush",
        dir, t.fs_type, t.source.empty() ? "unknown" : t.source));
  } else if (t.device.rfind("vd", 0) == 0 || t.device.rfind("xvd", 0) == 0) {
    t.warnings.push_back(fmt::format(
        "{} is the virtual disk of a virtual machine: what a flush reaches (the host's cache or "
        "its drive) depends on the hypervisor's cache mode",
        t.device));
  }
  return t;
}

std::optional<DiskTarget> disk_behind(const FsReader& fs, const std::vector<std::string>& files) {
  std::optional<DiskTarget> found;
  for (const std::string& file : files) {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::absolute(file, ec).parent_path();
    if (ec || dir.empty()) continue;
    Result<DiskTarget> target = describe_dir(fs, dir.string());
    if (!target) continue;
    found = std::move(target).value();
    if (!found->device.empty()) break;
  }
  return found;
}

Result<DiskLadder> run_disk(const FsReader& fs, const LadderOptions& options) {
  Result<DiskTarget> target = describe_dir(fs, options.dir);
  if (!target) return target.status();
  DiskLadder out;
  out.target = std::move(*target);
  out.block_bytes = kBlockBytes;
  const std::string file = fmt::format("{}/knee-ladder-{}.tmp", out.target.path, ::getpid());
  alignas(4096) char block[kBlockBytes];
  std::memset(block, 'x', sizeof block);

  struct Mode {
    const char* id;
    const char* name;
    const char* how;
    int extra_flags;
    int (*flush)(int);
  };
  const Mode modes[] = {
      {"write_cache", "write 4 KiB, OS cache only",
       "write(2) of a 4 KiB block appended to the file; returns once the bytes are in the page "
       "cache",
       0, nullptr},
      {"write_fdatasync", "write 4 KiB + fdatasync",
       "write(2) of a 4 KiB block appended to the file, then fdatasync(2): waits until the data "
       "and the metadata needed to read it back (the new size) reach the device",
       0, ::fdatasync},
      {"write_fsync", "write 4 KiB + fsync",
       "write(2) of a 4 KiB block appended to the file, then fsync(2): waits until data and all "
       "metadata (times too) reach the device",
       0, ::fsync},
      {"write_odsync", "write 4 KiB with O_DSYNC",
       "write(2) of a 4 KiB block appended to a file opened with O_DSYNC: each write returns "
       "once durable, as with write + fdatasync",
       O_DSYNC, nullptr},
  };
  for (const Mode& mode : modes) {
    const int fd =
        ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | mode.extra_flags, 0600);
    if (fd < 0) {
      // A folder knee may not create files in (/proc, read-only, another user's) is bad input.
      const int err = errno;
      const std::string message = fmt::format("--dir {}: cannot create {}: {} ({})", options.dir,
                                              file, std::strerror(err), core::errno_name(err));
      if (err == EIO || err == ENOSPC || err == EMFILE || err == ENFILE) {
        return Status::io_error(message);
      }
      return Status::invalid_argument(message + "; give a writable folder on a real disk");
    }
    int first_errno = 0;
    const char* failed = "";
    const Samples s = measure(options.disk_timing, [&](uint64_t) {
      const ssize_t n = ::write(fd, block, sizeof block);
      if (n != static_cast<ssize_t>(sizeof block) && first_errno == 0) {
        first_errno = n < 0 ? errno : EIO;
        failed = "write";
      }
      if (mode.flush != nullptr && mode.flush(fd) != 0 && first_errno == 0) {
        first_errno = errno;
        failed = mode.id;
      }
    });
    ::close(fd);
    ::unlink(file.c_str());
    if (first_errno != 0) {
      return Status::io_error(fmt::format("{} to {}: {} ({})", failed, file,
                                          std::strerror(first_errno),
                                          core::errno_name(first_errno)));
    }
    Rung r = summarise(s, options.disk_timing.repeats);
    r.group = "disk";
    r.id = mode.id;
    r.name = mode.name;
    r.method = fmt::format(
        "{}; one at a time, each write (and its flush) timed alone; a fresh file "
        "per mode in {} ({}), removed afterwards",
        mode.how, out.target.path, out.target.fs_type);
    out.rungs.push_back(std::move(r));
  }
  return out;
}

}  // namespace knee::probes
