#include "core/clock.h"

#include <time.h>

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
Nanos thread_runqueue_wait() {
  std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (f == nullptr) return Nanos(0);
  unsigned long long on_cpu = 0, waiting = 0;
  int n = std::fscanf(f, "%llu %llu", &on_cpu, &waiting);
  std::fclose(f);
  return Nanos(n == 2 ? static_cast<int64_t>(waiting) : 0);
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
