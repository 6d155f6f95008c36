#pragma once
// Where the model's own memory (weights, gradients, activations) sits during a step, per tier,
// given the schedule's choices (core/plan/schedule.hpp): what a simulation reserves before the
// optimizer state is placed.
//
//   weights      the master weights (parameter_bytes) rest on tiers.weights; off the device, the
//                device holds prefetch_depth fetch buffers of the largest tensor's compute copy;
//                fsdp: 1 / data_parallel_ranks of them rest, and the device holds prefetch_depth
//                + 1 gathered layers (of the largest tensor);
//   gradients    a layer's gradient lives from its backward to its hook (the update consumes
//                it); across micro-batches of the horizontal schedule every layer's gradient is
//                accumulated, so with M > 1 the whole gradient (gradient_bytes) rests on
//                tiers.gradients (zero2, fsdp: 1 / data_parallel_ranks of it); otherwise only the deferred fraction does (kept for the next
//                forward, where the update reads it: `update_site`). The device holds two of the largest tensor's gradient (one being
//                produced, one being sent or updated);
//   activations  the saved activations of the micro-batches between their forward and backward:
//                one micro-batch in the horizontal schedule, all of them in the vertical one;
//                without recompute they stay on the device; with recompute (activation
//                checkpointing) only the checkpoints (each decoder layer's input) are kept, on
//                tiers.checkpoints, and the device holds one layer's full activations of one
//                micro-batch for the recompute, plus, when the checkpoints rest elsewhere,
//                prefetch_depth checkpoint buffers of one micro-batch.
#include <array>
#include <cstddef>

#include "core/plan/schedule.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::workload {

struct ModelMemory {
  std::array<std::size_t, platform::kTierCount> bytes{};  // per tier (platform::Tier order)
  std::size_t on(platform::Tier tier) const { return bytes[static_cast<std::size_t>(tier)]; }
};

// `update_site`: where most updates run (device or host), so where deferred gradients wait.
ModelMemory model_memory(const WorkloadModel& model, const plan::ScheduleOptions& schedule,
                         platform::Tier update_site = platform::Tier::device);

}  // namespace asteria::workload
