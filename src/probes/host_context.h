// HostContext: the machine and build a result was measured on (conventions 11, after
// nanobench's governor and turbo warnings). Numbers from a laptop on battery, a debug build or a
// busy host do not mean what numbers from a quiet, pinned, optimised setup mean; every result
// records this context and says in plain words what makes its numbers unstable.
//
// Sources: /proc/cpuinfo, /proc/sys/kernel/{hostname,osrelease}, /proc/loadavg, /etc/os-release,
// /sys/devices/system/cpu/... read through FsReader (so tests use fixture trees); the compiler,
// build type and flags are those this library was built with; the clock resolution is
// clock_getres(CLOCK_MONOTONIC) of the running process.
//
// Thread-safety: read_host_context reads files and has no shared state; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probes/fs_reader.h"

namespace knee::probes {

struct HostContext {
  std::string hostname;   // /proc/sys/kernel/hostname; "" if unreadable
  std::string cpu_model;  // /proc/cpuinfo "model name" (else "Hardware", else "cpu model"); ""
  int logical_cpus = 0;  // "processor" entries in /proc/cpuinfo, else sysconf(_SC_NPROCESSORS_ONLN)
  std::string kernel;    // /proc/sys/kernel/osrelease, as `uname -r` prints it; ""
  std::string os;        // PRETTY_NAME from /etc/os-release (else /usr/lib/os-release); ""
  std::string governor;  // cpufreq scaling_governor of cpu0; "" if there is no cpufreq
  std::string turbo;     // "on", "off", or "" when unknown (intel_pstate/no_turbo, cpufreq/boost)
  // /sys/devices/system/cpu/cpuidle/current_driver: how an idle CPU waits ("intel_idle",
  // "acpi_idle", "haltpoll" in a KVM guest); "" if there is no cpuidle.
  std::string cpuidle_driver;
  // /sys/module/haltpoll/parameters/guest_halt_poll_ns: the longest a KVM guest's idle vCPU polls
  // for work before it halts (the kernel's default 200000; 0: it halts at once, and a thread
  // woken on it waits for the hypervisor to run the vCPU again); -1 when not a haltpoll guest.
  int64_t guest_halt_poll_ns = -1;
  std::string knee_version;  // core::version_string(): "0.1.0 (6f645c6d1a2b)"
  std::string compiler;      // "GCC 12.2.0" (from __VERSION__)
  std::string build_type;    // CMAKE_BUILD_TYPE: "Release", "Debug", ...; "" if none was set
  std::string cxx_flags;     // C++ flags of this build type, with options added for all targets
  int64_t clock_resolution_ns = 0;  // resolution of steady_clock, in ns
  double load_avg_1m = 0;           // 1-minute load average from /proc/loadavg; NaN if unreadable
  // Conditions that make numbers unstable, in words a user understands; empty when none.
  std::vector<std::string> warnings;
};

// Reads the context of the host behind `fs` and of this build. Never fails: a value that cannot be
// read is left empty (or NaN for the load) and, where it matters for the numbers, warned about.
HostContext read_host_context(const FsReader& fs);

}  // namespace knee::probes
