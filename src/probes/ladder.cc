// The clock, the statistics of a rung, and the in-process rungs of the latency ladder.
#include "probes/ladder.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "probes/use.h"

namespace knee::probes {
namespace {

using core::Clock;
using core::Result;
using core::Status;

// A shipment-tracking record of 449 bytes, close to the seed's 453-byte document.
constexpr std::string_view kJsonDocument =
    R"({"no":"G1-20417","state":"at transit hub","zone":"35","step":4,"weight_kg":12.5,)"
    R"("insured":true,"sender":{"name":"Asha Rao","city":"Mumbai","postcode":"400001"},)"
    R"("recipient":{"name":"Jonas Berg","city":"Frankfurt","postcode":"60311"},"events":[)"
    R"({"at":"2026-11-27T08:15:00Z","where":"Mumbai","what":"picked up"},)"
    R"({"at":"2026-11-27T19:40:00Z","where":"Mumbai","what":"sorted"},)"
    R"({"at":"2026-11-29T02:30:00Z","where":"Frankfurt","what":"at transit hub"}]})";

constexpr int kMapEntries = 1000;
constexpr int kSortCount = 1000;
constexpr int64_t kHashBytes = 1024;

// An empty function the compiler may neither inline nor delete: the asm statement is a side
// effect it cannot see through.
[[gnu::noinline]] void do_nothing() { asm volatile(""); }

// 64-bit LCG (Knuth's MMIX constants): cheap pseudo-random numbers off the critical path.
inline uint64_t lcg_next(uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state;
}

std::string batch_words(int64_t batch) {
  return batch == 1 ? "each operation timed alone"
                    : fmt::format(
                          "timed in batches of {} back-to-back operations, per-operation "
                          "time = batch time / {}",
                          batch, batch);
}

Rung make_rung(const Samples& s, int repeats, std::string id, std::string name,
               std::string method) {
  Rung r = summarise(s, repeats);
  r.group = "inprocess";
  r.id = std::move(id);
  r.name = std::move(name);
  r.method = fmt::format("{}; {}", method, batch_words(r.batch));
  return r;
}

std::string size_words(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0) {
    return fmt::format("{} GiB", bytes >> 30);
  }
  return bytes >= (int64_t{1} << 20) ? fmt::format("{} MiB", bytes >> 20)
                                     : fmt::format("{} KiB", bytes >> 10);
}

// Random dependent reads from an array of 2^k uint64_t: each address is the previous value read
// plus a pseudo-random offset, so reads cannot overlap or be prefetched and each one pays the full
// latency of wherever the array lives. `label` is "cache" or "DRAM".
Result<Rung> chase(const TimingLimits& limits, int64_t bytes, std::string id,
                   std::string_view label, std::string_view where) {
  const size_t n = static_cast<size_t>(bytes) / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> array(new (std::nothrow) uint64_t[n]);
  if (array == nullptr) {
    return Status::io_error(
        fmt::format("allocating the {} array of {} bytes: out of memory", label, bytes));
  }
  for (size_t k = 0; k < n; ++k) array[k] = k * 0x9E3779B97F4A7C15ULL;  // touches every page
  const uint64_t mask = n - 1;
  uint64_t state = 1;
  uint64_t index = 0;
  const Samples s = measure(limits, [&](uint64_t) {
    index = (array[index] + (lcg_next(state) >> 20)) & mask;
    keep(index);
  });
  return make_rung(
      s, limits.repeats, std::move(id),
      fmt::format("random read from a {} array ({})", size_words(bytes), label),
      fmt::format("dependent random reads of 8 bytes from a {} array ({}): the next address is the "
                  "value read plus a pseudo-random offset, so reads cannot overlap; 4 KiB pages "
                  "(no huge pages requested)",
                  size_words(bytes), where));
}

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

ClockInfo measure_clock() {
  ClockInfo info;
  info.getres_ns = core::steady_clock_resolution().count();
  int64_t smallest = std::numeric_limits<int64_t>::max();
  const core::TimePoint start = Clock::now();
  for (int k = 0; k < 100'000; ++k) {
    const core::TimePoint a = Clock::now();
    const core::TimePoint b = Clock::now();
    const int64_t d = core::elapsed_ns(a, b);
    if (d > 0 && d < smallest) smallest = d;
    if ((k & 1023) == 0 && b - start > std::chrono::milliseconds(50)) break;
  }
  info.smallest_step_ns = smallest == std::numeric_limits<int64_t>::max() ? 0 : smallest;
  constexpr int kCalls = 10'000;
  const core::TimePoint t0 = Clock::now();
  for (int k = 0; k < kCalls; ++k) keep(Clock::now());
  const core::TimePoint t1 = Clock::now();
  info.now_cost_ns = static_cast<double>(core::elapsed_ns(t0, t1)) / kCalls;
  info.target_sample_ns =
      std::max<int64_t>(1000, 100 * std::max(info.smallest_step_ns, info.getres_ns));
  return info;
}

Rung summarise(const Samples& s, int repeats) {
  Rung r;
  const double batch = static_cast<double>(s.batch);
  r.batch = s.batch;
  r.samples = s.batch_ns.count();
  r.ops = r.samples * s.batch;
  r.repeats = repeats;
  r.median_ns = static_cast<double>(s.batch_ns.value_at_percentile(50)) / batch;
  r.p99_ns = static_cast<double>(s.batch_ns.value_at_percentile(99)) / batch;
  r.min_ns = static_cast<double>(s.batch_ns.min()) / batch;
  r.best_ns = s.repeat_mean_ns.empty()
                  ? 0
                  : *std::min_element(s.repeat_mean_ns.begin(), s.repeat_mean_ns.end());
  r.ops_per_s = r.median_ns > 0 ? 1e9 / r.median_ns : 0;
  return r;
}

Result<std::vector<Rung>> run_inprocess(const LadderOptions& options) {
  if (!is_power_of_two(options.dram_bytes) || options.dram_bytes < (int64_t{1} << 20)) {
    return Status::invalid_argument(fmt::format(
        "DRAM array of {} bytes: need a power of two of at least 1 MiB", options.dram_bytes));
  }
  if (!is_power_of_two(options.cache_bytes) || options.cache_bytes < 64) {
    return Status::invalid_argument(fmt::format(
        "cache array of {} bytes: need a power of two of at least 64", options.cache_bytes));
  }
  const TimingLimits& limits = options.timing;
  const int repeats = limits.repeats;
  std::vector<Rung> rungs;

  {
    std::unordered_map<uint64_t, uint64_t> map;
    for (uint64_t k = 0; k < kMapEntries; ++k) map.emplace(k, 2 * k);
    std::array<uint64_t, 1024> keys{};
    uint64_t state = 7;
    for (uint64_t& k : keys) k = (lcg_next(state) >> 33) % kMapEntries;
    const Samples s = measure(limits, [&](uint64_t i) {
      const auto it = map.find(keys[i & 1023]);
      keep(it->second);
    });
    rungs.push_back(make_rung(s, repeats, "hash_map_lookup",
                              "hash-map lookup, key present (1,000 entries)",
                              "std::unordered_map<uint64_t, uint64_t>::find of keys drawn from a "
                              "list of 1,024 pseudo-random present keys"));
  }
  {
    const Samples s = measure(limits, [](uint64_t) { do_nothing(); });
    rungs.push_back(make_rung(s, repeats, "empty_call", "call of a function that does nothing",
                              "a direct call of a [[gnu::noinline]] function whose body is an "
                              "empty asm statement"));
  }
  {
    EVP_MD_CTX* raw_ctx = EVP_MD_CTX_new();
    if (raw_ctx == nullptr) return Status::io_error("EVP_MD_CTX_new: out of memory");
    const std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(raw_ctx, EVP_MD_CTX_free);
    std::array<unsigned char, kHashBytes> data{};
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<unsigned char>(k);
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    const EVP_MD* sha256 = EVP_sha256();
    bool ok = true;
    const Samples s = measure(limits, [&](uint64_t) {
      unsigned int len = 0;
      ok &= EVP_DigestInit_ex(ctx.get(), sha256, nullptr) == 1 &&
            EVP_DigestUpdate(ctx.get(), data.data(), data.size()) == 1 &&
            EVP_DigestFinal_ex(ctx.get(), digest.data(), &len) == 1;
      keep(digest);
    });
    if (!ok) return Status::io_error("SHA-256 of 1 KiB: an OpenSSL EVP_Digest call failed");
    rungs.push_back(make_rung(s, repeats, "sha256_1kib", "SHA-256 of 1 KiB (OpenSSL EVP)",
                              "EVP_DigestInit_ex + EVP_DigestUpdate + EVP_DigestFinal_ex on one "
                              "reused EVP_MD_CTX"));
  }
  {
    const std::string document(kJsonDocument);
    const Samples s = measure(limits, [&](uint64_t) {
      const nlohmann::json j = nlohmann::json::parse(document);
      keep(j.size());
    });
    rungs.push_back(make_rung(
        s, repeats, "json_parse", fmt::format("JSON parse of a {}-byte document", document.size()),
        "nlohmann::json::parse of a shipment-tracking record (objects, an array of 3 events, "
        "strings, numbers), building the whole DOM; the document is freed inside the timer"));
  }
  {
    std::vector<int> reversed(kSortCount);
    for (int k = 0; k < kSortCount; ++k) reversed[static_cast<size_t>(k)] = kSortCount - k;
    std::vector<int> work(reversed.size());
    const Samples s = measure(limits, [&](uint64_t) {
      std::copy(reversed.begin(), reversed.end(), work.begin());
      std::sort(work.begin(), work.end());
      keep(work.data());
    });
    rungs.push_back(make_rung(s, repeats, "sort_1000", "sort of 1,000 integers in reverse order",
                              "std::sort of 1,000 ints, after copying them in reverse order into "
                              "the buffer (the 4 KB copy is inside the timer)"));
  }
  for (const bool dram : {false, true}) {
    Result<Rung> rung =
        dram ? chase(limits, options.dram_bytes, "dram_read", "DRAM", "far beyond the caches")
             : chase(limits, options.cache_bytes, "cache_read", "cache", "it fits in the L1 cache");
    if (!rung) return rung.status();
    rungs.push_back(std::move(*rung));
  }
  {
    std::mutex mutex;
    uint64_t counter = 0;
    const Samples s = measure(limits, [&](uint64_t) {
      mutex.lock();
      ++counter;
      mutex.unlock();
      keep(counter);
    });
    rungs.push_back(make_rung(s, repeats, "mutex_lock_unlock", "uncontended mutex lock + unlock",
                              "std::mutex lock(), increment a counter, unlock(), on one thread"));
  }
  {
    const Samples s = measure(limits, [](uint64_t) { keep(::syscall(SYS_getppid)); });
    rungs.push_back(make_rung(s, repeats, "syscall", "trivial system call (getppid)",
                              "syscall(SYS_getppid): enters and leaves the kernel, no work; not "
                              "cached by the C library"));
  }
  return rungs;
}

Result<LadderRun> run_ladder(const FsReader& fs, LadderOptions options,
                             const std::vector<std::string>& groups,
                             const std::function<void(const char*)>& on_group) {
  const auto wants = [&](const char* g) {
    return std::find(groups.begin(), groups.end(), g) != groups.end();
  };
  const auto say = [&](const char* what) {
    if (on_group) on_group(what);
  };
  if (wants("disk")) {
    if (Result<DiskTarget> t = describe_dir(fs, options.dir); !t) return t.status();
  }
  LadderRun run;
  run.host = read_host_context(fs);
  run.clock = measure_clock();
  options.timing.target_sample_ns = run.clock.target_sample_ns;
  run.warnings = run.host.warnings;
  const UseSnapshot mem = take_snapshot(fs, std::nullopt, core::Clock::now());
  if (mem.mem_available_bytes) {
    const int64_t quarter = static_cast<int64_t>(*mem.mem_available_bytes / 4);
    int64_t bytes = options.dram_bytes;
    while (bytes > quarter && bytes > (int64_t{1} << 20)) bytes /= 2;
    if (bytes < options.dram_bytes) {
      run.warnings.push_back(fmt::format(
          "the DRAM array is {} MiB, not 1 GiB: only {} MiB of memory is available; below "
          "the last-level cache size the 'DRAM' rung measures a cache",
          bytes >> 20, *mem.mem_available_bytes >> 20));
      options.dram_bytes = bytes;
    }
  }
  if (wants("inprocess")) {
    say("in-process operations");
    Result<std::vector<Rung>> r = run_inprocess(options);
    if (!r) return r.status();
    run.rungs.insert(run.rungs.end(), r->begin(), r->end());
  }
  if (wants("sqlite")) {
    say("SQLite reads");
    Result<SqliteLadder> r = run_sqlite(options);
    if (!r) return r.status();
    run.rungs.insert(run.rungs.end(), r->rungs.begin(), r->rungs.end());
    run.sqlite = std::move(*r);
  }
  if (wants("disk")) {
    say("durable writes");
    Result<DiskLadder> r = run_disk(fs, options);
    if (!r) return r.status();
    run.rungs.insert(run.rungs.end(), r->rungs.begin(), r->rungs.end());
    run.warnings.insert(run.warnings.end(), r->target.warnings.begin(), r->target.warnings.end());
    run.disk = std::move(*r);
  }
  if (wants("loopback")) {
    say("loopback TCP");
    Result<std::vector<Rung>> r = run_loopback(options);
    if (!r) return r.status();
    run.rungs.insert(run.rungs.end(), r->begin(), r->end());
  }
  std::stable_sort(run.rungs.begin(), run.rungs.end(),
                   [](const Rung& a, const Rung& b) { return a.median_ns < b.median_ns; });
  run.options = std::move(options);
  return run;
}

}  // namespace knee::probes
