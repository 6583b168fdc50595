// The limit of an external benchmark's level (analysis::name_external_limit): the tool's own
// CPU, the host's CPUs, the disk behind its files judged by await growing while its operations
// stay flat (never %util alone), and "its own concurrency" when nothing saturated.
#include <gtest/gtest.h>

#include <string>

#include "analysis/saturation.h"
#include "core/resource_use.h"

namespace knee::analysis {
namespace {

core::ResourceUse host_with_disk(double ops_per_s, double await_ms, double queue, double util) {
  core::ResourceUse u;
  u.window_s = 2;
  u.intervals = 8;
  u.cpu_busy_pct = {40, 30};
  u.cpu_busy_all_pct = 35;
  core::DiskUse d;
  d.device = "vda";
  d.reads_per_s = ops_per_s;
  d.read_await_ms = await_ms;
  d.queue_size = queue;
  d.util_pct = util;
  u.disks.push_back(d);
  return u;
}

ExternalLevelUse fio_level(double in_flight) {
  ExternalLevelUse l;
  l.tool = "fio";
  l.busiest_job_cpu_pct = 40;
  l.in_flight = in_flight;
  l.x_times_mean_r = in_flight;
  l.device = "vda";
  return l;
}

TEST(ExternalLimit, OneIoInFlightAtFullUtilIsNotASaturatedDisk) {
  // %util 100 with one I/O in flight: the device serves more in parallel; no previous level.
  const SaturationVerdict v =
      name_external_limit(host_with_disk(11000, 0.09, 1.0, 100), fio_level(1), nullptr);
  EXPECT_EQ(v.resource, "none");
  EXPECT_NE(v.detail.find("own concurrency (1 in flight)"), std::string::npos) << v.detail;
}

TEST(ExternalLimit, AwaitGrowingWhileOpsStayFlatIsTheDisk) {
  const core::ResourceUse before = host_with_disk(75000, 0.51, 39, 75);
  const core::ResourceUse after = host_with_disk(75500, 2.53, 191, 85);
  const SaturationVerdict v = name_external_limit(after, fio_level(256), &before);
  EXPECT_EQ(v.resource, "disk");
  EXPECT_NE(v.detail.find("disk vda"), std::string::npos) << v.detail;
  // A deeper queue that still pays (ops up 1.6x) is not saturation, however long the await.
  const core::ResourceUse paying = host_with_disk(120000, 1.2, 30, 80);
  EXPECT_EQ(name_external_limit(paying, fio_level(64), &before).resource, "none");
  // Another device's figures are not the files' device.
  ExternalLevelUse elsewhere = fio_level(256);
  elsewhere.device = "nvme0n1";
  EXPECT_EQ(name_external_limit(after, elsewhere, &before).resource, "none");
}

TEST(ExternalLimit, TheToolsOwnCpuComesFirst) {
  ExternalLevelUse l = fio_level(4);
  l.busiest_job_cpu_pct = 99;
  const core::ResourceUse before = host_with_disk(75000, 0.51, 39, 75);
  const SaturationVerdict v = name_external_limit(host_with_disk(75500, 2.53, 191, 85), l, &before);
  EXPECT_EQ(v.resource, "client");
  EXPECT_NE(v.detail.find("fio itself"), std::string::npos) << v.detail;
  // Without per-job CPU: the command's cores against its threads.
  ExternalLevelUse pgbench;
  pgbench.tool = "pgbench";
  pgbench.tool_cpu_cores = 0.97;
  pgbench.tool_threads = 1;
  EXPECT_EQ(name_external_limit(core::ResourceUse{}, pgbench, nullptr).resource, "client");
  pgbench.tool_threads = 2;
  EXPECT_EQ(name_external_limit(core::ResourceUse{}, pgbench, nullptr).resource, "none");
}

TEST(ExternalLimit, BusyHostCpusOrTheTargetsProcess) {
  core::ResourceUse u = host_with_disk(100, 0.1, 0.1, 5);
  u.cpu_busy_all_pct = 96;
  u.cpu_busy_pct = {97, 95};
  ExternalLevelUse redis;
  redis.tool = "redis-benchmark";
  redis.in_flight = 50;
  EXPECT_EQ(name_external_limit(u, redis, nullptr).resource, "cpu");
  u.cpu_busy_all_pct = 55;
  u.cpu_busy_pct = {99, 11};
  EXPECT_EQ(name_external_limit(u, redis, nullptr).resource, "none");
  core::ProcessUse server;  // a single-threaded redis-server at a full core (--server-pid)
  server.pid = 7;
  server.cpu_pct = 99;
  server.busiest_thread_cpu_pct = 99;
  server.threads = 1;
  u.server = server;
  const SaturationVerdict v = name_external_limit(u, redis, nullptr);
  EXPECT_EQ(v.resource, "cpu");
  EXPECT_NE(v.detail.find("99%"), std::string::npos) << v.detail;
}

TEST(ExternalLimit, BusyCpusFilledByOtherProcessesAreContention) {
  // Regression: a json script using half a core was "cpu" while compiles filled both CPUs.
  core::ResourceUse u = host_with_disk(100, 0.1, 0.1, 5);
  u.cpu_busy_all_pct = 100;
  u.cpu_busy_pct = {100, 100};
  core::ProcessUse server;
  server.pid = 9;
  server.cpu_pct = 20;
  server.busiest_thread_cpu_pct = 20;
  server.threads = 1;
  u.server = server;
  ExternalLevelUse script;
  script.tool = "the benchmark";
  script.tool_cpu_cores = 0.49;
  const SaturationVerdict v = name_external_limit(u, script, nullptr);
  EXPECT_EQ(v.resource, "none");
  ASSERT_FALSE(v.warnings.empty());
  EXPECT_NE(v.warnings[0].find("host contention"), std::string::npos) << v.warnings[0];
  // Without the server's CPU, the rest may be the target's: cpu, with what the tool used.
  u.server.reset();
  const SaturationVerdict unknown = name_external_limit(u, script, nullptr);
  EXPECT_EQ(unknown.resource, "cpu");
  ASSERT_FALSE(unknown.warnings.empty());
  EXPECT_NE(unknown.warnings[0].find("0.49 of the 2.00 busy cores"), std::string::npos)
      << unknown.warnings[0];
}

TEST(ExternalLimit, AToolThatDidNotKeepItsQueueBusyIsPacingItself) {
  ExternalLevelUse capped = fio_level(64);
  capped.x_times_mean_r = 0.44;  // --rate_iops: 5000 IOPS x 88 us
  const SaturationVerdict v =
      name_external_limit(host_with_disk(5000, 0.09, 0.3, 20), capped, nullptr);
  EXPECT_EQ(v.resource, "none");
  EXPECT_NE(v.detail.find("own pacing"), std::string::npos) << v.detail;
}

TEST(ExternalLimit, FilesInMemoryHaveNoDisk) {
  ExternalLevelUse l = fio_level(16);
  l.device.clear();
  l.files_in_memory = true;
  const core::ResourceUse before = host_with_disk(75000, 0.51, 39, 75);
  const SaturationVerdict v = name_external_limit(host_with_disk(75500, 2.53, 191, 85), l, &before);
  EXPECT_EQ(v.resource, "none");
  bool said = false;
  for (const std::string& e : v.evidence) said = said || e.find("in memory") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace knee::analysis
