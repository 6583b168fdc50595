#include "core/clock.h"

#include <time.h>

#include <algorithm>
#include <cstdio>

namespace knee::core {
namespace {

Nanos read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return Nanos(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
}

}  // namespace

const ClockSource& steady_clock_source() {
  static const SteadyClock clock;
  return clock;
}

Nanos thread_cpu_time() { return read_clock(CLOCK_THREAD_CPUTIME_ID); }
std::optional<Nanos> thread_runqueue_wait() {
  std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (f == nullptr) return std::nullopt;
  unsigned long long on_cpu = 0, waiting = 0;
  int n = std::fscanf(f, "%llu %llu", &on_cpu, &waiting);
  std::fclose(f);
  if (n != 2) return std::nullopt;
  return Nanos(static_cast<int64_t>(waiting));
}

ThreadCpuReading read_thread_cpu(int64_t spin_ns) {
  return {thread_cpu_time(), thread_runqueue_wait(), spin_ns};
}

ThreadCpuShares thread_cpu_shares(const ThreadCpuReading& from, const ThreadCpuReading& to,
                                  int64_t wall_ns) {
  if (wall_ns <= 0) return {};
  const double wall = static_cast<double>(wall_ns);
  const double work_ns =
      std::max(0.0, static_cast<double>((to.cpu - from.cpu).count() - (to.spin_ns - from.spin_ns)));
  const double wait_ns =
      from.runqueue_wait && to.runqueue_wait
          ? std::max(0.0, static_cast<double>((*to.runqueue_wait - *from.runqueue_wait).count()))
          : 0.0;
  return {std::min(1.0, work_ns / wall), std::min(1.0, (work_ns + wait_ns) / wall)};
}

double wall_clock_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Nanos process_cpu_time() { return read_clock(CLOCK_PROCESS_CPUTIME_ID); }

Nanos steady_clock_resolution() {
  timespec ts{};
  clock_getres(CLOCK_MONOTONIC, &ts);
  return Nanos(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
}

}  // namespace knee::core
