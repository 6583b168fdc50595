// One clock for all of knee: std::chrono::steady_clock (CLOCK_MONOTONIC on Linux), behind a small
// seam so schedules, timeouts and phases are tested with a fake clock and no sleeping.
//
// Thread-safety: SteadyClock is stateless and safe from any thread; a test's fake clock belongs to
// the thread that advances it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace knee::core {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using Nanos = std::chrono::nanoseconds;

// The seam: anything that tells the time. Implementations must be monotonic.
class ClockSource {
 public:
  virtual ~ClockSource() = default;
  virtual TimePoint now() const = 0;
  // How long, in real time, a loop that has nothing to do before `deadline` should block in
  // epoll (>= 0). The real clock answers deadline - now(); a test's fake clock answers at most a
  // millisecond, so its loop notices soon when the test moves fake time on, and a 10 s timeout is
  // tested in microseconds of real time.
  virtual Nanos blocking_time(TimePoint deadline) const {
    const Nanos left = deadline - now();
    return left.count() > 0 ? left : Nanos(0);
  }
};

// The real clock: steady_clock::now().
class SteadyClock final : public ClockSource {
 public:
  TimePoint now() const override { return Clock::now(); }
};

// The process-wide real clock.
const ClockSource& steady_clock_source();

// CPU time consumed so far by the calling thread (CLOCK_THREAD_CPUTIME_ID), in ns.
Nanos thread_cpu_time();
// Time the calling thread has spent runnable but waiting for a CPU (the run queue), in ns, from
// /proc/thread-self/schedstat (second field; kernel Documentation/scheduler/sched-stats.rst).
// nullopt when the kernel does not provide it or it cannot be read (no file descriptor left).
// CPU time + this wait = the CPU the thread asked for.
std::optional<Nanos> thread_runqueue_wait();

// What the calling thread had used at one moment, for its share of a core between two moments.
struct ThreadCpuReading {
  Nanos cpu{0};                        // thread_cpu_time()
  std::optional<Nanos> runqueue_wait;  // thread_runqueue_wait()
  int64_t spin_ns = 0;  // of the CPU time, busy-polling on purpose (the caller's count), ns
};
// Reads the calling thread's CPU time and run-queue wait now; `spin_ns` is the caller's count of
// its busy-polling so far, ns, carried into the reading.
ThreadCpuReading read_thread_cpu(int64_t spin_ns);

// A thread's use of a core between two readings `wall_ns` of wall time apart, each 0..1:
// `share` its CPU time less spin (spinning is waiting on purpose: neither work nor demand),
// `demand` that plus its run-queue wait, the CPU it asked for (left out when either reading
// lacks it). Both 0 when wall_ns <= 0.
struct ThreadCpuShares {
  double share = 0;
  double demand = 0;
};
ThreadCpuShares thread_cpu_shares(const ThreadCpuReading& from, const ThreadCpuReading& to,
                                  int64_t wall_ns);
// The wall clock (std::chrono::system_clock: it may step) in seconds since the Unix epoch: for
// start times recorded in reports and logs and for starting together with other processes,
// never for measuring an interval.
double wall_clock_s();
// CPU time consumed so far by the whole process (CLOCK_PROCESS_CPUTIME_ID), in ns.
Nanos process_cpu_time();
// Resolution the kernel reports for steady_clock's clock (clock_getres(CLOCK_MONOTONIC)), in ns.
Nanos steady_clock_resolution();

// Whole nanoseconds between two time points (b - a), as a raw integer for histograms.
inline int64_t elapsed_ns(TimePoint a, TimePoint b) {
  return std::chrono::duration_cast<Nanos>(b - a).count();
}

}  // namespace knee::core
