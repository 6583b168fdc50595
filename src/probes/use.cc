#include "probes/use.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>
#include <utility>

namespace knee::probes {
namespace {

using core::is_known;
using core::kUnknown;

// Highest CPU number accepted from /proc/stat, against a malformed "cpu999999999" line.
constexpr size_t kMaxCpus = 65536;
constexpr double kBytesPerKb = 1024;
constexpr double kSectorBytes = 512;  // /proc/diskstats sectors, whatever the device's blocks
constexpr double kMsPerS = 1000;
constexpr double kUsPerS = 1e6;
constexpr double kBitsPerMbit = 1e6;

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    lines.push_back(text.substr(0, eol));
    if (eol == std::string_view::npos) break;
    text = text.substr(eol + 1);
  }
  return lines;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  constexpr std::string_view kSpace = " \t\r";
  size_t pos = 0;
  for (;;) {
    const size_t begin = line.find_first_not_of(kSpace, pos);
    if (begin == std::string_view::npos) break;
    const size_t end = line.find_first_of(kSpace, begin);
    words.push_back(line.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) break;
    pos = end;
  }
  return words;
}

template <typename Int>
std::optional<Int> parse_int(std::string_view s) {
  Int value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<uint64_t> parse_u64(std::string_view s) { return parse_int<uint64_t>(s); }

std::optional<std::string> read_file(const FsReader& fs, const std::string& path) {
  core::Result<std::string> content = fs.read(path);
  if (!content) return std::nullopt;
  return std::move(*content);
}

// ---- /proc/stat

std::optional<CpuTicks> parse_cpu_line(std::span<const std::string_view> fields) {
  // user nice system idle iowait irq softirq steal [guest guest_nice: already in user, nice]
  uint64_t v[8] = {};
  if (fields.size() < 4) return std::nullopt;
  for (size_t i = 0; i < 8 && i < fields.size(); ++i) {
    const std::optional<uint64_t> x = parse_u64(fields[i]);
    if (!x) return std::nullopt;
    v[i] = *x;
  }
  CpuTicks t;
  t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  t.total = t.busy + v[3] + v[4];
  return t;
}

void read_stat(const FsReader& fs, UseSnapshot& s) {
  const std::optional<std::string> text = read_file(fs, "/proc/stat");
  if (!text) return;
  for (const std::string_view line : split_lines(*text)) {
    if (!line.starts_with("cpu")) continue;
    const std::vector<std::string_view> words = split_words(line);
    if (words.empty()) continue;
    const std::span<const std::string_view> fields(words.begin() + 1, words.end());
    if (words[0] == "cpu") {
      s.cpu_all = parse_cpu_line(fields);
      continue;
    }
    const std::optional<size_t> n = parse_int<size_t>(words[0].substr(3));
    if (!n || *n >= kMaxCpus) continue;
    if (s.cpus.size() <= *n) s.cpus.resize(*n + 1);
    s.cpus[*n] = parse_cpu_line(fields);
  }
}

// ---- /proc/pressure

std::optional<uint64_t> read_psi_some_us(const FsReader& fs, const std::string& path) {
  const std::optional<std::string> text = read_file(fs, path);
  if (!text) return std::nullopt;
  for (const std::string_view line : split_lines(*text)) {
    const std::vector<std::string_view> words = split_words(line);
    if (words.empty() || words[0] != "some") continue;
    for (const std::string_view w : words) {
      if (w.starts_with("total=")) return parse_u64(w.substr(6));
    }
  }
  return std::nullopt;
}

// ---- /proc/PID

// utime + stime of a /proc/PID/stat or /proc/PID/task/TID/stat line. The command name is in
// parentheses and may hold spaces and parentheses, so fields are counted after the last ')'.
std::optional<uint64_t> parse_proc_stat_ticks(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const std::vector<std::string_view> words = split_words(trim(text.substr(close + 1)));
  // words[0] is field 3 (state): utime (field 14) is words[11], stime (15) words[12].
  if (words.size() < 13) return std::nullopt;
  const std::optional<uint64_t> utime = parse_u64(words[11]);
  const std::optional<uint64_t> stime = parse_u64(words[12]);
  if (!utime || !stime) return std::nullopt;
  return *utime + *stime;
}

// The first number after "Key:" in a /proc "Key: value [kB]" file.
std::optional<uint64_t> find_key_number(std::string_view text, std::string_view key) {
  for (const std::string_view line : split_lines(text)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || trim(line.substr(0, colon)) != key) continue;
    const std::vector<std::string_view> words = split_words(line.substr(colon + 1));
    if (words.empty()) return std::nullopt;
    return parse_u64(words[0]);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> cpus_in_list(std::string_view status, std::string_view key) {
  size_t at = 0;
  while ((at = status.find(key, at)) != std::string_view::npos) {
    if ((at == 0 || status[at - 1] == '\n') && status.substr(at + key.size()).starts_with(":")) {
      break;
    }
    at += key.size();
  }
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view list = status.substr(at + key.size() + 1);
  list = list.substr(0, list.find('\n'));
  int count = 0;
  for (std::string_view range : split_words(list)) {
    // "0-3,8,10-11": comma-separated single CPUs and inclusive ranges.
    size_t start = 0;
    while (start <= range.size()) {
      const size_t comma = range.find(',', start);
      const std::string_view item = range.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      const size_t dash = item.find('-');
      const std::optional<int> lo = parse_int<int>(item.substr(0, dash));
      const std::optional<int> hi =
          dash == std::string_view::npos ? lo : parse_int<int>(item.substr(dash + 1));
      if (!lo || !hi || *hi < *lo) return std::nullopt;
      count += *hi - *lo + 1;
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  return count > 0 ? std::optional<int>(count) : std::nullopt;
}

namespace {

ProcessCounters read_process(const FsReader& fs, const WatchedProcess& w) {
  ProcessCounters s;
  s.name = w.name;
  s.pid = w.pid;
  const std::string dir = "/proc/" + std::to_string(w.pid);
  if (const std::optional<std::string> stat = read_file(fs, dir + "/stat")) {
    s.cpu_ticks = parse_proc_stat_ticks(*stat);
  }
  if (const std::optional<std::string> status = read_file(fs, dir + "/status")) {
    if (const std::optional<uint64_t> threads = find_key_number(*status, "Threads")) {
      s.threads = static_cast<int>(std::min<uint64_t>(*threads, 1u << 30));
    }
    if (const std::optional<uint64_t> rss_kb = find_key_number(*status, "VmRSS")) {
      s.rss_bytes = *rss_kb * 1024;
    }
    s.cpus_allowed = cpus_in_list(*status, "Cpus_allowed_list");
  }
  const std::vector<std::string> tids = fs.list_dir(dir + "/task");
  if (tids.size() > kMaxServerTasks) return s;
  for (const std::string& name : tids) {
    const std::optional<int> tid = parse_int<int>(name);
    if (!tid) continue;
    // A thread may exit between listing and reading: it is then simply not counted.
    const std::optional<std::string> stat = read_file(fs, dir + "/task/" + name + "/stat");
    if (!stat) continue;
    if (const std::optional<uint64_t> ticks = parse_proc_stat_ticks(*stat)) {
      s.tasks.push_back({*tid, *ticks});
    }
  }
  return s;
}

// ---- /proc/diskstats

bool keep_disk(const FsReader& fs, std::string_view name) {
  for (const std::string_view prefix : {"loop", "ram", "zram"}) {
    if (name.starts_with(prefix)) return false;
  }
  std::string sys_name(name);
  std::replace(sys_name.begin(), sys_name.end(), '/', '!');
  return fs.exists("/sys/block/" + sys_name);
}

void read_diskstats(const FsReader& fs, UseSnapshot& s) {
  const std::optional<std::string> text = read_file(fs, "/proc/diskstats");
  if (!text) return;
  for (const std::string_view line : split_lines(*text)) {
    const std::vector<std::string_view> w = split_words(line);
    // major minor name, then at least the 11 fields every kernel since 2.6 prints.
    if (w.size() < 14 || !keep_disk(fs, w[2])) continue;
    uint64_t v[11];
    bool ok = true;
    for (size_t i = 0; i < 11 && ok; ++i) {
      const std::optional<uint64_t> x = parse_u64(w[3 + i]);
      ok = x.has_value();
      if (ok) v[i] = *x;
    }
    if (!ok) continue;
    // v[8] is the number of I/Os in flight, a gauge that iostat -x does not use.
    s.disks.push_back(
        {std::string(w[2]), v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[9], v[10]});
  }
}

// ---- /proc/net/dev, /sys/class/net

void read_link(const FsReader& fs, NetCounters& n) {
  if (n.interface == "lo" || fs.exists("/sys/devices/virtual/net/" + n.interface)) return;
  const std::string dir = "/sys/class/net/" + n.interface;
  if (const std::optional<std::string> speed = read_file(fs, dir + "/speed")) {
    const std::optional<int64_t> mbit = parse_int<int64_t>(trim(*speed));
    if (mbit && *mbit > 0) n.speed_mbit = *mbit;
  }
  if (const std::optional<std::string> duplex = read_file(fs, dir + "/duplex")) {
    n.half_duplex = trim(*duplex) == "half";
  }
}

void read_net_dev(const FsReader& fs, UseSnapshot& s) {
  const std::optional<std::string> text = read_file(fs, "/proc/net/dev");
  if (!text) return;
  for (const std::string_view line : split_lines(*text)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = trim(line.substr(0, colon));
    const std::vector<std::string_view> w = split_words(line.substr(colon + 1));
    if (name.empty() || name.find('|') != std::string_view::npos || w.size() < 12) continue;
    const std::optional<uint64_t> rx = parse_u64(w[0]), rx_drop = parse_u64(w[3]),
                                  tx = parse_u64(w[8]), tx_drop = parse_u64(w[11]);
    if (!rx || !rx_drop || !tx || !tx_drop) continue;
    NetCounters n;
    n.interface = std::string(name);
    n.rx_bytes = *rx;
    n.rx_drops = *rx_drop;
    n.tx_bytes = *tx;
    n.tx_drops = *tx_drop;
    read_link(fs, n);
    s.nets.push_back(std::move(n));
  }
}

// ---- /proc/net/snmp, /proc/net/netstat: pairs of "Prefix: names..." and "Prefix: values..."

std::optional<uint64_t> find_table_counter(std::string_view text, std::string_view prefix,
                                           std::string_view name) {
  const std::vector<std::string_view> lines = split_lines(text);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::vector<std::string_view> names = split_words(lines[i]);
    const std::vector<std::string_view> values = split_words(lines[i + 1]);
    if (names.empty() || values.empty() || names[0] != prefix || values[0] != prefix) continue;
    for (size_t k = 1; k < names.size() && k < values.size(); ++k) {
      if (names[k] == name) return parse_u64(values[k]);
    }
    ++i;  // the values line is not a header
  }
  return std::nullopt;
}

void read_tcp(const FsReader& fs, UseSnapshot& s) {
  if (const std::optional<std::string> snmp = read_file(fs, "/proc/net/snmp")) {
    s.tcp_retrans_segs = find_table_counter(*snmp, "Tcp:", "RetransSegs");
  }
  if (const std::optional<std::string> netstat = read_file(fs, "/proc/net/netstat")) {
    s.tcp_listen_overflows = find_table_counter(*netstat, "TcpExt:", "ListenOverflows");
    s.tcp_listen_drops = find_table_counter(*netstat, "TcpExt:", "ListenDrops");
  }
}

// ---- arithmetic

// b - a as a double, or NaN when either is missing or the counter went backwards.
double delta(const std::optional<uint64_t>& a, const std::optional<uint64_t>& b) {
  if (!a || !b || *b < *a) return kUnknown;
  return static_cast<double>(*b - *a);
}

double clamp_pct(double pct) { return is_known(pct) ? std::clamp(pct, 0.0, 100.0) : pct; }

double busy_pct(const std::optional<CpuTicks>& a, const std::optional<CpuTicks>& b) {
  if (!a || !b || b->total <= a->total || b->busy < a->busy) return kUnknown;
  const double busy = static_cast<double>(b->busy - a->busy);
  return clamp_pct(busy / static_cast<double>(b->total - a->total) * 100);
}

double psi_pct(const std::optional<uint64_t>& a, const std::optional<uint64_t>& b, double wall_s) {
  return clamp_pct(delta(a, b) / (wall_s * kUsPerS) * 100);
}

double to_double(const std::optional<uint64_t>& v) {
  return v ? static_cast<double>(*v) : kUnknown;
}

// The busiest thread's CPU over wall time, % of one core; threads that appeared during the
// interval count from zero.
double busiest_thread_pct(const ProcessCounters& a, const ProcessCounters& b, int64_t ticks_per_s,
                          double wall_s) {
  if (a.tasks.empty() || b.tasks.empty() || ticks_per_s <= 0) return kUnknown;
  uint64_t busiest = 0;
  for (const TaskTicks& t : b.tasks) {
    const auto before = std::find_if(a.tasks.begin(), a.tasks.end(),
                                     [&](const TaskTicks& x) { return x.tid == t.tid; });
    const uint64_t start = before == a.tasks.end() ? 0 : before->cpu_ticks;
    if (t.cpu_ticks >= start) busiest = std::max(busiest, t.cpu_ticks - start);
  }
  const double seconds = static_cast<double>(busiest) / static_cast<double>(ticks_per_s);
  return clamp_pct(seconds / wall_s * 100);
}

// `b` over the interval since `a` (nullptr: the process was not followed then), as
// ProcessUse: CPU figures only when both readings are of the same pid.
core::ProcessUse process_between(const ProcessCounters* a, const ProcessCounters& b,
                                 int64_t ticks_per_s, double wall_s) {
  core::ProcessUse p;
  p.pid = b.pid;
  p.name = b.name;
  if (a != nullptr && a->pid == b.pid && ticks_per_s > 0 && wall_s > 0) {
    const double seconds = delta(a->cpu_ticks, b.cpu_ticks) / static_cast<double>(ticks_per_s);
    p.cpu_pct = seconds / wall_s * 100;
    // Ticks land on the clock's grain, so a process pinned to its CPUs can read a few % above
    // them over one interval (regression: "server process at 104% of one core" under taskset).
    // It cannot run on more CPUs than it is allowed (the main thread's Cpus_allowed_list, which
    // taskset and cpusets give every thread).
    if (b.cpus_allowed && *b.cpus_allowed > 0) {
      p.cpu_pct = std::min(p.cpu_pct, *b.cpus_allowed * 100.0);
    }
    p.cpu_max_pct = p.cpu_pct;
    p.busiest_thread_cpu_pct = busiest_thread_pct(*a, b, ticks_per_s, wall_s);
    p.busiest_thread_cpu_max_pct = p.busiest_thread_cpu_pct;
  }
  if (wall_s > 0) {
    p.threads = b.threads.value_or(0);
    p.cpus_allowed = b.cpus_allowed.value_or(0);
    p.rss_bytes = to_double(b.rss_bytes);
    p.rss_max_bytes = p.rss_bytes;
  }
  return p;
}

// The backend of `a` with b's name and pid, or nullptr.
const ProcessCounters* same_backend(const UseSnapshot& a, const ProcessCounters& b) {
  for (const ProcessCounters& p : a.backends) {
    if (p.name == b.name && p.pid == b.pid) return &p;
  }
  return nullptr;
}

core::DiskUse disk_between(const DiskCounters& a, const DiskCounters& b, double wall_s) {
  core::DiskUse d;
  d.device = b.device;
  const uint64_t before[] = {a.reads,  a.reads_merged,  a.sectors_read,    a.read_ms,
                             a.writes, a.writes_merged, a.sectors_written, a.write_ms,
                             a.io_ms,  a.weighted_io_ms};
  const uint64_t after[] = {b.reads,  b.reads_merged,  b.sectors_read,    b.read_ms,
                            b.writes, b.writes_merged, b.sectors_written, b.write_ms,
                            b.io_ms,  b.weighted_io_ms};
  for (size_t i = 0; i < std::size(before); ++i) {
    if (after[i] < before[i]) {  // counters reset: nothing can be said about this interval
      d.reads_per_s = d.writes_per_s = d.read_merges_per_s = d.write_merges_per_s = kUnknown;
      d.read_kb_per_s = d.write_kb_per_s = d.read_await_ms = d.write_await_ms = kUnknown;
      d.queue_size = d.util_pct = d.util_max_pct = kUnknown;
      return d;
    }
  }
  const auto diff = [](uint64_t x, uint64_t y) { return static_cast<double>(y - x); };
  const double reads = diff(a.reads, b.reads);
  const double writes = diff(a.writes, b.writes);
  const double interval_ms = wall_s * kMsPerS;
  d.reads_per_s = reads / wall_s;
  d.writes_per_s = writes / wall_s;
  d.read_merges_per_s = diff(a.reads_merged, b.reads_merged) / wall_s;
  d.write_merges_per_s = diff(a.writes_merged, b.writes_merged) / wall_s;
  d.read_kb_per_s = diff(a.sectors_read, b.sectors_read) * kSectorBytes / kBytesPerKb / wall_s;
  d.write_kb_per_s =
      diff(a.sectors_written, b.sectors_written) * kSectorBytes / kBytesPerKb / wall_s;
  d.read_await_ms = reads > 0 ? diff(a.read_ms, b.read_ms) / reads : 0;
  d.write_await_ms = writes > 0 ? diff(a.write_ms, b.write_ms) / writes : 0;
  d.queue_size = diff(a.weighted_io_ms, b.weighted_io_ms) / interval_ms;
  d.util_pct = std::min(100.0, diff(a.io_ms, b.io_ms) / interval_ms * 100);
  d.util_max_pct = d.util_pct;
  return d;
}

double link_util_pct(double rx_bytes_per_s, double tx_bytes_per_s, double speed_mbit,
                     bool half_duplex) {
  if (!(speed_mbit > 0)) return kUnknown;
  const double bytes_per_s =
      half_duplex ? rx_bytes_per_s + tx_bytes_per_s : std::max(rx_bytes_per_s, tx_bytes_per_s);
  return bytes_per_s * 8 / (speed_mbit * kBitsPerMbit) * 100;
}

core::NetUse net_between(const NetCounters& a, const NetCounters& b, double wall_s) {
  core::NetUse n;
  n.interface = b.interface;
  n.speed_mbit = static_cast<double>(b.speed_mbit);
  if (b.rx_bytes < a.rx_bytes || b.tx_bytes < a.tx_bytes || b.rx_drops < a.rx_drops ||
      b.tx_drops < a.tx_drops) {
    n.rx_bytes_per_s = n.tx_bytes_per_s = n.drops_per_s = kUnknown;
    return n;
  }
  n.rx_bytes_per_s = static_cast<double>(b.rx_bytes - a.rx_bytes) / wall_s;
  n.tx_bytes_per_s = static_cast<double>(b.tx_bytes - a.tx_bytes) / wall_s;
  n.drops_per_s =
      static_cast<double>((b.rx_drops - a.rx_drops) + (b.tx_drops - a.tx_drops)) / wall_s;
  n.util_pct = link_util_pct(n.rx_bytes_per_s, n.tx_bytes_per_s, n.speed_mbit, b.half_duplex);
  n.util_max_pct = n.util_pct;
  return n;
}

// ---- folding

// Weighted mean of the known values added; NaN when none was known, 0 when all weights were 0.
class Mean {
 public:
  void add(double value, double weight) {
    if (!is_known(value)) return;
    seen_ = true;
    sum_ += value * weight;
    weight_ += weight;
  }
  double get() const {
    if (!seen_) return kUnknown;
    return weight_ > 0 ? sum_ / weight_ : 0;
  }

 private:
  bool seen_ = false;
  double sum_ = 0;
  double weight_ = 0;
};

// Maximum (or minimum) of the known values added; NaN when none was known.
class Extreme {
 public:
  explicit Extreme(bool max = true) : max_(max) {}
  void add(double value) {
    if (!is_known(value)) return;
    if (!is_known(value_) || (max_ ? value > value_ : value < value_)) value_ = value;
  }
  double get() const { return value_; }

 private:
  bool max_;
  double value_ = kUnknown;
};

struct DiskFold {
  std::string device;
  Mean reads, writes, read_merges, write_merges, read_kb, write_kb, read_await, write_await, queue,
      util;
  Extreme util_max;
};

struct NetFold {
  std::string interface;
  Mean rx, tx, util, drops;
  Extreme util_max;
  double speed_mbit = -1;
};

template <typename Fold>
Fold& fold_named(std::vector<Fold>& folds, const std::string& name, std::string Fold::*member) {
  for (Fold& f : folds) {
    if (f.*member == name) return f;
  }
  folds.emplace_back();
  folds.back().*member = name;
  return folds.back();
}

// Gauges read at the end of `replaced` are readings of the window too: a merged interval keeps
// their extremes (most threads, largest RSS, least MemAvailable).
void keep_process_extremes(const core::ProcessUse& replaced, core::ProcessUse& merged) {
  merged.threads = std::max(merged.threads, replaced.threads);
  merged.cpus_allowed = std::max(merged.cpus_allowed, replaced.cpus_allowed);
  Extreme rss_max;
  rss_max.add(replaced.rss_max_bytes);
  rss_max.add(merged.rss_max_bytes);
  merged.rss_max_bytes = rss_max.get();
}

void keep_gauge_extremes(const core::ResourceUse& replaced, core::ResourceUse& merged) {
  if (replaced.server && merged.server) keep_process_extremes(*replaced.server, *merged.server);
  for (core::ProcessUse& m : merged.backends) {
    for (const core::ProcessUse& r : replaced.backends) {
      if (r.name == m.name && r.pid == m.pid) keep_process_extremes(r, m);
    }
  }
  Extreme mem_min(false);
  mem_min.add(replaced.mem_available_min_bytes);
  mem_min.add(merged.mem_available_min_bytes);
  merged.mem_available_min_bytes = mem_min.get();
}

}  // namespace

UseSnapshot take_snapshot(const FsReader& fs, const WatchedProcesses& processes,
                          core::TimePoint now) {
  UseSnapshot s;
  s.at = now;
  const long ticks = ::sysconf(_SC_CLK_TCK);
  s.clock_ticks_per_s = ticks > 0 ? ticks : 100;
  read_stat(fs, s);
  s.cpu_pressure_some_us = read_psi_some_us(fs, "/proc/pressure/cpu");
  s.io_pressure_some_us = read_psi_some_us(fs, "/proc/pressure/io");
  s.memory_pressure_some_us = read_psi_some_us(fs, "/proc/pressure/memory");
  if (processes.server) s.server = read_process(fs, *processes.server);
  for (const WatchedProcess& w : processes.backends) s.backends.push_back(read_process(fs, w));
  read_diskstats(fs, s);
  read_net_dev(fs, s);
  read_tcp(fs, s);
  if (const std::optional<std::string> meminfo = read_file(fs, "/proc/meminfo")) {
    if (const std::optional<uint64_t> kb = find_key_number(*meminfo, "MemAvailable")) {
      s.mem_available_bytes = *kb * 1024;
    }
  }
  return s;
}

core::Result<int> working_process(const FsReader& fs, int pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  const std::optional<std::string> comm = read_file(fs, dir + "/comm");
  if (!comm) return pid;
  std::vector<int> same;  // children with the parent's command name
  for (const std::string& tid : fs.list_dir(dir + "/task")) {
    const std::optional<std::string> children = read_file(fs, dir + "/task/" + tid + "/children");
    if (!children) continue;
    std::istringstream in(*children);
    for (int child = 0; in >> child;) {
      if (read_file(fs, "/proc/" + std::to_string(child) + "/comm") == comm) {
        same.push_back(child);
      }
    }
  }
  if (same.size() == 1) return same[0];
  if (same.empty()) return pid;
  std::sort(same.begin(), same.end());
  std::string list;
  for (int child : same) list += (list.empty() ? "" : ", ") + std::to_string(child);
  std::string name = *comm;
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  return core::Status::invalid_argument(
      fmt::format("{} is the master of {} {} processes ({}): give the one under test, e.g. "
                  "--server-pid {}; knee follows one process",
                  pid, same.size(), name, list, same[0]));
}

core::ResourceUse use_between(const UseSnapshot& a, const UseSnapshot& b) {
  core::ResourceUse u;
  const double wall_s = std::chrono::duration<double>(b.at - a.at).count();
  if (!(wall_s > 0)) {
    if (b.server) u.server = process_between(nullptr, *b.server, b.clock_ticks_per_s, 0);
    for (const ProcessCounters& p : b.backends) {
      u.backends.push_back(process_between(nullptr, p, b.clock_ticks_per_s, 0));
    }
    return u;
  }
  u.window_s = wall_s;
  u.intervals = 1;

  const size_t cpus = std::max(a.cpus.size(), b.cpus.size());
  u.cpu_busy_pct.assign(cpus, kUnknown);
  for (size_t i = 0; i < a.cpus.size() && i < b.cpus.size(); ++i) {
    u.cpu_busy_pct[i] = busy_pct(a.cpus[i], b.cpus[i]);
  }
  u.cpu_busy_max_pct = u.cpu_busy_pct;
  u.cpu_busy_all_pct = busy_pct(a.cpu_all, b.cpu_all);
  u.cpu_pressure_some_pct = psi_pct(a.cpu_pressure_some_us, b.cpu_pressure_some_us, wall_s);

  if (b.server) {
    u.server =
        process_between(a.server ? &*a.server : nullptr, *b.server, b.clock_ticks_per_s, wall_s);
  }
  for (const ProcessCounters& p : b.backends) {
    u.backends.push_back(process_between(same_backend(a, p), p, b.clock_ticks_per_s, wall_s));
  }

  for (const DiskCounters& after : b.disks) {
    const auto before = std::find_if(a.disks.begin(), a.disks.end(), [&](const DiskCounters& d) {
      return d.device == after.device;
    });
    if (before != a.disks.end()) u.disks.push_back(disk_between(*before, after, wall_s));
  }
  u.io_pressure_some_pct = psi_pct(a.io_pressure_some_us, b.io_pressure_some_us, wall_s);

  for (const NetCounters& after : b.nets) {
    const auto before = std::find_if(a.nets.begin(), a.nets.end(), [&](const NetCounters& n) {
      return n.interface == after.interface;
    });
    if (before != a.nets.end()) u.nets.push_back(net_between(*before, after, wall_s));
  }
  u.tcp_retrans_per_s = delta(a.tcp_retrans_segs, b.tcp_retrans_segs) / wall_s;
  u.listen_overflows_per_s = delta(a.tcp_listen_overflows, b.tcp_listen_overflows) / wall_s;
  u.listen_drops_per_s = delta(a.tcp_listen_drops, b.tcp_listen_drops) / wall_s;

  u.mem_available_bytes = to_double(b.mem_available_bytes);
  Extreme mem_min(false);
  mem_min.add(to_double(a.mem_available_bytes));
  mem_min.add(u.mem_available_bytes);
  u.mem_available_min_bytes = mem_min.get();
  u.memory_pressure_some_pct =
      psi_pct(a.memory_pressure_some_us, b.memory_pressure_some_us, wall_s);
  return u;
}

// One process's intervals folded: `first` keeps its name, pid, and the gauges' extremes.
struct ProcessFold {
  core::ProcessUse first;
  Mean cpu, thread, rss;
  Extreme cpu_max, thread_max, rss_max;

  void add(const core::ProcessUse& p, double w) {
    cpu.add(p.cpu_pct, w);
    cpu_max.add(p.cpu_max_pct);
    thread.add(p.busiest_thread_cpu_pct, w);
    thread_max.add(p.busiest_thread_cpu_max_pct);
    first.threads = std::max(first.threads, p.threads);
    first.cpus_allowed = std::max(first.cpus_allowed, p.cpus_allowed);
    rss.add(p.rss_bytes, w);
    rss_max.add(p.rss_max_bytes);
  }
  core::ProcessUse result() const {
    core::ProcessUse p = first;  // name, pid, threads, CPUs allowed, requests
    p.cpu_pct = cpu.get();
    p.cpu_max_pct = cpu_max.get();
    p.busiest_thread_cpu_pct = thread.get();
    p.busiest_thread_cpu_max_pct = thread_max.get();
    p.rss_bytes = rss.get();
    p.rss_max_bytes = rss_max.get();
    return p;
  }
};

// The fold of `p` (by name and pid), appended on first sight.
ProcessFold& fold_process(std::vector<ProcessFold>& folds, const core::ProcessUse& p) {
  for (ProcessFold& f : folds) {
    if (f.first.name == p.name && f.first.pid == p.pid) return f;
  }
  folds.emplace_back().first = p;
  return folds.back();
}

struct UseFold::State {
  double window_s = 0;
  int intervals = 0;
  std::vector<Mean> cpu;
  std::vector<Extreme> cpu_max;
  Mean cpu_all, cpu_psi, io_psi, mem_psi, retrans, overflows, drops, mem;
  Extreme mem_min{false};
  std::optional<ProcessFold> server;
  std::vector<ProcessFold> backends;
  std::vector<DiskFold> disks;
  std::vector<NetFold> nets;
};

UseFold::UseFold() : state_(std::make_unique<State>()) {}
UseFold::~UseFold() = default;
UseFold::UseFold(UseFold&&) noexcept = default;
UseFold& UseFold::operator=(UseFold&&) noexcept = default;

void UseFold::add(const core::ResourceUse& u) {
  State& st = *state_;

  if (u.server && !st.server) st.server.emplace().first = *u.server;
  for (const core::ProcessUse& b : u.backends) fold_process(st.backends, b);
  if (u.intervals <= 0 || !(u.window_s > 0)) return;
  const double w = u.window_s;
  st.window_s += w;
  st.intervals += u.intervals;

  if (st.cpu.size() < u.cpu_busy_pct.size()) {
    st.cpu.resize(u.cpu_busy_pct.size());
    st.cpu_max.resize(u.cpu_busy_pct.size());
  }
  for (size_t i = 0; i < u.cpu_busy_pct.size(); ++i) {
    st.cpu[i].add(u.cpu_busy_pct[i], w);
    if (i < u.cpu_busy_max_pct.size()) st.cpu_max[i].add(u.cpu_busy_max_pct[i]);
  }
  st.cpu_all.add(u.cpu_busy_all_pct, w);
  st.cpu_psi.add(u.cpu_pressure_some_pct, w);

  if (u.server) st.server->add(*u.server, w);
  for (const core::ProcessUse& b : u.backends) fold_process(st.backends, b).add(b, w);

  for (const core::DiskUse& d : u.disks) {
    DiskFold& f = fold_named(st.disks, d.device, &DiskFold::device);
    f.reads.add(d.reads_per_s, w);
    f.writes.add(d.writes_per_s, w);
    f.read_merges.add(d.read_merges_per_s, w);
    f.write_merges.add(d.write_merges_per_s, w);
    f.read_kb.add(d.read_kb_per_s, w);
    f.write_kb.add(d.write_kb_per_s, w);
    f.read_await.add(d.read_await_ms, d.reads_per_s * w);
    f.write_await.add(d.write_await_ms, d.writes_per_s * w);
    f.queue.add(d.queue_size, w);
    f.util.add(d.util_pct, w);
    f.util_max.add(d.util_max_pct);
  }
  st.io_psi.add(u.io_pressure_some_pct, w);

  for (const core::NetUse& n : u.nets) {
    NetFold& f = fold_named(st.nets, n.interface, &NetFold::interface);
    f.rx.add(n.rx_bytes_per_s, w);
    f.tx.add(n.tx_bytes_per_s, w);
    f.util.add(n.util_pct, w);
    f.util_max.add(n.util_max_pct);
    f.drops.add(n.drops_per_s, w);
    if (n.speed_mbit > 0) f.speed_mbit = n.speed_mbit;
  }
  st.retrans.add(u.tcp_retrans_per_s, w);
  st.overflows.add(u.listen_overflows_per_s, w);
  st.drops.add(u.listen_drops_per_s, w);

  st.mem.add(u.mem_available_bytes, w);
  st.mem_min.add(u.mem_available_min_bytes);
  st.mem_psi.add(u.memory_pressure_some_pct, w);
}

core::ResourceUse UseFold::result() const {
  const State& st = *state_;
  core::ResourceUse out;
  out.window_s = st.window_s;
  out.intervals = st.intervals;

  for (size_t i = 0; i < st.cpu.size(); ++i) {
    out.cpu_busy_pct.push_back(st.cpu[i].get());
    out.cpu_busy_max_pct.push_back(st.cpu_max[i].get());
  }
  out.cpu_busy_all_pct = st.cpu_all.get();
  out.cpu_pressure_some_pct = st.cpu_psi.get();
  if (st.server) out.server = st.server->result();
  for (const ProcessFold& f : st.backends) out.backends.push_back(f.result());
  for (const DiskFold& f : st.disks) {
    core::DiskUse d;
    d.device = f.device;
    d.reads_per_s = f.reads.get();
    d.writes_per_s = f.writes.get();
    d.read_merges_per_s = f.read_merges.get();
    d.write_merges_per_s = f.write_merges.get();
    d.read_kb_per_s = f.read_kb.get();
    d.write_kb_per_s = f.write_kb.get();
    d.read_await_ms = f.read_await.get();
    d.write_await_ms = f.write_await.get();
    d.queue_size = f.queue.get();
    d.util_pct = f.util.get();
    d.util_max_pct = f.util_max.get();
    out.disks.push_back(std::move(d));
  }
  out.io_pressure_some_pct = st.io_psi.get();
  for (const NetFold& f : st.nets) {
    core::NetUse n;
    n.interface = f.interface;
    n.rx_bytes_per_s = f.rx.get();
    n.tx_bytes_per_s = f.tx.get();
    n.speed_mbit = f.speed_mbit;
    n.util_pct = f.util.get();
    n.util_max_pct = f.util_max.get();
    n.drops_per_s = f.drops.get();
    out.nets.push_back(std::move(n));
  }
  out.tcp_retrans_per_s = st.retrans.get();
  out.listen_overflows_per_s = st.overflows.get();
  out.listen_drops_per_s = st.drops.get();
  out.mem_available_bytes = st.mem.get();
  out.mem_available_min_bytes = st.mem_min.get();
  out.memory_pressure_some_pct = st.mem_psi.get();
  return out;
}

core::ResourceUse average(std::span<const core::ResourceUse> intervals) {
  UseFold fold;
  for (const core::ResourceUse& u : intervals) fold.add(u);
  return fold.result();
}

UseSampler::UseSampler(FsReader fs, std::chrono::milliseconds interval)
    : fs_(std::move(fs)), interval_(interval) {}

UseSampler::~UseSampler() {
  if (!running()) return;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void UseSampler::start(WatchedProcesses processes) {
  assert(!running() && "UseSampler::start while running");
  processes_ = std::move(processes);
  stop_requested_ = false;
  folded_ = UseFold();
  last_interval_.reset();
  before_last_.reset();
  last_ = take_snapshot(fs_, processes_, core::Clock::now());
  thread_ = std::thread(&UseSampler::run, this);
}

core::ResourceUse UseSampler::stop() {
  if (!running()) return {};
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = true;
  }
  wake_.notify_one();
  thread_.join();
  add_interval(take_snapshot(fs_, processes_, core::Clock::now()), true);
  if (last_interval_) folded_.add(*last_interval_);
  core::ResourceUse use = folded_.result();
  folded_ = UseFold();
  last_interval_.reset();
  before_last_.reset();
  return use;
}

void UseSampler::run() {
  core::TimePoint next = last_.at + interval_;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (wake_.wait_until(lock, next, [this] { return stop_requested_; })) return;
    lock.unlock();
    add_interval(take_snapshot(fs_, processes_, core::Clock::now()), false);
    next += interval_;
    // Fell behind (a stalled host): the next snapshot is one interval from now, not a burst.
    if (next <= last_.at) next = last_.at + interval_;
    lock.lock();
  }
}

void UseSampler::add_interval(UseSnapshot next, bool final) {
  const bool short_last = next.at - last_.at < interval_ / 2;
  if (final && short_last && before_last_ && last_interval_) {
    core::ResourceUse merged = use_between(*before_last_, next);
    keep_gauge_extremes(*last_interval_, merged);
    last_interval_ = std::move(merged);
  } else {
    // Only the last interval is kept apart (a short final one may merge into it); the rest are
    // folded as they come, so a sampler holds the same few figures for a run of any length.
    if (last_interval_) folded_.add(*last_interval_);
    last_interval_ = use_between(last_, next);
    before_last_ = std::move(last_);
  }
  last_ = std::move(next);
}

}  // namespace knee::probes
