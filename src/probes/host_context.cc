#include "probes/host_context.h"

#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>
#include <system_error>

#include "core/clock.h"
#include "core/version.h"

#ifndef KNEE_BUILD_TYPE
#define KNEE_BUILD_TYPE ""
#endif
#ifndef KNEE_CXX_FLAGS
#define KNEE_CXX_FLAGS ""
#endif

namespace knee::probes {
namespace {

// Load average per logical CPU above which other work on the host competes with the test.
constexpr double kMaxLoadPerCpu = 0.5;
// Clock resolution above which short latencies cannot be told apart (1 us).
constexpr int64_t kMaxClockResolutionNs = 1000;

// The trimmed content of a one-line file, or "" when it cannot be read.
std::string read_line(const FsReader& fs, std::string_view path) {
  const core::Result<std::string> content = fs.read(path);
  if (!content) return "";
  std::string_view text = *content;
  text = text.substr(0, text.find('\n'));
  return std::string(trim(text));
}

// Calls fn(key, value) for every "key : value" line of /proc/cpuinfo-shaped text.
template <typename Fn>
void for_each_key_value(std::string_view text, char separator, Fn fn) {
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const size_t sep = line.find(separator);
    if (sep == std::string_view::npos) continue;
    fn(trim(line.substr(0, sep)), trim(line.substr(sep + 1)));
  }
}

void read_cpuinfo(const FsReader& fs, HostContext& ctx) {
  std::string model_name, hardware, cpu_model;
  int processors = 0;
  if (const core::Result<std::string> cpuinfo = fs.read("/proc/cpuinfo")) {
    for_each_key_value(*cpuinfo, ':', [&](std::string_view key, std::string_view value) {
      if (key == "processor") {
        ++processors;
      } else if (key == "model name" && model_name.empty()) {
        model_name = value;
      } else if (key == "Hardware" && hardware.empty()) {
        hardware = value;
      } else if (key == "cpu model" && cpu_model.empty()) {
        cpu_model = value;
      }
    });
  }
  ctx.cpu_model = !model_name.empty() ? model_name : !hardware.empty() ? hardware : cpu_model;
  if (processors == 0) {
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    processors = online > 0 ? static_cast<int>(online) : 0;
  }
  ctx.logical_cpus = processors;
}

// PRETTY_NAME from os-release(5), unquoted.
std::string read_os(const FsReader& fs) {
  for (const std::string_view path : {"/etc/os-release", "/usr/lib/os-release"}) {
    const core::Result<std::string> content = fs.read(path);
    if (!content) continue;
    std::string pretty;
    for_each_key_value(*content, '=', [&](std::string_view key, std::string_view value) {
      if (key != "PRETTY_NAME") return;
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
          value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      pretty = value;
    });
    return pretty;
  }
  return "";
}

std::string read_turbo(const FsReader& fs) {
  const std::string no_turbo = read_line(fs, "/sys/devices/system/cpu/intel_pstate/no_turbo");
  if (no_turbo == "1") return "off";
  if (no_turbo == "0") return "on";
  const std::string boost = read_line(fs, "/sys/devices/system/cpu/cpufreq/boost");
  if (boost == "1") return "on";
  if (boost == "0") return "off";
  return "";
}

double read_load_avg_1m(const FsReader& fs) {
  const std::string line = read_line(fs, "/proc/loadavg");
  double load = std::numeric_limits<double>::quiet_NaN();
  const std::string_view first = std::string_view(line).substr(0, line.find(' '));
  const auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), load);
  if (ec != std::errc() || end != first.data() + first.size()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return load;
}

std::string compiler_name() {
#if defined(__clang__)
  return __VERSION__;  // "Debian Clang 14.0.6" or "Clang 15.0.0 (...)"
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;  // __VERSION__ is "12.2.0"
#else
  return __VERSION__;
#endif
}

bool is_optimised_build(std::string_view build_type) {
  return build_type == "Release" || build_type == "RelWithDebInfo" || build_type == "MinSizeRel";
}

std::vector<std::string> host_warnings(const HostContext& ctx) {
  std::vector<std::string> warnings;
  if (!ctx.governor.empty() && ctx.governor != "performance") {
    warnings.push_back(fmt::format(
        "CPU frequency governor is '{}', not 'performance': the CPU changes speed with load, so "
        "numbers vary from run to run (sudo cpupower frequency-set --governor performance)",
        ctx.governor));
  }
  if (ctx.turbo == "on") {
    warnings.push_back(
        "turbo boost is on: the CPU speeds up and slows down with temperature and load, so "
        "numbers vary from run to run");
  }
  if (std::isnan(ctx.load_avg_1m)) {
    warnings.push_back(
        "load average unreadable (/proc/loadavg): cannot tell whether other work competes with "
        "the test");
  } else if (ctx.logical_cpus > 0 && ctx.load_avg_1m > kMaxLoadPerCpu * ctx.logical_cpus) {
    warnings.push_back(fmt::format(
        "load average {:.2f} over the last minute is above {:g} per core ({} logical CPUs): "
        "other work on this host competes with the test",
        ctx.load_avg_1m, kMaxLoadPerCpu, ctx.logical_cpus));
  }
  if (!is_optimised_build(ctx.build_type)) {
    warnings.push_back(fmt::format(
        "knee is {} build, not an optimised Release build: the load generator itself is slow "
        "and may be what saturates",
        ctx.build_type.empty() ? std::string("an unnamed (unoptimised)")
                               : fmt::format("a '{}'", ctx.build_type)));
  }
  if (ctx.cxx_flags.find("-fsanitize") != std::string::npos) {
    warnings.push_back(
        "knee was built with sanitizers (-fsanitize): every memory access is checked, so the "
        "load generator is several times slower");
  }
  if (ctx.cpuidle_driver == "haltpoll" && ctx.guest_halt_poll_ns == 0) {
    // Measured on a 2-vCPU KVM guest (2026-12-03, nginx on CPU 0, knee on CPU 1): knee run -c 1
    // p50 67-73 us and 14k req/s with guest_halt_poll_ns 0, 10-11 us and 90k req/s with 200000;
    // open loop at 10,000 req/s without --spin, send lag p99 67-85 us against 36-61 us.
    warnings.push_back(
        "this virtual machine halts an idle vCPU at once (cpuidle haltpoll, guest_halt_poll_ns "
        "0): a thread woken on it waits for the hypervisor to run the vCPU again, which adds "
        "tens of microseconds to every wake-up, so low-concurrency latency and open-loop send "
        "lag measure the hypervisor as much as the server (as root: echo 200000 > "
        "/sys/module/haltpoll/parameters/guest_halt_poll_ns lets idle vCPUs poll 200 us first, "
        "at the price of idle CPU time)");
  }
  if (ctx.clock_resolution_ns > kMaxClockResolutionNs) {
    warnings.push_back(fmt::format(
        "the clock ticks only every {} ns: latencies shorter than that cannot be measured",
        ctx.clock_resolution_ns));
  }
  return warnings;
}

}  // namespace

HostContext read_host_context(const FsReader& fs) {
  HostContext ctx;
  ctx.hostname = read_line(fs, "/proc/sys/kernel/hostname");
  read_cpuinfo(fs, ctx);
  ctx.kernel = read_line(fs, "/proc/sys/kernel/osrelease");
  ctx.os = read_os(fs);
  ctx.governor = read_line(fs, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  ctx.turbo = read_turbo(fs);
  ctx.cpuidle_driver = read_line(fs, "/sys/devices/system/cpu/cpuidle/current_driver");
  if (ctx.cpuidle_driver == "haltpoll") {
    const std::string poll = read_line(fs, "/sys/module/haltpoll/parameters/guest_halt_poll_ns");
    int64_t ns = -1;
    if (std::from_chars(poll.data(), poll.data() + poll.size(), ns).ec == std::errc() && ns >= 0) {
      ctx.guest_halt_poll_ns = ns;
    }
  }
  ctx.knee_version = core::version_string();
  ctx.compiler = compiler_name();
  ctx.build_type = KNEE_BUILD_TYPE;
  ctx.cxx_flags = KNEE_CXX_FLAGS;
  ctx.clock_resolution_ns = core::steady_clock_resolution().count();
  ctx.load_avg_1m = read_load_avg_1m(fs);
  ctx.warnings = host_warnings(ctx);
  return ctx;
}

}  // namespace knee::probes
