// SpinWindow: how long before an intended send the open-loop worker stops sleeping and busy-polls,
// adapted to how late this host wakes a sleeping thread (`--spin auto`, the default).
//
// A thread that sleeps until a send is due wakes late by the host's timer and wake-up latency:
// 30-50 us at p50 and 50-300 us at p99 on this project's 2-core VM (bench/open_loop_accuracy.sh),
// milliseconds on hosts whose halted vCPUs wake slowly. Spinning the whole gap between sends
// makes every send punctual for a full core; spinning a fixed window (`--spin 500us`) is right
// on one host and waste or too little on another. SpinWindow instead keeps the last kSamples
// wake-up latenesses (the time from a sleep's deadline to the moment the thread ran again, in ns)
// and sets the window to their p99 less kLagAllowance: the sleep then ends early enough that 99 %
// of sends leave at most kLagAllowance late, and the lateness itself eats most of the window, so
// the busy-polling left is the p99 lateness less the usual one.
//
// The first window comes after kFirstRefresh samples and is refreshed at each doubling (a slow
// host is noticed within tens of sends, in the warm-up); so few samples give no p99, so until
// kRefreshEvery samples it is their p90 (one slow wake-up among 16 does not set it), then the p99
// every kRefreshEvery samples. Before the first the window is 0 (plain sleeping).
//
// A host whose wake-ups are as slow as the gap between sends gets a window as long as the gap, and
// a worker that spins through every gap takes no more samples. So the worker counts the sends it
// spun for (count_spun_send) and, once kProbeEvery of them passed without a sample (probe_due),
// sleeps through one window instead of spinning it: one send in kProbeEvery may leave late. Probes
// alone would refill the ring slowly (kSamples probes, over 2 minutes of spinning at 1,000 req/s,
// seen in a soak after a stretch of slow wake-ups), so kProbesToRecover probes in a row that each
// woke earlier than the ring's p75 restart the estimate from them, as at the start: once the host
// is quick again the spinning stops within kProbeEvery x kProbesToRecover sends (2 s at 1,000
// req/s). The p75, not the p99: on a host that has not changed, 8 probes from the ring's own
// spread all fall below its p99 92 % of the time, below its p75 10 % (0.75^8): a needless restart
// about once in 40 probes (10,000 sends), each costing one stretch of sleeping under a p90 window
// (about 10 % of up to 128 sends late) until the refreshes raise it again, so 0.1-0.3 % of sends
// in all, beside the probes' 1 in kProbeEvery.
//
// Not thread-safe: one per load worker, used on its thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/clock.h"

namespace knee::engine {

class SpinWindow {
 public:
  static constexpr size_t kSamples = 512;
  static constexpr size_t kFirstRefresh = 16;
  static constexpr size_t kRefreshEvery = 128;
  static constexpr size_t kProbeEvery = 256;     // spun sends between two probing sleeps
  static constexpr size_t kProbesToRecover = 8;  // quick probes in a row that restart the estimate
  // The send lag (ns) a sleep may leave at p99: a quarter of the 200 us goal (issue 17), so the
  // loop's own work between the wake-up and the write and the estimate's error fit beside it.
  static constexpr int64_t kLagAllowance = 50'000;
  static constexpr int64_t kMaxWindow = 10'000'000;  // ns; the same cap as --spin

  // One sleep that ended on its deadline with nothing to read: it woke `lateness_ns` after the
  // deadline (negative values, a clock that moved backwards or a fake one, count as 0). A sleep
  // recorded while probe_due() is a probe.
  void record_lateness(int64_t lateness_ns);
  // A send the worker busy-polled for instead of sleeping towards it.
  void count_spun_send() { ++spun_since_sample_; }
  // True when kProbeEvery sends were spun for since the last sample: sleep through the next
  // window instead, to measure the host again.
  bool probe_due() const { return spun_since_sample_ >= kProbeEvery; }
  // The busy-poll window before a send, in ns, 0..kMaxWindow.
  core::Nanos window() const { return core::Nanos(window_ns_); }
  // The quantile (p90 of the first samples, then p99) the window was set from, ns; 0 before.
  int64_t p99_lateness_ns() const { return p99_ns_; }
  // The p75 of the same samples, ns: what a probe must beat to count towards a restart.
  int64_t p75_lateness_ns() const { return p75_ns_; }

 private:
  void set_quantiles(int64_t p75_ns, int64_t p99_ns);  // and the window from the p99

  std::array<int64_t, kSamples> samples_{};
  size_t count_ = 0;  // samples recorded so far (the ring holds the last kSamples)
  size_t spun_since_sample_ = 0;
  std::array<int64_t, kProbesToRecover> probes_{};  // the quick probes in a row so far
  size_t quick_probes_ = 0;
  int64_t p75_ns_ = 0;
  int64_t p99_ns_ = 0;
  int64_t window_ns_ = 0;
};

}  // namespace knee::engine
