#include "probes/host_context.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/clock.h"
#include "probes/fs_reader.h"

namespace knee::probes {
namespace {

const std::string kFixtures = KNEE_FIXTURES;

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

TEST(FsReader, ReadsFilesUnderTheRoot) {
  const FsReader fs(kFixtures + "/host1/");
  const core::Result<std::string> osrelease = fs.read("/proc/sys/kernel/osrelease");
  ASSERT_TRUE(osrelease) << osrelease.status().message();
  EXPECT_EQ(*osrelease, "6.1.0-18-amd64\n");
  EXPECT_EQ(fs.root(), kFixtures + "/host1");
}

TEST(FsReader, MissingFileErrorNamesThePathAndErrno) {
  const FsReader fs(kFixtures + "/host1");
  const core::Result<std::string> r = fs.read("/proc/stat");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), core::Status::Code::kIoError);
  EXPECT_NE(r.status().message().find(kFixtures + "/host1/proc/stat"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("ENOENT"), std::string::npos) << r.status().message();
}

TEST(FsReader, ReadingADirectoryFailsNamingThePath) {
  const FsReader fs(kFixtures + "/host1");
  const core::Result<std::string> r = fs.read("/proc");
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find(kFixtures + "/host1/proc"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("EISDIR"), std::string::npos) << r.status().message();
}

TEST(FsReader, RelativePathIsInvalidArgumentNamingThePath) {
  const FsReader fs(kFixtures + "/host1");
  const core::Result<std::string> r = fs.read("proc/loadavg");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("proc/loadavg"), std::string::npos);
  EXPECT_FALSE(fs.exists("proc/loadavg"));
  EXPECT_TRUE(fs.list_dir("proc").empty());
}

TEST(FsReader, ExistsAndListDir) {
  const FsReader fs(kFixtures + "/host1");
  EXPECT_TRUE(fs.exists("/proc/loadavg"));
  EXPECT_TRUE(fs.exists("/sys/devices/system/cpu/cpu0"));
  EXPECT_FALSE(fs.exists("/proc/stat"));
  EXPECT_EQ(fs.list_dir("/proc"), (std::vector<std::string>{"cpuinfo", "loadavg", "sys"}));
  EXPECT_EQ(fs.list_dir("/sys/devices/system/cpu"),
            (std::vector<std::string>{"cpu0", "intel_pstate"}));
  EXPECT_TRUE(fs.list_dir("/no/such/dir").empty());
}

TEST(FsReader, DefaultRootReadsTheRealSystem) {
  const FsReader fs;
  EXPECT_EQ(fs.root(), "");
  EXPECT_TRUE(fs.read("/proc/self/stat").has_value());
}

TEST(HostContext, ReadsEveryFieldFromFixture) {
  const HostContext ctx = read_host_context(FsReader(kFixtures + "/host1"));
  EXPECT_EQ(ctx.hostname, "bench-host1");
  EXPECT_EQ(ctx.cpu_model, "Intel(R) Core(TM) i5-8250U CPU @ 1.60GHz");
  EXPECT_EQ(ctx.logical_cpus, 2);
  EXPECT_EQ(ctx.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(ctx.os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(ctx.governor, "powersave");
  EXPECT_EQ(ctx.turbo, "on");  // intel_pstate/no_turbo = 0
  EXPECT_DOUBLE_EQ(ctx.load_avg_1m, 1.73);
  // From the build and the process, not the fixture.
  EXPECT_NE(ctx.compiler.find(__VERSION__), std::string::npos) << ctx.compiler;
#if defined(__GNUC__) && !defined(__clang__)
  EXPECT_EQ(ctx.compiler, std::string("GCC ") + __VERSION__);
#endif
  EXPECT_EQ(ctx.build_type, KNEE_TEST_BUILD_TYPE);
  EXPECT_EQ(ctx.clock_resolution_ns, core::steady_clock_resolution().count());
  EXPECT_GT(ctx.clock_resolution_ns, 0);
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_NE(ctx.cxx_flags.find("-fsanitize=address"), std::string::npos) << ctx.cxx_flags;
#endif
}

TEST(HostContext, WarnsAboutGovernorTurboAndLoad) {
  const HostContext ctx = read_host_context(FsReader(kFixtures + "/host1"));
  EXPECT_TRUE(any_contains(ctx.warnings, "governor is 'powersave', not 'performance'"));
  EXPECT_TRUE(any_contains(ctx.warnings, "turbo boost is on"));
  // 1.73 on 2 logical CPUs is above 0.5 per core.
  EXPECT_TRUE(any_contains(ctx.warnings, "load average 1.73"));
}

TEST(HostContext, WarnsAboutUnoptimisedOrSanitizedBuild) {
  const HostContext ctx = read_host_context(FsReader(kFixtures + "/host1"));
  const std::string type = KNEE_TEST_BUILD_TYPE;
  const bool optimised = type == "Release" || type == "RelWithDebInfo" || type == "MinSizeRel";
  EXPECT_EQ(any_contains(ctx.warnings, "not an optimised Release build"), !optimised);
  EXPECT_EQ(any_contains(ctx.warnings, "sanitizers"),
            ctx.cxx_flags.find("-fsanitize") != std::string::npos);
}

TEST(HostContext, FallsBackToHardwareAndUsrLibOsRelease) {
  const HostContext ctx = read_host_context(FsReader(kFixtures + "/host2"));
  EXPECT_EQ(ctx.hostname, "");  // no hostname file in this tree
  EXPECT_EQ(ctx.cpu_model, "BCM2835");
  EXPECT_EQ(ctx.logical_cpus, 4);
  EXPECT_EQ(ctx.kernel, "6.1.0-rpi7-rpi-v8");
  EXPECT_EQ(ctx.os, "Raspbian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(ctx.governor, "performance");
  EXPECT_EQ(ctx.turbo, "off");  // cpufreq/boost = 0
  EXPECT_DOUBLE_EQ(ctx.load_avg_1m, 0.10);
  EXPECT_FALSE(any_contains(ctx.warnings, "governor"));
  EXPECT_FALSE(any_contains(ctx.warnings, "turbo"));
  EXPECT_FALSE(any_contains(ctx.warnings, "load average"));
}

TEST(HostContext, AGuestThatHaltsIdleVcpusAtOnceIsWarnedAbout) {
  // host3: a KVM guest with cpuidle haltpoll and guest_halt_poll_ns 0.
  const HostContext ctx = read_host_context(FsReader(kFixtures + "/host3"));
  EXPECT_EQ(ctx.cpuidle_driver, "haltpoll");
  EXPECT_EQ(ctx.guest_halt_poll_ns, 0);
  EXPECT_TRUE(any_contains(ctx.warnings, "halts an idle vCPU at once"))
      << ::testing::PrintToString(ctx.warnings);
  EXPECT_TRUE(any_contains(ctx.warnings, "/sys/module/haltpoll/parameters/guest_halt_poll_ns"));
}

TEST(HostContext, AGuestThatPollsBeforeHaltingIsNot) {
  // host2: haltpoll polling for the kernel's default 200 us.
  const HostContext ctx = read_host_context(FsReader(kFixtures + "/host2"));
  EXPECT_EQ(ctx.cpuidle_driver, "haltpoll");
  EXPECT_EQ(ctx.guest_halt_poll_ns, 200000);
  EXPECT_FALSE(any_contains(ctx.warnings, "vCPU"));
  // host1: a bare machine without cpuidle in its tree.
  const HostContext bare = read_host_context(FsReader(kFixtures + "/host1"));
  EXPECT_EQ(bare.cpuidle_driver, "");
  EXPECT_EQ(bare.guest_halt_poll_ns, -1);
  EXPECT_FALSE(any_contains(bare.warnings, "vCPU"));
}

TEST(HostContext, EmptyTreeLeavesFieldsEmptyAndWarnsAboutLoad) {
  const HostContext ctx = read_host_context(FsReader(kFixtures + "/no-such-host"));
  EXPECT_EQ(ctx.hostname, "");
  EXPECT_EQ(ctx.cpu_model, "");
  EXPECT_GT(ctx.logical_cpus, 0);  // sysconf of the running process
  EXPECT_EQ(ctx.kernel, "");
  EXPECT_EQ(ctx.os, "");
  EXPECT_EQ(ctx.governor, "");
  EXPECT_EQ(ctx.turbo, "");
  EXPECT_TRUE(std::isnan(ctx.load_avg_1m));
  EXPECT_TRUE(any_contains(ctx.warnings, "load average unreadable"));
  EXPECT_FALSE(any_contains(ctx.warnings, "governor"));
}

}  // namespace
}  // namespace knee::probes
