#include "engine/spin_window.h"

#include <algorithm>

namespace knee::engine {

void SpinWindow::record_lateness(int64_t lateness_ns) {
  samples_[count_ % kSamples] = std::max<int64_t>(0, lateness_ns);
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
  p99_ns_ = sorted[rank];
  window_ns_ = std::clamp<int64_t>(p99_ns_ - kLagAllowance, 0, kMaxWindow);
}

}  // namespace knee::engine
