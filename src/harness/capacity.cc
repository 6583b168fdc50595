#include "harness/capacity.h"

#include <utility>

#include "report/analyse.h"

namespace knee::harness {

analysis::CapacityMeasure capacity_measure(engine::LoadOptions base,
                                           const engine::RunControl& control,
                                           CapacityRunStart on_run_start) {
  return [base = std::move(base), &control, on_run_start = std::move(on_run_start)](
             double rate, int repeat) -> core::Result<analysis::CapacityMeasurement> {
    analysis::CapacityMeasurement m;
    if (control.interrupt != nullptr && control.interrupt->load()) {
      m.interrupted = true;
      return m;
    }
    if (on_run_start) on_run_start(rate, repeat);
    engine::LoadOptions o = base;
    o.rate_rps = rate;
    auto result = engine::run_load(o, control);
    if (!result) return result.status();
    m.figures = report::threshold_input(report::run_figures(*result));
    m.achieved_rps = result->achieved_rate_rps();
    m.scheduled_rps = result->scheduled_rate_rps();
    m.interrupted = result->interrupted;
    const analysis::SaturationVerdict v = report::client_side_verdict(*result);
    m.limit = v.resource;
    m.limit_detail = v.detail;
    m.client_thread_cpu_demand = result->stats.max_thread_cpu_demand;
    return m;
  };
}

}  // namespace knee::harness
