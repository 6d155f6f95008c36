#pragma once
// What a run configuration implies for the step: the step driver's options and the warm-up.
// The run verbs build their drivers from these, and the placement planner predicts the step
// they would run (core/planner/step_model.hpp).
#include "core/run/run_config.hpp"
#include "core/runtime/driver/driver_options.hpp"

namespace asteria::run {

// The warm-up: --warmup-steps if given, otherwise until the first refresh is published (at least
// `at_least` steps), so that measured steps are steady state. A derived warm-up longer than both
// 1000 steps and 10 x --steps is an InputError naming --staleness (a huge S would otherwise run
// for ages before the first measured step).
int warmup_steps_of(const RunConfig& spec, int at_least = 0);

// The step driver's options the spec implies (numerics, placement, staleness, publication, the
// failure policies of its hyperparameters) with `warmup_steps` and the device time model.
runtime::DriverOptions driver_options(const RunConfig& spec, int warmup_steps, runtime::DeviceSeconds device_seconds);

}  // namespace asteria::run
