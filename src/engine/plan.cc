#include "engine/plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "core/clock.h"

namespace knee::engine {

namespace {

// One step: every scenario of `level` at once. Fills `out[s]` and returns the first failure.
std::optional<core::Status> run_step(const Plan& plan, const std::vector<LoadOptions>& level,
                                     const PlanControl& control,
                                     std::vector<core::RunResult>& out) {
  RunControl first;  // scenario 0's: the sampling hooks and the live progress
  first.clock = control.clock;
  std::optional<core::ResourceUse> use;
  std::atomic<bool> sampling{false};
  if (control.observer != nullptr) {
    first.on_measure_start = [&] {
      control.observer->start();
      sampling.store(true);
    };
    first.on_measure_end = [&] {
      use = control.observer->stop();
      sampling.store(false);
    };
  }
  first.on_progress = control.on_progress;
  first.on_interval = control.on_interval;
  std::vector<std::optional<core::Result<core::RunResult>>> outcomes(level.size());
  if (level.size() == 1) {
    first.interrupt = control.interrupt;
    outcomes[0].emplace(run_load(level[0], first));
  } else {
    // One stop flag for all: set when the user interrupts or when a scenario fails.
    std::atomic<bool> stop{false};
    first.interrupt = &stop;
    RunControl others;
    others.clock = control.clock;
    others.interrupt = &stop;
    std::atomic<size_t> running{level.size()};
    std::atomic<bool> failed{false};
    {
      std::vector<std::jthread> threads;
      threads.reserve(level.size());
      for (size_t s = 0; s < level.size(); ++s) {
        threads.emplace_back([&, s] {
          auto r = run_load(level[s], s == 0 ? first : others);
          if (!r) failed.store(true);
          outcomes[s].emplace(std::move(r));
          running.fetch_sub(1);
        });
      }
      while (running.load() > 0) {
        if (failed.load() || (control.interrupt != nullptr && control.interrupt->load())) {
          stop.store(true);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }  // joins
  }
  // A run that ended before its measured phase did (a failure) leaves the sampler running.
  if (sampling.load()) use = control.observer->stop();
  out.clear();
  for (size_t s = 0; s < level.size(); ++s) {
    core::Result<core::RunResult>& r = *outcomes[s];
    if (!r) {
      if (s < plan.scenario_names.size()) {
        return r.status().with_context("scenario " + plan.scenario_names[s]);
      }
      return r.status();
    }
    out.push_back(std::move(r).value());
  }
  if (!out.empty() && use) out[0].use = std::move(use);
  return std::nullopt;
}

}  // namespace

core::Result<Plan> sweep_plan(const LoadOptions& base, const std::vector<int64_t>& levels,
                              bool by_rate, int repeats) {
  Plan plan;
  plan.repeats = repeats;
  for (int64_t level : levels) {
    LoadOptions o = base;
    if (by_rate) {
      o.rate_rps = static_cast<double>(level);
    } else {
      o.rate_rps.reset();
      o.connections = static_cast<int>(level);
    }
    o.threads = std::min(base.threads, o.connection_slots());
    if (core::Status s = o.validate(); !s) {
      if (s.field() == "connections") return s.with_field("levels");
      if (s.field() == "rate_rps") return s.with_field("rates");
      return s;
    }
    plan.levels.push_back({std::move(o)});
  }
  return plan;
}

double plan_run_slot_s(const Plan& plan) {
  double longest = 0;
  for (const auto& level : plan.levels) {
    for (const LoadOptions& o : level) {
      longest = std::max(longest, std::chrono::duration<double>(o.warmup + o.measured_phase() +
                                                                o.grace_or_default())
                                      .count());
    }
  }
  return std::ceil(longest + 2.0);
}

core::Status split_plan(Plan& plan, int index, int count) {
  for (auto& level : plan.levels) {
    for (LoadOptions& o : level) {
      auto share = part_of(o, index, count);
      if (!share) return share.status();
      o = std::move(share).value();
    }
  }
  return core::Status::success();
}

void aim_plan(Plan& plan, const http::Url& url, bool verify_tls) {
  for (auto& level : plan.levels) {
    for (LoadOptions& o : level) {
      o.request.url = url;
      o.tls.verify = verify_tls && o.tls.verify;
    }
  }
}

namespace {

// Sleeps until the wall clock reads `epoch_s`, in steps short enough to notice an interrupt.
void wait_until_epoch(double epoch_s, const std::atomic<bool>* interrupt) {
  for (;;) {
    const double now = core::wall_clock_s();
    if (now >= epoch_s || (interrupt != nullptr && interrupt->load())) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.05, epoch_s - now)));
  }
}

}  // namespace

PlanResult run_plan(const Plan& plan, const PlanControl& control) {
  PlanResult result;
  const int repeats = std::max(1, plan.repeats);
  core::Nanos total{0};
  for (const auto& level : plan.levels) {
    if (!level.empty()) total += (level[0].warmup + level[0].duration) * repeats;
  }
  for (size_t l = 0; l < plan.levels.size(); ++l) {
    const std::vector<LoadOptions>& level = plan.levels[l];
    std::vector<std::vector<core::RunResult>> by_scenario(level.size());
    bool stopped = false;
    for (int k = 0; k < repeats && !stopped; ++k) {
      const core::Nanos planned =
          level.empty() ? core::Nanos(0) : level[0].warmup + level[0].duration;
      total -= planned;
      if (control.on_run_start) {
        control.on_run_start(PlanPosition{l, plan.levels.size(), k, repeats, planned, total});
      }
      if (plan.start_at_epoch_s) {
        const double index =
            static_cast<double>(l * static_cast<size_t>(repeats) + static_cast<size_t>(k));
        wait_until_epoch(*plan.start_at_epoch_s + index * plan.run_slot_s, control.interrupt);
      }
      if (control.gate) {
        if (auto stop =
                control.gate(PlanPosition{l, plan.levels.size(), k, repeats, planned, total})) {
          result.failed = std::move(stop);
          return result;
        }
      }
      std::vector<core::RunResult> step;
      if (auto failure = run_step(plan, level, control, step)) {
        result.failed = std::move(failure);
        return result;
      }
      bool interrupted = false;
      for (size_t s = 0; s < step.size(); ++s) {
        interrupted = interrupted || step[s].interrupted;
        by_scenario[s].push_back(std::move(step[s]));
      }
      if (interrupted) {
        result.interrupted = true;
        stopped = true;
      }
    }
    if (result.interrupted && plan.levels.size() > 1) return result;  // the level is incomplete
    if (control.on_level_done) control.on_level_done(l, by_scenario);
    result.levels.push_back(std::move(by_scenario));
    if (result.interrupted) return result;
  }
  return result;
}

}  // namespace knee::engine
