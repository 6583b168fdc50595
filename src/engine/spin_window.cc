#include "engine/spin_window.h"

#include <algorithm>

namespace knee::engine {

void SpinWindow::set_quantiles(int64_t p75_ns, int64_t p99_ns) {
  p75_ns_ = p75_ns;
  p99_ns_ = p99_ns;
  window_ns_ = std::clamp<int64_t>(p99_ns_ - kLagAllowance, 0, kMaxWindow);
}

void SpinWindow::record_lateness(int64_t lateness_ns) {
  lateness_ns = std::max<int64_t>(0, lateness_ns);
  if (!probe_due() || lateness_ns >= p75_ns_) {
    quick_probes_ = 0;  // a plain sleep, or a probe that woke as late as the ring: the row ends
  } else {
    probes_[quick_probes_++] = lateness_ns;
    if (quick_probes_ == kProbesToRecover) {
      // The host wakes quicker than the ring says: start again from these probes alone.
      quick_probes_ = 0;
      std::copy(probes_.begin(), probes_.end(), samples_.begin());
      count_ = kProbesToRecover;
      spun_since_sample_ = 0;
      const int64_t slowest = *std::max_element(probes_.begin(), probes_.end());
      set_quantiles(slowest, slowest);
      return;
    }
  }
  samples_[count_ % kSamples] = lateness_ns;
  ++count_;
  spun_since_sample_ = 0;
  const bool early = count_ < kRefreshEvery && count_ >= kFirstRefresh &&
                     (count_ & (count_ - 1)) == 0;  // 16, 32, 64
  if (!early && count_ % kRefreshEvery != 0) return;
  // The quantiles of the ring (or of the samples so far while it fills): nth_element on a copy,
  // 4 KB every kRefreshEvery sleeps.
  const size_t n = std::min(count_, kSamples);
  std::array<int64_t, kSamples> sorted = samples_;
  const auto end = sorted.begin() + static_cast<std::ptrdiff_t>(n);
  const size_t high = std::min(n - 1, early ? n * 9 / 10 : n * 99 / 100);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(high), end);
  const int64_t p99 = sorted[high];
  const size_t mid = n * 3 / 4;  // <= high: nth_element left the lower ones before it
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(mid),
                   sorted.begin() + static_cast<std::ptrdiff_t>(high));
  set_quantiles(mid < high ? sorted[mid] : p99, p99);
}

}  // namespace knee::engine
