#include "core/run/driver_settings.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/common/error.hpp"
#include "core/runtime/driver/warmup.hpp"

namespace asteria::run {

int warmup_steps_of(const RunConfig& spec, int at_least) {
  if (spec.warmup_steps) return *spec.warmup_steps;
  const optim::Step first = runtime::first_publication_step(spec.optimizer, spec.hp, spec.staleness);
  const optim::Step longest = std::max<optim::Step>(1000, 10 * static_cast<optim::Step>(spec.steps));
  if (first > longest)
    throw InputError("command line", "--staleness",
                     "a warm-up of at most " + std::to_string(longest) +
                         " steps (the larger of 1000 and 10 x --steps) before the first measured step; at --staleness " +
                         std::to_string(spec.staleness) + " the first refresh is published at step " +
                         std::to_string(first) + " (give --warmup-steps to run that anyway)");
  return std::max(at_least, static_cast<int>(first));
}

runtime::DriverOptions driver_options(const RunConfig& spec, int warmup_steps, runtime::DeviceSeconds device_seconds) {
  runtime::DriverOptions o;
  o.numerics = spec.numerics;
  o.warmup_steps = warmup_steps;
  o.store.policy = spec.placement;
  o.planned_blocks = spec.planned_blocks;
  o.store.lookahead = spec.lookahead;
  o.service = runtime::service_options(spec.hp, spec.staleness, spec.publish);
  o.service.refresh_site = spec.refresh_on;
  o.device_seconds = std::move(device_seconds);
  o.share_refreshes = spec.share_refreshes;
  o.sync_period = spec.sync_period;
  o.schedule.parallelism = spec.parallelism;
  o.schedule.reduce_dtype = spec.reduce_dtype;
  o.schedule.bucket_bytes = static_cast<double>(spec.bucket_bytes);
  o.schedule.order = spec.schedule;
  o.schedule.micro_batches = spec.micro_batches;
  o.schedule.defer_fraction = spec.defer_fraction;
  o.schedule.prefetch_depth = spec.prefetch_depth;
  o.schedule.reshard_after_use = spec.reshard_after_use;
  o.schedule.tiers = spec.model_tiers;
  o.schedule.recompute_activations = spec.recompute_activations;
  // Computing values on the real backend, each hook's device launch computes every optimizer op
  // of the hook, host-placed ones too (the preconditioner service is single-threaded): their
  // time goes there, and the trace says so.
  if (spec.time != platform::TimeSource::simulated && spec.numerics == platform::Numerics::values)
    o.numerics_site = plan::NumericsSite::hook_launch;
  return o;
}

}  // namespace asteria::run
