// `knee capacity`'s measurements: the step function analysis::find_capacity calls (a pure search,
// analysis/capacity.h), made of real runs. Each call is one engine::run_load of the base load at
// the step's open-loop rate, its figures turned into what the SLOs are checked on
// (report::threshold_input of report::run_figures, the same figures `knee run --threshold`
// checks).
#pragma once

#include <functional>

#include "analysis/capacity.h"
#include "engine/load.h"

namespace knee::harness {

// Called before each run with its rate (req/s) and its repeat at that step (from 0).
using CapacityRunStart = std::function<void(double rate_rps, int repeat)>;

// The measure function for analysis::find_capacity. `base` is an open-loop load (rate_rps set;
// each run replaces it with the step's rate); `control` is passed to every run and must outlive
// the function; `on_run_start` (may be empty) is kept in it, so what it captures must outlive it
// too. With control.interrupt set, a call runs nothing and returns a measurement marked
// interrupted, so the search stops; set during a run, the run ends early and its measurement is
// marked interrupted. Errors: run_load's (kUnavailable for a target that refuses or does not
// answer, the OS refusing sockets); a run that errs stops the search with them.
// Thread-safety: call the function from one thread at a time (each call blocks in run_load).
analysis::CapacityMeasure capacity_measure(engine::LoadOptions base,
                                           const engine::RunControl& control,
                                           CapacityRunStart on_run_start = {});

}  // namespace knee::harness
