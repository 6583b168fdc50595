#include "engine/spin_window.h"

#include <algorithm>

namespace knee::engine {

void SpinWindow::set_quantile(int64_t lateness_ns) {
  p99_ns_ = lateness_ns;
  window_ns_ = std::clamp<int64_t>(p99_ns_ - kLagAllowance, 0, kMaxWindow);
}

void SpinWindow::record_lateness(int64_t lateness_ns) {
  lateness_ns = std::max<int64_t>(0, lateness_ns);
  if (!probe_due()) {
    probe_count_ = 0;
  } else {
    probes_[probe_count_++] = lateness_ns;
    if (probe_count_ == kProbesToRecover) {
      probe_count_ = 0;
      const int64_t slowest = *std::max_element(probes_.begin(), probes_.end());
      if (slowest < p99_ns_) {
        // The host wakes quicker than the ring says: start again from these probes alone.
        std::copy(probes_.begin(), probes_.end(), samples_.begin());
        count_ = kProbesToRecover;
        spun_since_sample_ = 0;
        set_quantile(slowest);
        return;
      }
    }
  }
  samples_[count_ % kSamples] = lateness_ns;
  ++count_;
  spun_since_sample_ = 0;
  const bool early = count_ < kRefreshEvery && count_ >= kFirstRefresh &&
                     (count_ & (count_ - 1)) == 0;  // 16, 32, 64
  if (!early && count_ % kRefreshEvery != 0) return;
  // The quantile of the ring (or of the samples so far while it fills): nth_element on a copy,
  // 4 KB every kRefreshEvery sleeps.
  const size_t n = std::min(count_, kSamples);
  std::array<int64_t, kSamples> sorted = samples_;
  const size_t rank = std::min(n - 1, early ? n * 9 / 10 : n * 99 / 100);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank),
                   sorted.begin() + static_cast<std::ptrdiff_t>(n));
  set_quantile(sorted[rank]);
}

}  // namespace knee::engine
