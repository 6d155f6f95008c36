// One `asteria synth` configuration: the platform, the synthetic stack and the step driver, the
// warm-up and measured steps, the report.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "apps/asteria/memory_check.hpp"
#include "apps/asteria/replay_metadata.hpp"
#include "apps/asteria/progress.hpp"
#include "apps/asteria/run_loop.hpp"
#include "apps/asteria/run_trace.hpp"
#include "apps/asteria/synth.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "core/runtime/driver/warmup.hpp"
#include "hwmodels/energy.hpp"
#include "hwmodels/profile_loader.hpp"
#include "traces/busy_meter.hpp"

namespace asteria::cli {

RunReport run_synth(const RunConfig& s, const std::string& name, std::ostream& progress_out) {
  validate_synth(s);
  const RunConfig& spec = s;
  if (spec.model) {
    // Before the stack is built: its weights, gradients and state (the state within the
    // budgets the store may fill), or data-free the blocks' bookkeeping, fit in memory.
    StackRun run;
    run.numerics = spec.numerics;
    run.optimizer = spec.optimizer;
    run.hp = spec.hp;
    run.state_budget = static_cast<double>(spec.device_budget) + static_cast<double>(spec.host_budget);
    run.model_source = *spec.model;
    check_stack_memory(workload::find_model_config(*spec.model), run);
  }
  const auto wall_start = std::chrono::steady_clock::now();
  // Refresh workers already run in parallel with each other: one BLAS thread each keeps them
  // from oversubscribing the cores (OPENBLAS_NUM_THREADS=1).
  openblas_set_num_threads(1);
  RunReport out;
  out.spec = spec;
  out.name = name;
  out.hw = spec.hw.value_or("");
  out.model = spec.model.value_or("synthetic stack");
  // Unless chosen, the warm-up lasts at least until the first refresh is published, so measured
  // steps are steady state (updates use a preconditioner; refresh numerics start from a real basis).
  const int warmup = warmup_steps_of(spec, 2);
  out.warmup_steps = warmup;
  const int total = warmup + spec.steps;
  TraceSession trace(spec, 1, warmup + 1, total);
  // With a profile that gives power, the run's energy from its resources' busy time over the
  // measured steps, as sim reports it (the device's time modelled, the host workers' their own).
  std::optional<hw::HardwareProfile> profile;
  if (spec.hw) profile = hw::load_profile(hw::find_profile(*spec.hw));
  std::optional<traces::BusyMeter> meter;
  if (profile && profile->power.has_power()) meter.emplace(0, warmup + 1, trace.sink(0));
  RunPlatform platform(spec, device_time(s), meter ? &*meter : trace.sink(0));
  out.platform = platform.description();
  out.host_workers = platform.host_workers();
  const runtime::SyntheticModelSpec stack = model_spec(s);
  runtime::SyntheticModel<float> model(stack, spec.numerics);
  for (std::size_t l = 0; l < model.layer_count(); ++l)
    out.parameters += static_cast<std::size_t>(model.layer(l).rows * model.layer(l).cols);

  const runtime::DriverOptions options = driver_options(spec, warmup, device_seconds(s));
  runtime::StepDriver<float> driver(platform.get(), model, spec.optimizer, spec.hp, options);
  start_run(driver, trace, 0, options.numerics_site, &out);
  out.state_bytes = driver.state_bytes();
  out.blocks = driver.block_count();
  out.capacity_bytes = {spec.device_budget, spec.host_budget, spec.nvme_budget};
  Progress progress(progress_out, "synth" + (name.empty() ? std::string() : " " + name), spec.progress, total);
  run_steps(driver, 1, total, &progress, {}, &out);
  if (meter && out.summary.steps > 0) out.energy = hw::unit_energy(*profile, out.summary.total_step_s, meter->busy(), 1);
  if (trace.enabled() && spec.out) {
    out.trace = trace.write(*spec.out, replay_metadata(spec, {"synth", out.model}, stack.layers, out.host_workers,
                                                       warmup, 0, /*state_budgets=*/true, model.pass()));
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace asteria::cli
