#pragma once
// The one loop of every verb that runs steps (synth, sim on each simulated unit, train): before
// the first step the driver's plan goes to the trace and the report, then each step runs with
// progress after it, then finish() settles the run (state moves waited for, refreshes in flight
// finished and counted, a deferred step's figures added) and the report takes the driver's
// history, its summary and the refresh failures. The verbs keep what is theirs: how a step's
// batch is prepared and what is reported beside it.
#include <functional>
#include <string>

#include "apps/asteria/progress.hpp"
#include "apps/asteria/run_report.hpp"
#include "apps/asteria/run_trace.hpp"
#include "core/runtime/driver/step_driver.hpp"

namespace asteria::cli {

struct StepHooks {
  std::function<void(int step)> before;  // prepares step `step` (empty: nothing to prepare)
  // After the step: what progress shows beside its figures ("loss 2.31"); empty: nothing.
  std::function<std::string(int step, const runtime::StepRecord& record)> after;
};

// Hands unit `unit`'s plan to `trace` (with where host-placed optimizer ops are computed) and,
// when `out` is given, the plan as text to the report.
void start_run(const runtime::StepDriver<float>& driver, TraceSession& trace, int unit, plan::NumericsSite site,
               RunReport* out);

// Runs steps `first` .. `last` (none when first > last) with progress after each (`progress`
// null: none shown), then finish(); when `out` is given, its records, summary and refresh
// failures are the driver's.
void run_steps(runtime::StepDriver<float>& driver, int first, int last, Progress* progress, const StepHooks& hooks,
               RunReport* out);

}  // namespace asteria::cli
