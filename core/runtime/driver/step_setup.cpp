#include "core/runtime/driver/step_setup.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/plan/share_groups.hpp"

namespace asteria::runtime {

StepSetup set_up_step(std::span<const LayerSpec> layers, optim::OptimizerKind kind, const optim::Hyperparameters& hp,
                      const StepSetupOptions& options) {
  const std::size_t element = options.element_bytes;
  StepSetup s;
  s.schedule = options.schedule;
  // Host updates use every worker, in pieces of a million values (DeepSpeed's CPU Adam works
  // through a tensor in tiles on all of its threads).
  if (s.schedule.host_piece_bytes == 0.0) {
    s.schedule.host_piece_bytes = 1e6 * static_cast<double>(element);
    s.schedule.max_host_pieces = std::max(1, options.host_workers);
  }
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const LayerSpec& spec = layers[l];
    const double values = static_cast<double>(spec.rows) * static_cast<double>(spec.cols) * static_cast<double>(element);
    s.layers.push_back({spec.name, spec.forward, spec.backward, values,
                        spec.weight_bytes > 0.0 ? spec.weight_bytes : values, spec.checkpoint_bytes});
    const std::vector<index> shape = tensor_shape(spec);
    const std::vector<optim::BlockPlan> cuts = optim::plan_blocks(kind, hp, shape);
    const optim::MatrixShape view = optim::tensor_view(kind, hp, shape).shape;
    for (std::size_t b = 0; b < cuts.size(); ++b) {
      const optim::BlockPlan& cut = cuts[b];
      const index rows = cut.region.rows;
      const index cols = cut.region.cols;
      BlockSetup block;
      block.layer = l;
      block.label = optim::describe_block(spec.name, b, cut.region);
      block.cut = cut;
      block.view = view;
      block.state_bytes = optim::state_bytes(cut.kind, cut.hp, rows, cols, element);
      block.job_bytes = optim::refresh_job_bytes(cut.kind, cut.hp, rows, cols, element);
      block.receiving_job_bytes = optim::refresh_result_bytes(cut.kind, cut.hp, rows, cols, element);
      block.live_jobs = max_live_refresh_jobs(cut.kind, cut.hp, options.staleness);
      block.activation_delay = optim::activation_delay(cut.kind);
      block.warm_refresh = optim::refresh_cost(cut.kind, cut.hp, rows, cols, element, /*first=*/false);
      for (const platform::Cost& piece : block.warm_refresh) block.warm_refresh_flops += piece.flops;
      block.costs = optim::phase_costs(cut.kind, rows, cols, element);
      block.value_bytes = static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(element);
      s.blocks.push_back(std::move(block));
    }
  }
  return s;
}

std::vector<std::string> StepSetup::labels() const {
  std::vector<std::string> out;
  out.reserve(blocks.size());
  for (const BlockSetup& b : blocks) out.push_back(b.label);
  return out;
}

std::size_t StepSetup::state_bytes() const noexcept {
  std::size_t sum = 0;
  for (const BlockSetup& b : blocks) sum += b.state_bytes;
  return sum;
}

std::vector<plan::BlockWork> StepSetup::block_work(std::span<const plan::Resource> sites,
                                                   std::span<const int> owners) const {
  if (!sites.empty() && sites.size() != blocks.size())
    throw std::invalid_argument("StepSetup::block_work: one update site per block");
  if (!owners.empty() && owners.size() != blocks.size())
    throw std::invalid_argument("StepSetup::block_work: one owner per block");
  std::vector<plan::BlockWork> out;
  out.reserve(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const BlockSetup& b = blocks[i];
    out.push_back({static_cast<int>(b.layer), b.label, b.activation_delay,
                   sites.empty() ? plan::Resource::device : sites[i], b.costs.accumulate, b.costs.apply,
                   b.costs.publish, b.value_bytes, b.value_bytes, owners.empty() ? -1 : owners[i]});
  }
  return out;
}

plan::StepPlan StepSetup::plan(std::span<const plan::Resource> sites, std::span<const int> owners,
                               int host_release_delay, int rank) const {
  plan::ScheduleOptions options = schedule;
  options.host_release_delay = host_release_delay;
  options.rank = rank;
  return plan::schedule_plan(layers, block_work(sites, owners), options);
}

plan::StepPlan StepSetup::weights_gather_plan(std::span<const int> owners, int rank) const {
  plan::ScheduleOptions options = schedule;
  options.rank = rank;
  return plan::weights_gather_plan(layers, block_work({}, owners), options);
}

std::vector<int> StepSetup::block_owners(int ranks) const {
  std::vector<double> bytes;
  std::vector<int> layer_of;
  for (const BlockSetup& b : blocks) {
    bytes.push_back(static_cast<double>(b.state_bytes));
    layer_of.push_back(static_cast<int>(b.layer));
  }
  return plan::assign_block_owners(bytes, layer_of, ranks);
}

std::vector<ShadowDemand> StepSetup::shadow_demands(const std::vector<bool>& receiving, bool shared,
                                                    const std::vector<bool>& held) const {
  std::vector<ShadowDemand> out(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const BlockSetup& b = blocks[i];
    if (!held.empty() && !held[i]) continue;
    const bool receives = !receiving.empty() && receiving[i];
    out[i] = {receives && b.receiving_job_bytes > 0 ? b.receiving_job_bytes : b.job_bytes, b.live_jobs,
              b.activation_delay, shared};
  }
  return out;
}

}  // namespace asteria::runtime
