#include "core/workload/model_memory.hpp"

#include <algorithm>

namespace asteria::workload {

ModelMemory model_memory(const WorkloadModel& model, const plan::ScheduleOptions& schedule, platform::Tier update_site) {
  using platform::Tier;
  ModelMemory m;
  auto add = [&m](Tier tier, double bytes) { m.bytes[static_cast<std::size_t>(tier)] += static_cast<std::size_t>(bytes); };
  const auto depth = static_cast<double>(std::max(1, schedule.prefetch_depth));
  const auto micro_batches = static_cast<double>(std::max(1, schedule.micro_batches));
  double largest_tensor = 0.0;
  for (const WeightSpec& w : model.weights) largest_tensor = std::max(largest_tensor, static_cast<double>(w.elements()));
  const auto activation_element = static_cast<double>(model.config.activation_bytes);
  const double gradient_element =
      model.totals.parameters > 0
          ? static_cast<double>(model.totals.gradient_bytes) / static_cast<double>(model.totals.parameters)
          : 0.0;

  // Sharded among data-parallel ranks: fsdp's weights and zero2's and fsdp's gradients.
  const double ranks = std::max(1, schedule.data_parallel_ranks);
  const double weight_shards = schedule.parallelism == plan::Parallelism::fsdp ? ranks : 1.0;
  const double gradient_shards = plan::shards_gradients(schedule.parallelism) ? ranks : 1.0;

  add(schedule.tiers.weights, static_cast<double>(model.totals.parameter_bytes) / weight_shards);
  if (schedule.tiers.weights != Tier::device) add(Tier::device, depth * largest_tensor * activation_element);
  // fsdp: the layers gathered at once, the one in use and prefetch_depth ahead (whole tensors);
  // not resharded after use, every unit stays gathered: the whole model.
  if (weight_shards > 1.0 && model.totals.parameters > 0)
    add(Tier::device, schedule.reshard_after_use
                          ? (depth + 1.0) * largest_tensor * static_cast<double>(model.totals.parameter_bytes) /
                                static_cast<double>(model.totals.parameters)
                          : static_cast<double>(model.totals.parameter_bytes));

  const bool accumulates = schedule.order == plan::ScheduleOrder::horizontal && schedule.micro_batches > 1;
  const auto gradient_bytes = static_cast<double>(model.totals.gradient_bytes);
  if (accumulates) add(schedule.tiers.gradients, gradient_bytes / gradient_shards);
  else add(schedule.tiers.gradients != Tier::device ? schedule.tiers.gradients : update_site,
           gradient_bytes * schedule.defer_fraction);
  add(Tier::device, 2.0 * largest_tensor * gradient_element);

  // Micro-batches whose activations are alive at once.
  const double alive = schedule.order == plan::ScheduleOrder::horizontal ? 1.0 : micro_batches;
  if (!schedule.recompute_activations) {
    add(Tier::device, static_cast<double>(model.totals.activation_bytes) * alive / micro_batches);
    return m;
  }
  double checkpoints = 0.0;
  double largest_layer = 0.0;
  for (const LayerWork& layer : model.layers) {
    largest_layer = std::max(largest_layer, static_cast<double>(layer.activation_bytes));
    if (layer.layer >= 0 && layer.layer < static_cast<int>(model.config.layers))
      checkpoints += static_cast<double>(model.totals.tokens) * static_cast<double>(model.config.d_model) * activation_element;
  }
  add(schedule.tiers.checkpoints, checkpoints * alive / micro_batches);
  add(Tier::device, largest_layer / micro_batches);
  if (schedule.tiers.checkpoints != Tier::device) {
    const double one = static_cast<double>(model.totals.tokens) * static_cast<double>(model.config.d_model) *
                       activation_element / micro_batches;
    add(Tier::device, depth * one);
  }
  return m;
}

}  // namespace asteria::workload
