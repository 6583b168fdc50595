// Live figures of a running load test, for a progress display (knee's progress line): how many
// responses have come back so far, the errors and the p99 of the measured phase so far.
//
// Who owns what: run_load() creates one WorkerLive per worker when RunControl::on_progress is
// set. Each worker publishes copies of its own counters and latency histogram into its WorkerLive
// every kPublishEvery, from its event loop between events (never per request: the hot path is
// unchanged). Cost: each publish copies the histogram's counts, ~270 KB, tens of us of the
// worker's time ten times a second; it happens only while a progress line is shown (stderr a
// terminal), never in pipes, CI or --quiet runs, whose numbers it cannot touch. The thread that
// called run_load() reads all of them every RunControl::progress_every and hands a LiveSnapshot to
// on_progress.
//
// Thread-safety: WorkerLive::publish() is called by its worker thread only and never blocks (a
// publish that finds the reader holding the lock is skipped and retried at the next tick);
// read_into() may be called from any thread. LiveSnapshot is a plain value.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "core/clock.h"
#include "core/histogram.h"
#include "core/run_stats.h"

namespace knee::engine {

// How often a worker publishes its figures (its loop wakes at least every 100 ms anyway).
inline constexpr core::Nanos kPublishEvery = std::chrono::milliseconds(100);

// Where a run is in its phases (load.h) when the snapshot was taken.
enum class LivePhase : uint8_t { kWarmup, kMeasure, kGrace };

// What a run has done so far, as last published by its workers (up to kPublishEvery old).
struct LiveSnapshot {
  LivePhase phase = LivePhase::kWarmup;
  core::Nanos elapsed{0};  // since the run started, warm-up included
  // Responses completed so far in every phase (warm-up included), any status: the display's
  // req/s is the difference of two snapshots over their elapsed time.
  uint64_t responses = 0;
  // Errors of the measured phase so far, every kind (core::RunStats::total_errors()).
  uint64_t errors = 0;
  // Successful responses of the measured phase so far and their latency percentiles, ns
  // (0 when none yet). Closed loop from the send, open loop from the intended send.
  int64_t latency_count = 0;
  int64_t p50_ns = 0;
  int64_t p99_ns = 0;
};

// One worker's published figures.
class WorkerLive {
 public:
  // Worker thread: copies the figures if the reader is not reading right now; returns whether it
  // did.
  bool publish(const core::RunStats& stats);
  // Any thread: adds this worker's last published figures to `snapshot` (responses, errors) and
  // its latency samples to `latency_ns`.
  void read_into(LiveSnapshot& snapshot, core::Histogram& latency_ns) const;

 private:
  mutable std::mutex mutex_;
  uint64_t responses_ = 0;
  uint64_t errors_ = 0;
  core::Histogram latency_ns_ = core::Histogram::for_latency();
};

}  // namespace knee::engine
