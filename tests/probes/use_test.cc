#include "probes/use.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/resource_use.h"
#include "probes/fs_reader.h"

namespace knee::probes {
namespace {

using std::chrono::milliseconds;

const std::string kFixtures = KNEE_FIXTURES;
constexpr int kServerPid = 4242;
const core::TimePoint kT0 = core::TimePoint() + std::chrono::hours(1);

// Equal but for rounding: folding adds and divides in another order than one subtraction does.
#define EXPECT_CLOSE(a, b) EXPECT_NEAR(a, b, 1e-9 * std::abs(b) + 1e-12)

// The snapshots of a before/after pair of fixture trees, taken 1000 ms apart.
struct Pair {
  UseSnapshot before;
  UseSnapshot after;
};

Pair snapshots(const std::string& tree, std::optional<int> pid = kServerPid) {
  return {
      take_snapshot(FsReader(kFixtures + "/" + tree + "/before"), pid, kT0),
      take_snapshot(FsReader(kFixtures + "/" + tree + "/after"), pid, kT0 + milliseconds(1000))};
}

core::ResourceUse busy_use() {
  const Pair p = snapshots("use_busy");
  return use_between(p.before, p.after);
}

const core::DiskUse* disk(const core::ResourceUse& u, const std::string& name) {
  for (const core::DiskUse& d : u.disks) {
    if (d.device == name) return &d;
  }
  return nullptr;
}

const core::NetUse* net(const core::ResourceUse& u, const std::string& name) {
  for (const core::NetUse& n : u.nets) {
    if (n.interface == name) return &n;
  }
  return nullptr;
}

std::vector<std::string> disk_names(const UseSnapshot& s) {
  std::vector<std::string> names;
  for (const DiskCounters& d : s.disks) names.push_back(d.device);
  return names;
}

// ---- take_snapshot on fixture trees

TEST(TakeSnapshot, ReadsCpuTicksWithoutGuestTime) {
  const Pair p = snapshots("use_busy");
  ASSERT_TRUE(p.before.cpu_all.has_value());
  // busy = user + nice + system + irq + softirq + steal; total adds idle and iowait.
  EXPECT_EQ(p.before.cpu_all->busy, 1000u + 20 + 500 + 10 + 20);
  EXPECT_EQ(p.before.cpu_all->total, 1550u + 8000 + 100);
  ASSERT_EQ(p.after.cpus.size(), 2u);
  ASSERT_TRUE(p.after.cpus[0].has_value());
  EXPECT_EQ(p.after.cpus[0]->busy, 680u + 10 + 316 + 6 + 11);  // guest 20 is already in user
  EXPECT_EQ(p.before.at, kT0);
}

TEST(TakeSnapshot, ReadsPressureProcessTcpAndMemoryCounters) {
  const Pair p = snapshots("use_busy");
  EXPECT_EQ(p.before.cpu_pressure_some_us, 1000000u);
  EXPECT_EQ(p.before.io_pressure_some_us, 100000u);  // "some", not "full"
  EXPECT_EQ(p.before.memory_pressure_some_us, 2000u);
  ASSERT_TRUE(p.before.server.has_value());
  EXPECT_EQ(p.before.server->pid, kServerPid);
  EXPECT_EQ(p.before.server->cpu_ticks, 1200u);  // "(knee (lab) x)": fields after the last ')'
  EXPECT_EQ(p.before.server->threads, 3);
  EXPECT_EQ(p.before.server->rss_bytes, 10240u * 1024);
  EXPECT_EQ(p.before.server->cpus_allowed, 1) << "Cpus_allowed_list, not the Cpus_allowed mask";
  EXPECT_EQ(p.before.server->tasks.size(), 3u);
  EXPECT_EQ(p.after.server->tasks.size(), 4u);
  EXPECT_EQ(p.before.tcp_retrans_segs, 100u);
  EXPECT_EQ(p.before.tcp_listen_overflows, 5u);
  EXPECT_EQ(p.before.tcp_listen_drops, 5u);
  EXPECT_EQ(p.before.mem_available_bytes, 4000000u * 1024);
  EXPECT_GT(p.before.clock_ticks_per_s, 0);
}

TEST(TakeSnapshot, KeepsWholeDevicesAndSkipsPartitionsLoopRamAndZram) {
  const Pair p = snapshots("use_busy");
  // sda1 has no /sys/block entry (a partition); loop0, ram0 and zram0 have one but are skipped by
  // name; cciss/c0d0 is found as /sys/block/cciss!c0d0; the 11-field (nvme0n1) and 15-field
  // (dm-0) formats of older kernels are read.
  EXPECT_EQ(disk_names(p.before),
            (std::vector<std::string>{"sda", "nvme0n1", "dm-0", "cciss/c0d0"}));
}

TEST(TakeSnapshot, LinkSpeedIsUnknownForLoopbackAndVirtualInterfaces) {
  const Pair p = snapshots("use_busy");
  ASSERT_EQ(p.before.nets.size(), 4u);
  EXPECT_EQ(p.before.nets[0].interface, "lo");
  EXPECT_EQ(p.before.nets[0].speed_mbit, -1);
  EXPECT_EQ(p.before.nets[1].interface, "eth0");
  EXPECT_EQ(p.before.nets[1].speed_mbit, 1000);
  EXPECT_FALSE(p.before.nets[1].half_duplex);
  EXPECT_EQ(p.before.nets[2].speed_mbit, 100);
  EXPECT_TRUE(p.before.nets[2].half_duplex);
  EXPECT_EQ(p.before.nets[3].interface, "veth1");
  EXPECT_EQ(p.before.nets[3].speed_mbit, -1);  // claims 10000, but lives in devices/virtual
}

TEST(TakeSnapshot, MissingRootGivesEmptyCountersNotErrors) {
  const UseSnapshot s = take_snapshot(FsReader(kFixtures + "/no-such-host"), kServerPid, kT0);
  EXPECT_FALSE(s.cpu_all.has_value());
  EXPECT_TRUE(s.cpus.empty());
  EXPECT_FALSE(s.cpu_pressure_some_us.has_value());
  ASSERT_TRUE(s.server.has_value());
  EXPECT_EQ(s.server->pid, kServerPid);
  EXPECT_FALSE(s.server->cpu_ticks.has_value());
  EXPECT_TRUE(s.disks.empty());
  EXPECT_TRUE(s.nets.empty());
  EXPECT_FALSE(s.tcp_retrans_segs.has_value());
  EXPECT_FALSE(s.mem_available_bytes.has_value());
}

// ---- use_between on fixture trees

TEST(UseBetween, DiskFiguresMatchIostatX) {
  const core::ResourceUse u = busy_use();
  const core::DiskUse* sda = disk(u, "sda");
  ASSERT_NE(sda, nullptr);
  // Over 1000 ms: 400 reads (50 merged), 3200 sectors, 2000 ms reading; 100 writes, 1600 sectors,
  // 3000 ms writing; 800 ms io_ticks; 5000 ms weighted.
  EXPECT_DOUBLE_EQ(sda->reads_per_s, 400);
  EXPECT_DOUBLE_EQ(sda->writes_per_s, 100);
  EXPECT_DOUBLE_EQ(sda->read_merges_per_s, 50);
  EXPECT_DOUBLE_EQ(sda->write_merges_per_s, 0);
  EXPECT_DOUBLE_EQ(sda->read_kb_per_s, 1600);
  EXPECT_DOUBLE_EQ(sda->write_kb_per_s, 800);
  EXPECT_DOUBLE_EQ(sda->read_await_ms, 5.0);
  EXPECT_DOUBLE_EQ(sda->write_await_ms, 30.0);
  EXPECT_DOUBLE_EQ(sda->queue_size, 5.00);
  EXPECT_DOUBLE_EQ(sda->util_pct, 80.0);
  EXPECT_DOUBLE_EQ(sda->util_max_pct, 80.0);
}

TEST(UseBetween, IdleDiskHasZeroAwaitLikeIostat) {
  const core::ResourceUse u = busy_use();
  const core::DiskUse* nvme = disk(u, "nvme0n1");
  ASSERT_NE(nvme, nullptr);
  EXPECT_EQ(nvme->reads_per_s, 0);
  EXPECT_EQ(nvme->read_await_ms, 0);
  EXPECT_EQ(nvme->write_await_ms, 0);
  EXPECT_EQ(nvme->util_pct, 0);
  const core::DiskUse* dm = disk(u, "dm-0");
  ASSERT_NE(dm, nullptr);
  EXPECT_DOUBLE_EQ(dm->reads_per_s, 10);
  EXPECT_DOUBLE_EQ(dm->read_await_ms, 2);
  EXPECT_DOUBLE_EQ(dm->util_pct, 2);
  EXPECT_EQ(u.disks.size(), 4u);
}

TEST(UseBetween, CpuBusyIsTotalMinusIdleMinusIowait) {
  const core::ResourceUse u = busy_use();
  ASSERT_EQ(u.cpu_busy_pct.size(), 2u);
  EXPECT_DOUBLE_EQ(u.cpu_busy_pct[0], 98.0);
  EXPECT_DOUBLE_EQ(u.cpu_busy_pct[1], 30.0);  // steal counts as busy
  EXPECT_DOUBLE_EQ(u.cpu_busy_all_pct, 64.0);
  EXPECT_EQ(u.cpu_busy_max_pct, u.cpu_busy_pct);
  EXPECT_DOUBLE_EQ(u.window_s, 1.0);
  EXPECT_EQ(u.intervals, 1);
}

TEST(UseBetween, PressureIsSomeTotalDeltaOverWallTime) {
  const core::ResourceUse u = busy_use();
  EXPECT_DOUBLE_EQ(u.cpu_pressure_some_pct, 25.0);
  EXPECT_DOUBLE_EQ(u.io_pressure_some_pct, 5.0);
  EXPECT_DOUBLE_EQ(u.memory_pressure_some_pct, 0.0);
}

TEST(UseBetween, ServerProcessCpuThreadsAndRss) {
  const Pair p = snapshots("use_busy");
  const core::ResourceUse u = use_between(p.before, p.after);
  ASSERT_TRUE(u.server.has_value());
  const double ticks = static_cast<double>(p.after.clock_ticks_per_s);
  EXPECT_EQ(u.server->pid, kServerPid);
  EXPECT_DOUBLE_EQ(u.server->cpu_pct, 99.0 / ticks * 100);  // 99 ticks of utime + stime in 1 s
  EXPECT_DOUBLE_EQ(u.server->cpu_max_pct, u.server->cpu_pct);
  EXPECT_DOUBLE_EQ(u.server->busiest_thread_cpu_pct, std::min(100.0, 97.0 / ticks * 100));
  EXPECT_EQ(u.server->threads, 4);
  EXPECT_DOUBLE_EQ(u.server->rss_bytes, 20480.0 * 1024);
}

// Regression (a staged run at a server under taskset -c 0): tick accounting read the server at
// 104% of one core over a one-second sample; a process cannot use more CPUs than it is allowed.
TEST(UseBetween, AProcessReadsNoMoreThanTheCpusItIsAllowed) {
  Pair p = snapshots("use_busy");
  ASSERT_TRUE(p.before.server && p.after.server && p.before.server->cpu_ticks);
  const uint64_t ticks = static_cast<uint64_t>(p.after.clock_ticks_per_s);
  p.after.server->cpu_ticks = *p.before.server->cpu_ticks + ticks * 104 / 100;
  p.after.server->cpus_allowed = 1;
  EXPECT_DOUBLE_EQ(use_between(p.before, p.after).server->cpu_pct, 100.0);
  p.after.server->cpus_allowed = 2;  // room for it: the reading stands
  EXPECT_NEAR(use_between(p.before, p.after).server->cpu_pct, 104.0, 1e-9);
  p.after.server->cpus_allowed.reset();  // not known: not clamped
  EXPECT_NEAR(use_between(p.before, p.after).server->cpu_pct, 104.0, 1e-9);
}

// The processes behind a balancer: each followed on its own, by name, like the server.
TEST(UseBetween, BackendsAreFollowedByNameLikeTheServer) {
  WatchedProcesses w;
  w.server = WatchedProcess{"nginx", kServerPid};
  w.backends = {{"app1", kServerPid}, {"app2", kServerPid + 1}};  // app2: no such process
  const UseSnapshot a = take_snapshot(FsReader(kFixtures + "/use_busy/before"), w, kT0);
  const UseSnapshot b =
      take_snapshot(FsReader(kFixtures + "/use_busy/after"), w, kT0 + milliseconds(1000));
  const core::ResourceUse u = use_between(a, b);
  ASSERT_TRUE(u.server.has_value());
  EXPECT_EQ(u.server->name, "nginx");
  ASSERT_EQ(u.backends.size(), 2u);
  EXPECT_EQ(u.backends[0].name, "app1");
  EXPECT_DOUBLE_EQ(u.backends[0].cpu_pct, u.server->cpu_pct);
  EXPECT_EQ(u.backends[0].threads, 4);
  EXPECT_EQ(u.backends[1].name, "app2");
  EXPECT_EQ(u.backends[1].pid, kServerPid + 1);
  EXPECT_FALSE(core::is_known(u.backends[1].cpu_pct)) << "unreadable: unknown, not 0";
  EXPECT_FALSE(core::is_known(u.backends[0].requests)) << "the sampler does not ask /health";

  // A replica replaced between the readings (a deploy): another pid, so no CPU figure.
  WatchedProcesses redeployed = w;
  redeployed.backends[0].pid = kServerPid + 2;
  const UseSnapshot c =
      take_snapshot(FsReader(kFixtures + "/use_busy/after"), redeployed, kT0 + milliseconds(1000));
  const core::ResourceUse v = use_between(a, c);
  EXPECT_FALSE(core::is_known(v.backends[0].cpu_pct));

  // Folding keeps each backend apart, in the stack's order.
  const core::ResourceUse folded = average(std::vector<core::ResourceUse>{u, u});
  ASSERT_EQ(folded.backends.size(), 2u);
  EXPECT_EQ(folded.backends[0].name, "app1");
  EXPECT_DOUBLE_EQ(folded.backends[0].cpu_pct, u.backends[0].cpu_pct);
  EXPECT_EQ(folded.backends[1].name, "app2");
}

TEST(UseBetween, NoPidMeansNoServerFigures) {
  const Pair p = snapshots("use_busy", std::nullopt);
  EXPECT_FALSE(use_between(p.before, p.after).server.has_value());
}

TEST(UseBetween, NetworkRatesLinkUtilisationAndDrops) {
  const core::ResourceUse u = busy_use();
  ASSERT_EQ(u.nets.size(), 4u);
  const core::NetUse* eth0 = net(u, "eth0");
  ASSERT_NE(eth0, nullptr);
  EXPECT_DOUBLE_EQ(eth0->rx_bytes_per_s, 100e6);
  EXPECT_DOUBLE_EQ(eth0->tx_bytes_per_s, 1e6);
  EXPECT_DOUBLE_EQ(eth0->speed_mbit, 1000);
  EXPECT_DOUBLE_EQ(eth0->util_pct, 80.0);  // full duplex: max(rx, tx) * 8 / 1000 Mbit/s
  EXPECT_DOUBLE_EQ(eth0->drops_per_s, 5.0);
  const core::NetUse* eth1 = net(u, "eth1");
  ASSERT_NE(eth1, nullptr);
  EXPECT_DOUBLE_EQ(eth1->util_pct, 40.0);  // half duplex: (rx + tx) * 8 / 100 Mbit/s
  const core::NetUse* lo = net(u, "lo");
  ASSERT_NE(lo, nullptr);
  EXPECT_DOUBLE_EQ(lo->rx_bytes_per_s, 5e6);
  EXPECT_EQ(lo->speed_mbit, -1);
  EXPECT_FALSE(core::is_known(lo->util_pct));
  EXPECT_FALSE(core::is_known(net(u, "veth1")->util_pct));
}

TEST(UseBetween, TcpRetransmitsListenQueueAndMemory) {
  const core::ResourceUse u = busy_use();
  EXPECT_DOUBLE_EQ(u.tcp_retrans_per_s, 12.0);
  EXPECT_DOUBLE_EQ(u.listen_overflows_per_s, 4.0);
  EXPECT_DOUBLE_EQ(u.listen_drops_per_s, 5.0);
  EXPECT_DOUBLE_EQ(u.mem_available_bytes, 3000000.0 * 1024);
  EXPECT_DOUBLE_EQ(u.mem_available_min_bytes, 3000000.0 * 1024);
}

TEST(UseBetween, RatesScaleWithTheInterval) {
  Pair p = snapshots("use_busy");
  p.after.at = kT0 + milliseconds(250);
  const core::ResourceUse u = use_between(p.before, p.after);
  EXPECT_DOUBLE_EQ(disk(u, "sda")->reads_per_s, 1600);
  EXPECT_DOUBLE_EQ(disk(u, "sda")->read_await_ms, 5.0);  // a ratio of deltas, not a rate
  EXPECT_DOUBLE_EQ(disk(u, "sda")->util_pct, 100.0);     // 800 ms busy in 250 ms: capped
  EXPECT_DOUBLE_EQ(u.tcp_retrans_per_s, 48.0);
  EXPECT_DOUBLE_EQ(u.cpu_busy_pct[0], 98.0);  // from /proc/stat's own ticks, not wall time
}

TEST(UseBetween, MissingFilesOfflineCpuAndResetCountersAreUnknown) {
  const Pair p = snapshots("use_bare");
  const core::ResourceUse u = use_between(p.before, p.after);
  ASSERT_EQ(u.cpu_busy_pct.size(), 2u);
  EXPECT_DOUBLE_EQ(u.cpu_busy_pct[0], 50.0);
  EXPECT_FALSE(core::is_known(u.cpu_busy_pct[1]));  // cpu1 went offline
  EXPECT_DOUBLE_EQ(u.cpu_busy_all_pct, 50.0);
  EXPECT_FALSE(core::is_known(u.cpu_pressure_some_pct));
  EXPECT_FALSE(core::is_known(u.io_pressure_some_pct));
  EXPECT_FALSE(core::is_known(u.memory_pressure_some_pct));
  ASSERT_TRUE(u.server.has_value());  // a pid was given, but the process is gone
  EXPECT_EQ(u.server->pid, kServerPid);
  EXPECT_FALSE(core::is_known(u.server->cpu_pct));
  EXPECT_EQ(u.server->threads, 0);
  EXPECT_FALSE(core::is_known(u.server->rss_bytes));
  ASSERT_EQ(u.disks.size(), 2u);
  EXPECT_FALSE(core::is_known(disk(u, "sda")->reads_per_s));  // counters went backwards
  EXPECT_FALSE(core::is_known(disk(u, "sda")->util_pct));
  EXPECT_DOUBLE_EQ(disk(u, "sdb")->reads_per_s, 50);
  EXPECT_DOUBLE_EQ(disk(u, "sdb")->read_await_ms, 2);
  EXPECT_DOUBLE_EQ(disk(u, "sdb")->util_pct, 5);
  EXPECT_DOUBLE_EQ(disk(u, "sdb")->queue_size, 0.05);
  EXPECT_TRUE(u.nets.empty());
  EXPECT_FALSE(core::is_known(u.tcp_retrans_per_s));
  EXPECT_FALSE(core::is_known(u.listen_overflows_per_s));
  EXPECT_FALSE(core::is_known(u.mem_available_bytes));
}

TEST(UseBetween, EmptyIntervalMeasuresNothing) {
  const Pair p = snapshots("use_busy");
  const core::ResourceUse u = use_between(p.before, p.before);
  EXPECT_EQ(u.intervals, 0);
  EXPECT_EQ(u.window_s, 0);
  EXPECT_TRUE(u.disks.empty());
  EXPECT_FALSE(core::is_known(u.cpu_busy_all_pct));
  ASSERT_TRUE(u.server.has_value());
  EXPECT_FALSE(core::is_known(u.server->cpu_pct));
}

// ---- average

// Snapshot i of a synthetic host whose counters grow unevenly, at `ms` after kT0.
UseSnapshot synthetic(uint64_t scale, int ms) {
  UseSnapshot s;
  s.at = kT0 + milliseconds(ms);
  s.clock_ticks_per_s = 100;
  s.cpu_all = CpuTicks{60 * scale, 100 * scale};
  // cpu0 gets busier every step (30, 50, 70 % of its ticks); cpu and cpu1 stay even.
  s.cpus = {CpuTicks{10 * scale * scale, 100 * scale}, CpuTicks{20 * scale, 50 * scale}};
  s.cpu_pressure_some_us = 1000 * scale * scale;
  s.server.emplace();
  s.server->pid = 7;
  s.server->cpu_ticks = 3 * scale * scale;
  s.server->threads = static_cast<int>(scale);
  s.server->rss_bytes = 1000 * scale;
  DiskCounters d;
  d.device = "sda";
  d.reads = 10 * scale * scale;
  d.read_ms = 20 * scale * scale * scale;
  d.writes = 5 * scale;
  d.write_ms = 7 * scale * scale;
  d.sectors_read = 80 * scale;
  d.io_ms = 100 * scale;
  d.weighted_io_ms = 300 * scale * scale;
  s.disks = {d};
  NetCounters n;
  n.interface = "eth0";
  n.rx_bytes = 1000000 * scale * scale;
  n.tx_bytes = 1000 * scale;
  n.rx_drops = scale;
  n.speed_mbit = 1000;
  s.nets = {n};
  s.tcp_retrans_segs = scale * scale;
  s.tcp_listen_overflows = scale;
  s.tcp_listen_drops = 2 * scale;
  s.mem_available_bytes = 1000000 - 1000 * scale * scale;
  return s;
}

TEST(Average, ContiguousIntervalsGiveTheWholeWindowsRatesAndAwaits) {
  const std::vector<UseSnapshot> s = {synthetic(1, 0), synthetic(2, 250), synthetic(3, 500),
                                      synthetic(4, 900)};
  std::vector<core::ResourceUse> parts;
  for (size_t i = 0; i + 1 < s.size(); ++i) parts.push_back(use_between(s[i], s[i + 1]));
  const core::ResourceUse folded = average(parts);
  const core::ResourceUse whole = use_between(s.front(), s.back());

  EXPECT_CLOSE(folded.window_s, 0.9);
  EXPECT_EQ(folded.intervals, 3);
  // Busy % weighted by wall time equals the window's only where ticks grow evenly (cpu, cpu1).
  EXPECT_CLOSE(folded.cpu_busy_all_pct, whole.cpu_busy_all_pct);
  EXPECT_CLOSE(folded.cpu_busy_pct[1], whole.cpu_busy_pct[1]);
  EXPECT_CLOSE(folded.cpu_pressure_some_pct, whole.cpu_pressure_some_pct);
  EXPECT_CLOSE(folded.server->cpu_pct, whole.server->cpu_pct);
  const core::DiskUse& fd = folded.disks.at(0);
  const core::DiskUse& wd = whole.disks.at(0);
  EXPECT_CLOSE(fd.reads_per_s, wd.reads_per_s);
  EXPECT_CLOSE(fd.writes_per_s, wd.writes_per_s);
  EXPECT_CLOSE(fd.read_kb_per_s, wd.read_kb_per_s);
  EXPECT_CLOSE(fd.read_await_ms, wd.read_await_ms);
  EXPECT_CLOSE(fd.write_await_ms, wd.write_await_ms);
  EXPECT_CLOSE(fd.queue_size, wd.queue_size);
  EXPECT_CLOSE(fd.util_pct, wd.util_pct);
  const core::NetUse& fn = folded.nets.at(0);
  const core::NetUse& wn = whole.nets.at(0);
  EXPECT_CLOSE(fn.rx_bytes_per_s, wn.rx_bytes_per_s);
  EXPECT_CLOSE(fn.tx_bytes_per_s, wn.tx_bytes_per_s);
  EXPECT_CLOSE(fn.util_pct, wn.util_pct);
  EXPECT_CLOSE(fn.drops_per_s, wn.drops_per_s);
  EXPECT_CLOSE(fn.speed_mbit, 1000);
  EXPECT_CLOSE(folded.tcp_retrans_per_s, whole.tcp_retrans_per_s);
  EXPECT_CLOSE(folded.listen_overflows_per_s, whole.listen_overflows_per_s);
  EXPECT_CLOSE(folded.listen_drops_per_s, whole.listen_drops_per_s);
}

TEST(Average, KeepsMaximaMinimaAndMostThreads) {
  const std::vector<UseSnapshot> s = {synthetic(1, 0), synthetic(2, 250), synthetic(3, 500),
                                      synthetic(4, 750)};
  std::vector<core::ResourceUse> parts;
  for (size_t i = 0; i + 1 < s.size(); ++i) parts.push_back(use_between(s[i], s[i + 1]));
  const core::ResourceUse folded = average(parts);
  // cpu0 runs busier each interval: its mean is below the last interval's, its max equals it.
  EXPECT_LT(folded.cpu_busy_pct[0], parts.back().cpu_busy_pct[0]);
  EXPECT_DOUBLE_EQ(folded.cpu_busy_max_pct[0], parts.back().cpu_busy_pct[0]);
  EXPECT_DOUBLE_EQ(folded.server->cpu_max_pct, parts.back().server->cpu_pct);
  EXPECT_DOUBLE_EQ(folded.disks[0].util_max_pct, 40.0);  // 100 ms of io_ticks per 250 ms
  EXPECT_DOUBLE_EQ(folded.nets[0].util_max_pct, parts.back().nets[0].util_pct);
  EXPECT_EQ(folded.server->threads, 4);
  EXPECT_DOUBLE_EQ(folded.server->rss_max_bytes, 4000);
  EXPECT_DOUBLE_EQ(folded.server->rss_bytes, 3000);  // mean of 2000, 3000, 4000
  EXPECT_DOUBLE_EQ(folded.mem_available_min_bytes, 1000000 - 16000);
  EXPECT_DOUBLE_EQ(folded.mem_available_bytes, 1000000 - (4000 + 9000 + 16000) / 3.0);
}

TEST(Average, IgnoresUnknownFiguresAndEmptyIntervals) {
  Pair bare = snapshots("use_bare");
  const core::ResourceUse unknown_sda = use_between(bare.before, bare.after);
  UseSnapshot later = bare.after;
  later.at += milliseconds(1000);
  later.disks[0].reads += 100;  // sda counts again after its reset
  const core::ResourceUse counted = use_between(bare.after, later);
  const core::ResourceUse empty = use_between(bare.after, bare.after);
  const std::vector<core::ResourceUse> parts = {unknown_sda, empty, counted};
  const core::ResourceUse folded = average(parts);
  EXPECT_EQ(folded.intervals, 2);
  EXPECT_DOUBLE_EQ(folded.window_s, 2.0);
  EXPECT_DOUBLE_EQ(folded.disks[0].reads_per_s, 100);  // only the interval that measured it
  EXPECT_FALSE(core::is_known(folded.cpu_pressure_some_pct));
  ASSERT_TRUE(folded.server.has_value());
  EXPECT_FALSE(core::is_known(folded.server->cpu_pct));
}

TEST(Average, OfNothingIsEmpty) {
  const core::ResourceUse folded = average({});
  EXPECT_EQ(folded.intervals, 0);
  EXPECT_TRUE(folded.cpu_busy_pct.empty());
  EXPECT_FALSE(folded.server.has_value());
}

// ---- the real host

TEST(TakeSnapshot, RealHostHasCpuMemoryAndThisProcess) {
  const int pid = static_cast<int>(::getpid());
  const UseSnapshot s = take_snapshot(FsReader("/"), pid, core::Clock::now());
  ASSERT_TRUE(s.cpu_all.has_value());
  EXPECT_FALSE(s.cpus.empty());
  EXPECT_TRUE(s.mem_available_bytes.has_value());
  ASSERT_TRUE(s.server.has_value());
  EXPECT_TRUE(s.server->cpu_ticks.has_value());
  EXPECT_GE(s.server->threads.value_or(0), 1);
  EXPECT_GT(s.server->rss_bytes.value_or(0), 0u);
  EXPECT_FALSE(s.server->tasks.empty());
  const bool has_lo = std::any_of(s.nets.begin(), s.nets.end(),
                                  [](const NetCounters& n) { return n.interface == "lo"; });
  EXPECT_TRUE(has_lo || s.nets.empty());  // containers may hide /proc/net
  for (const DiskCounters& d : s.disks) {
    EXPECT_FALSE(d.device.starts_with("loop")) << d.device;
    EXPECT_FALSE(d.device.starts_with("zram")) << d.device;
  }
}

TEST(UseSampler, SamplesTheRealHostForAWindow) {
  UseSampler sampler;
  EXPECT_FALSE(sampler.running());
  const int pid = static_cast<int>(::getpid());
  const core::TimePoint start = core::Clock::now();
  sampler.start(pid);
  EXPECT_TRUE(sampler.running());
  // Keep this thread busy so the process has CPU time to show.
  volatile uint64_t sink = 0;
  while (core::Clock::now() - start < milliseconds(300)) sink = sink + 1;
  const core::ResourceUse u = sampler.stop();
  EXPECT_FALSE(sampler.running());
  EXPECT_GE(u.window_s, 0.3);
  EXPECT_GE(u.intervals, 1);
  EXPECT_FALSE(u.cpu_busy_pct.empty());
  EXPECT_TRUE(core::is_known(u.cpu_busy_all_pct));
  EXPECT_GE(u.cpu_busy_all_pct, 0);
  EXPECT_LE(u.cpu_busy_all_pct, 100);
  ASSERT_TRUE(u.server.has_value());
  EXPECT_EQ(u.server->pid, pid);
  EXPECT_GT(u.server->cpu_pct, 0);
  EXPECT_GE(u.server->threads, 2);  // this thread and the sampler's
  EXPECT_GT(u.server->rss_bytes, 0);
  EXPECT_TRUE(core::is_known(u.mem_available_bytes));
}

TEST(UseSampler, StopWakesTheThreadWithoutWaitingForTheInterval) {
  UseSampler sampler(FsReader("/"), std::chrono::minutes(10));
  sampler.start(std::nullopt);
  const core::TimePoint before = core::Clock::now();
  const core::ResourceUse u = sampler.stop();
  // Generous bound: a sampler that slept through its interval would take 10 minutes.
  EXPECT_LT(core::Clock::now() - before, std::chrono::seconds(30));
  EXPECT_LE(u.intervals, 1);
  EXPECT_FALSE(u.server.has_value());
}

TEST(UseSampler, StopWithoutStartAndRestart) {
  UseSampler sampler(FsReader(kFixtures + "/use_busy/before"), milliseconds(5));
  EXPECT_EQ(sampler.stop().intervals, 0);
  // A fixture tree never changes: every interval sees zero rates, but the window is measured.
  for (int round = 0; round < 2; ++round) {
    sampler.start(kServerPid);
    std::this_thread::sleep_for(milliseconds(30));
    const core::ResourceUse u = sampler.stop();
    EXPECT_GE(u.intervals, 1);
    EXPECT_GT(u.window_s, 0);
    ASSERT_FALSE(u.disks.empty());
    EXPECT_EQ(u.disks[0].reads_per_s, 0);
    ASSERT_TRUE(u.server.has_value());
    EXPECT_EQ(u.server->threads, 3);
  }
}

TEST(CpusInList, CountsSingleCpusAndRanges) {
  EXPECT_EQ(cpus_in_list("Name:\tx\nCpus_allowed_list:\t0-3,8,10-11\n", "Cpus_allowed_list"), 7);
  EXPECT_EQ(cpus_in_list("Cpus_allowed_list:\t1\n", "Cpus_allowed_list"), 1);
  EXPECT_EQ(cpus_in_list("Cpus_allowed:\tff\n", "Cpus_allowed_list"), std::nullopt);
  EXPECT_EQ(cpus_in_list("Cpus_allowed_list:\t3-1\n", "Cpus_allowed_list"), std::nullopt);
  EXPECT_EQ(cpus_in_list("Cpus_allowed_list:\tx\n", "Cpus_allowed_list"), std::nullopt);
}

// A fake /proc with the given files (path under the root -> content).
class FakeProc {
 public:
  FakeProc() {
    char tmpl[] = "/tmp/knee-proc-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }
  void write(const std::string& path, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(root_ + path).parent_path());
    std::ofstream(root_ + path) << text;
  }
  FsReader fs() const { return FsReader(root_); }

 private:
  std::string root_;
};

// Regression: --server-pid $(pgrep -o nginx), the hint knee itself gave, named nginx's master,
// which idles while its worker serves: server CPU 0 % and the verdict none.
TEST(WorkingProcess, AMasterWithOneWorkerOfItsNameIsFollowedToIt) {
  FakeProc proc;
  proc.write("/proc/100/comm", "nginx\n");
  proc.write("/proc/100/task/100/children", "101 ");
  proc.write("/proc/101/comm", "nginx\n");
  auto w = working_process(proc.fs(), 100);
  ASSERT_TRUE(w) << w.status().message();
  EXPECT_EQ(*w, 101);
  // A process with no children, or whose only child is something else (a shell's command, a
  // helper), is followed itself.
  EXPECT_EQ(*working_process(proc.fs(), 101), 101);
  proc.write("/proc/200/comm", "sh\n");
  proc.write("/proc/200/task/200/children", "201");
  proc.write("/proc/201/comm", "python3\n");
  EXPECT_EQ(*working_process(proc.fs(), 200), 200);
  EXPECT_EQ(*working_process(proc.fs(), 999), 999) << "unreadable: as given";
}

TEST(WorkingProcess, AMasterOfSeveralWorkersIsRefusedNamingThem) {
  FakeProc proc;
  proc.write("/proc/100/comm", "nginx\n");
  proc.write("/proc/100/task/100/children", "103 101");
  proc.write("/proc/100/task/102/children", "104\n");  // forked by another thread
  for (int pid : {101, 103, 104}) proc.write("/proc/" + std::to_string(pid) + "/comm", "nginx\n");
  auto w = working_process(proc.fs(), 100);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.status().message(),
            "100 is the master of 3 nginx processes (101, 103, 104): give the one under test, "
            "e.g. --server-pid 101; knee follows one process");
}

}  // namespace
}  // namespace knee::probes
