// hlog_tool: knee's side of tests/report/java_compat.sh, which checks knee's HdrHistogram interval
// logs against HdrHistogram's Java reader and writer (tests/report/java/HlogCheck.java).
//
//   hlog_tool write LOG [SEED]       writes a log of a seeded latency distribution (ns): 10
//                                    one-second intervals of 5,000 samples, every third tagged
//                                    "slow"
//   hlog_tool values FILE [SEED] [N] writes N (default 10,000) seeded latencies (ns), one per line
//   hlog_tool read LOG               reads LOG, merges every interval (all tags) and prints total
//                                    count, max, p50, p99, p99.9, one per line (HlogCheck's
//                                    figures)
//
// Exit codes: 0 ok, 1 failure (message on stderr), 2 usage.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/histogram.h"
#include "report/hlog.h"

namespace {

using knee::core::Histogram;

constexpr int64_t kOneHourNs = 3'600'000'000'000;

// Latency-like values in ns: 90% around 200 us, 10% around 20 ms with a long tail.
class LatencySource {
 public:
  explicit LatencySource(uint64_t seed) : rng_(seed) {}
  int64_t next() {
    const double v = slow_(rng_) ? slow_path_(rng_) : fast_path_(rng_);
    return std::clamp<int64_t>(std::llround(v), 1, kOneHourNs);
  }

 private:
  std::mt19937_64 rng_;
  std::bernoulli_distribution slow_{0.1};
  std::lognormal_distribution<double> fast_path_{std::log(200e3), 0.5};
  std::lognormal_distribution<double> slow_path_{std::log(20e6), 1.0};
};

int write_log(const std::string& path, uint64_t seed) {
  std::ofstream out(path);
  if (!out) {
    std::cerr << "hlog_tool: cannot create " << path << '\n';
    return 1;
  }
  LatencySource source(seed);
  knee::report::HlogWriter writer(out, 1'700'000'000.123);
  Histogram interval = Histogram::for_latency();
  for (int i = 0; i < 10; ++i) {
    interval.reset();
    for (int k = 0; k < 5'000; ++k) interval.record(source.next());
    const knee::core::Status s =
        writer.write_interval(i, 1.0, interval, i % 3 == 2 ? "slow" : std::string_view{});
    if (!s) {
      std::cerr << "hlog_tool: " << s.message() << '\n';
      return 1;
    }
  }
  out.close();
  if (!out) {
    std::cerr << "hlog_tool: writing " << path << " failed\n";
    return 1;
  }
  return 0;
}

int write_values(const std::string& path, uint64_t seed, long n) {
  std::ofstream out(path);
  LatencySource source(seed);
  for (long i = 0; i < n; ++i) out << source.next() << '\n';
  out.close();
  if (!out) {
    std::cerr << "hlog_tool: writing " << path << " failed\n";
    return 1;
  }
  return 0;
}

int read_log(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "hlog_tool: cannot open " << path << '\n';
    return 1;
  }
  auto intervals = knee::report::read_hlog(in);
  if (!intervals) {
    std::cerr << "hlog_tool: " << path << ": " << intervals.status().message() << '\n';
    return 1;
  }
  if (intervals->empty()) {
    std::cerr << "hlog_tool: no interval histogram in " << path << '\n';
    return 1;
  }
  const Histogram total = knee::report::merge_intervals(*intervals);
  std::cout << total.count() << '\n'
            << total.max() << '\n'
            << total.value_at_percentile(50.0) << '\n'
            << total.value_at_percentile(99.0) << '\n'
            << total.value_at_percentile(99.9) << '\n';
  return 0;
}

int usage() {
  std::cerr << "usage: hlog_tool write LOG [SEED] | values FILE [SEED] [N] | read LOG\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  const uint64_t seed = args.size() >= 3 ? std::stoull(args[2]) : 42;
  if (args[0] == "write" && (args.size() == 2 || args.size() == 3)) return write_log(args[1], seed);
  if (args[0] == "values" && args.size() >= 2 && args.size() <= 4) {
    return write_values(args[1], seed, args.size() == 4 ? std::stol(args[3]) : 10'000);
  }
  if (args[0] == "read" && args.size() == 2) return read_log(args[1]);
  return usage();
}
