// The latency ladder: the order of its rungs on this machine, SQLite's plans, the filesystem
// behind a directory, and the timing loop's batching. Tests check orders and plans, never times.
//
// The counts are smaller than the command's (the suite runs under ASan): 3 repeats of at most
// 10 ms, and a 256 MiB "DRAM" array instead of 1 GiB, still eight times the 32 MiB L3 cache of
// this project's machine, so its random reads still miss every cache.
#include "probes/ladder.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "probes/fs_reader.h"

namespace knee::probes {
namespace {

using std::chrono::milliseconds;

const std::string kFixtures = KNEE_FIXTURES;

LadderOptions small_options() {
  LadderOptions o;
  o.timing.repeats = 3;
  o.timing.max_samples = 500;
  o.timing.max_time = milliseconds(10);
  o.timing.warmup = milliseconds(5);
  o.timing.target_sample_ns = measure_clock().target_sample_ns;
  o.dram_bytes = int64_t{256} << 20;
  o.disk_timing.repeats = 2;
  o.disk_timing.max_samples = 20;
  return o;
}

const Rung& find(const std::vector<Rung>& rungs, const std::string& id) {
  const auto it =
      std::find_if(rungs.begin(), rungs.end(), [&](const Rung& r) { return r.id == id; });
  EXPECT_NE(it, rungs.end()) << id;
  return *it;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

// A fresh directory on a real disk: /tmp unless it is in memory, else the working directory
// (ctest runs in the build folder). Removed on destruction.
class DiskDir {
 public:
  DiskDir() {
    std::string base = std::filesystem::temp_directory_path().string();
    struct statfs s {};
    if (::statfs(base.c_str(), &s) != 0 || s.f_type == 0x01021994 || s.f_type == 0x858458f6) {
      base = std::filesystem::current_path().string();
    }
    std::string templ = base + "/knee-ladder-test-XXXXXX";
    const char* made = ::mkdtemp(templ.data());
    EXPECT_NE(made, nullptr) << templ;
    path_ = templ;
  }
  ~DiskDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Ladder, RungsComeOutInTheExpectedOrderOnThisMachine) {
  const LadderOptions o = small_options();
  core::Result<std::vector<Rung>> inprocess = run_inprocess(o);
  ASSERT_TRUE(inprocess) << inprocess.status().message();
  core::Result<SqliteLadder> sqlite = run_sqlite(o);
  ASSERT_TRUE(sqlite) << sqlite.status().message();

  const Rung& cache = find(*inprocess, "cache_read");
  const Rung& dram = find(*inprocess, "dram_read");
  const Rung& syscall = find(*inprocess, "syscall");
  const Rung& key = find(sqlite->rungs, "sqlite_primary_key");
  const Rung& scan = find(sqlite->rungs, "sqlite_scan");
  EXPECT_LT(cache.median_ns, dram.median_ns);
  EXPECT_LT(cache.median_ns, syscall.median_ns);
  // Only orders that hold on any host are checked. Issue 6 expected DRAM read < system call <
  // SQLite primary-key read; on this project's machine (a Firecracker VM on an AMD EPYC) the three
  // sit within a factor of a few of each other and their order moves with the host: a dependent
  // random read of a 1 GiB array took 244-378 ns in Release (a TLB miss in a VM walks two page
  // tables), getppid 186-188 ns on one day and 1,000-1,050 ns on another (2026-12-07, Release,
  // three runs), an SQLite key read 445-475 ns that day (ASan: 830-3,800 ns). CI failed once on
  // syscall 1,182 ns > key 1,002 ns. The ladder reports such orders as measured; the test checks
  // that a cache read is below each of them and that a scan is far above a keyed read.
  EXPECT_LT(cache.median_ns, key.median_ns);
  EXPECT_LT(key.median_ns, scan.median_ns);
  EXPECT_GT(sqlite->scan_over_key, 10);
  EXPECT_GT(sqlite->scan_over_index, 10);
}

TEST(Ladder, EveryInProcessRungHasItsStatisticsAndMethod) {
  LadderOptions o = small_options();
  o.dram_bytes = int64_t{1} << 20;  // shapes only here: the order test above reads a big array
  core::Result<std::vector<Rung>> rungs = run_inprocess(o);
  ASSERT_TRUE(rungs) << rungs.status().message();
  const std::vector<std::string> ids = {"hash_map_lookup", "empty_call",        "sha256_1kib",
                                        "json_parse",      "sort_1000",         "cache_read",
                                        "dram_read",       "mutex_lock_unlock", "syscall"};
  ASSERT_EQ(rungs->size(), ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    const Rung& r = (*rungs)[k];
    EXPECT_EQ(r.id, ids[k]);
    EXPECT_EQ(r.group, "inprocess");
    EXPECT_FALSE(r.name.empty());
    EXPECT_FALSE(r.method.empty());
    EXPECT_EQ(r.repeats, 3);
    EXPECT_EQ(r.ops, r.samples * r.batch) << r.id;
    EXPECT_GT(r.median_ns, 0) << r.id;
    EXPECT_LE(r.min_ns, r.median_ns) << r.id;
    EXPECT_LE(r.median_ns, r.p99_ns) << r.id;
    EXPECT_GT(r.best_ns, 0) << r.id;
    EXPECT_NEAR(r.ops_per_s, 1e9 / r.median_ns, 1e-6 * r.ops_per_s) << r.id;
  }
  // A cache read is far shorter than the clock's target sample: it must have been batched, and
  // the method must say so.
  const Rung& cache = find(*rungs, "cache_read");
  EXPECT_GT(cache.batch, 1);
  EXPECT_NE(cache.method.find("batches of"), std::string::npos) << cache.method;
}

TEST(Ladder, SqlitePlansNameTheAccessPath) {
  core::Result<SqliteLadder> sqlite = run_sqlite(small_options());
  ASSERT_TRUE(sqlite) << sqlite.status().message();
  EXPECT_EQ(sqlite->rows, 20'000);
  ASSERT_EQ(sqlite->rungs.size(), 3u);
  EXPECT_NE(find(sqlite->rungs, "sqlite_primary_key")
                .plan.find("SEARCH users USING INTEGER PRIMARY KEY (rowid=?)"),
            std::string::npos);
  EXPECT_EQ(find(sqlite->rungs, "sqlite_scan").plan, "SCAN users");
  const std::string index_plan = find(sqlite->rungs, "sqlite_index").plan;
  EXPECT_EQ(index_plan.rfind("SEARCH users USING ", 0), 0u) << index_plan;
  EXPECT_NE(index_plan.find("INDEX users_email (email=?)"), std::string::npos) << index_plan;
  for (const Rung& r : sqlite->rungs) {
    EXPECT_NE(r.method.find(r.plan), std::string::npos) << r.method;
  }
}

TEST(Ladder, FdatasyncIsSlowerThanACachedWrite) {
  const DiskDir dir;
  LadderOptions o = small_options();
  o.dir = dir.path();
  core::Result<DiskLadder> disk = run_disk(FsReader(), o);
  ASSERT_TRUE(disk) << disk.status().message();
  ASSERT_FALSE(disk->target.memory) << dir.path() << " is in memory: " << disk->target.fs_type;
  ASSERT_EQ(disk->rungs.size(), 4u);
  const Rung& cached = find(disk->rungs, "write_cache");
  EXPECT_LT(cached.median_ns, find(disk->rungs, "write_fdatasync").median_ns);
  EXPECT_LT(cached.median_ns, find(disk->rungs, "write_fsync").median_ns);
  EXPECT_LT(cached.median_ns, find(disk->rungs, "write_odsync").median_ns);
  for (const Rung& r : disk->rungs) {
    EXPECT_EQ(r.batch, 1) << r.id;  // one write at a time
    EXPECT_GT(r.samples, 0) << r.id;
    EXPECT_LE(r.samples, 40) << r.id;  // 2 repeats of at most 20 writes
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "the ladder's file was left behind";
}

TEST(Ladder, LoopbackMeasuresARoundTripAndAConnection) {
  core::Result<std::vector<Rung>> rungs = run_loopback(small_options());
  ASSERT_TRUE(rungs) << rungs.status().message();
  ASSERT_EQ(rungs->size(), 2u);
  EXPECT_EQ((*rungs)[0].id, "tcp_round_trip");
  EXPECT_EQ((*rungs)[1].id, "tcp_connect_accept");
  for (const Rung& r : *rungs) {
    EXPECT_GT(r.median_ns, 1000) << r.id;  // a kernel round trip is microseconds, not ns
    EXPECT_GT(r.samples, 0) << r.id;
  }
}

TEST(Ladder, TmpfsDirectoryIsFlaggedAsMemory) {
  struct statfs s {};
  if (::statfs("/dev/shm", &s) != 0 || s.f_type != 0x01021994) {
    GTEST_SKIP() << "/dev/shm is not tmpfs here";
  }
  core::Result<DiskTarget> t = describe_dir(FsReader(), "/dev/shm");
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_TRUE(t->memory);
  EXPECT_EQ(t->fs_type, "tmpfs");
  EXPECT_TRUE(any_contains(t->warnings, "mean nothing")) << ::testing::PrintToString(t->warnings);
}

TEST(Ladder, MissingDirectoryIsBadInputNamingIt) {
  core::Result<DiskTarget> t = describe_dir(FsReader(), "/nonexistent/knee");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(t.status().message().find("/nonexistent/knee"), std::string::npos);
  EXPECT_NE(t.status().message().find("ENOENT"), std::string::npos);
}

// Regression: --dir /proc and --dir of a regular file failed only when the file was created,
// with exit 1 and without naming --dir.
TEST(Ladder, AFolderNoFileCanBeCreatedInIsBadInputNamingDir) {
  const DiskDir dir;
  const std::string file = dir.path() + "/plain";
  { std::ofstream(file) << "x"; }
  LadderOptions o = small_options();
  for (const std::string& bad : {file, std::string("/proc")}) {
    o.dir = bad;
    core::Result<DiskLadder> disk = run_disk(FsReader(), o);
    ASSERT_FALSE(disk) << bad;
    EXPECT_EQ(disk.status().code(), core::Status::Code::kInvalidArgument) << bad;
    EXPECT_TRUE(disk.status().message().starts_with("--dir " + bad)) << disk.status().message();
  }
}

TEST(Ladder, PartitionResolvesToItsDiskThroughSysfs) {
  // Fixture: / is /dev/sda2 (8:2), a partition of a rotating disk sda.
  core::Result<DiskTarget> t = describe_dir(FsReader(kFixtures + "/ladder_sda"), "/");
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(t->mount_point, "/");
  EXPECT_EQ(t->source, "/dev/sda2");
  EXPECT_EQ(t->fs_type, "ext4");
  EXPECT_EQ(t->device, "sda");
  EXPECT_EQ(t->device_model, "WDC WD40EFRX-68N");
  EXPECT_EQ(t->rotational, 1);
}

TEST(DiskBehind, TheFirstFileWithABlockDeviceWins) {
  // Fixture: / is on sda; /nonexistent cannot be described and is passed over.
  const FsReader fixture(kFixtures + "/ladder_sda");
  std::optional<DiskTarget> t = disk_behind(fixture, {"/nonexistent/knee/a.dat", "/b.dat"});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->device, "sda");
  EXPECT_EQ(t->fs_type, "ext4");
  EXPECT_FALSE(t->memory);
  EXPECT_FALSE(disk_behind(fixture, {"/nonexistent/knee/a.dat"}));
  EXPECT_FALSE(disk_behind(fixture, {}));
}

TEST(DiskBehind, WithoutADeviceTheFilesystemIsStillNamed) {
  struct statfs s {};
  if (::statfs("/dev/shm", &s) != 0 || s.f_type != 0x01021994) {
    GTEST_SKIP() << "/dev/shm is not tmpfs here";
  }
  std::optional<DiskTarget> t = disk_behind(FsReader(), {"/dev/shm/knee-fio.dat"});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->device, "");
  EXPECT_EQ(t->fs_type, "tmpfs");
  EXPECT_TRUE(t->memory);
}

TEST(MountOf, LongestMountPointHoldingThePathWins) {
  const core::Result<std::string> text =
      FsReader(kFixtures + "/ladder_sda").read("/proc/self/mountinfo");
  ASSERT_TRUE(text);
  EXPECT_EQ(mount_of(*text, "/home/me")->mount_point, "/");
  EXPECT_EQ(mount_of(*text, "/dev/shm/x")->fs_type, "tmpfs");
  // A name that only starts like a mount point is not under it.
  EXPECT_EQ(mount_of(*text, "/dev/shmem")->mount_point, "/");
  // Octal escapes are decoded ("\040" is a space).
  const core::Result<MountInfo> spaced = mount_of(*text, "/srv/my data/f");
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->mount_point, "/srv/my data");
  EXPECT_EQ(spaced->super_options, "rw");
  // Two mounts on /work: the later one is on top.
  EXPECT_EQ(mount_of(*text, "/work/x")->fs_type, "xfs");
  EXPECT_EQ(mount_of(*text, "/work/x")->major_minor, "0:41");
  EXPECT_FALSE(mount_of("garbage\n", "/"));
}

TEST(FsTypeName, NamesTheCommonMagics) {
  EXPECT_EQ(fs_type_name(0x01021994), "tmpfs");
  EXPECT_EQ(fs_type_name(0x58465342), "xfs");
  EXPECT_EQ(fs_type_name(0x794c7630), "overlay");
  EXPECT_EQ(fs_type_name(0x12345), "");
}

TEST(LadderTiming, ShortOperationsAreBatchedLongOnesTimedAlone) {
  TimingLimits limits;
  limits.repeats = 1;
  limits.max_samples = 10;
  limits.warmup = milliseconds(1);
  limits.target_sample_ns = 20'000;
  const Samples fast = measure(limits, [](uint64_t i) { keep(i); });
  EXPECT_GT(fast.batch, 1);
  EXPECT_EQ(fast.batch & (fast.batch - 1), 0) << fast.batch;  // a power of two
  // An operation that spins for longer than the target is timed alone.
  const Samples slow = measure(limits, [](uint64_t) {
    const core::TimePoint until = core::Clock::now() + std::chrono::microseconds(30);
    while (core::Clock::now() < until) {
    }
  });
  EXPECT_EQ(slow.batch, 1);
}

TEST(LadderTiming, RepeatsAndSamplesStayWithinTheirLimits) {
  TimingLimits limits;
  limits.repeats = 4;
  limits.max_samples = 25;
  limits.max_time = std::chrono::seconds(10);
  limits.warmup = milliseconds(1);
  limits.fixed_batch = 8;
  uint64_t calls = 0;
  const Samples s = measure(limits, [&](uint64_t i) {
    EXPECT_EQ(i, calls);  // indices count up across warm-up and repeats
    ++calls;
    keep(calls);
  });
  EXPECT_EQ(s.batch, 8);
  EXPECT_EQ(s.batch_ns.count(), 4 * 25);
  ASSERT_EQ(s.repeat_mean_ns.size(), 4u);
  const Rung r = summarise(s, limits.repeats);
  EXPECT_EQ(r.ops, 4 * 25 * 8);
  EXPECT_EQ(r.best_ns, *std::min_element(s.repeat_mean_ns.begin(), s.repeat_mean_ns.end()));
  EXPECT_GE(calls, static_cast<uint64_t>(4 * 25 * 8 + kMinWarmupOps));
}

}  // namespace
}  // namespace knee::probes
