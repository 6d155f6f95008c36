#include "core/runtime/driver/shared_step_setup.hpp"

#include <stdexcept>

namespace asteria::runtime {

namespace {
bool same_layer(const LayerSpec& a, const LayerSpec& b) {
  return a.name == b.name && a.rows == b.rows && a.cols == b.cols && a.vector == b.vector &&
         a.weight_bytes == b.weight_bytes && a.checkpoint_bytes == b.checkpoint_bytes && a.forward == b.forward &&
         a.backward == b.backward;
}

bool same_options(const StepSetupOptions& a, const StepSetupOptions& b) {
  return a.element_bytes == b.element_bytes && a.staleness == b.staleness && a.host_workers == b.host_workers &&
         a.schedule.bucket_bytes == b.schedule.bucket_bytes &&
         a.schedule.data_parallel_ranks == b.schedule.data_parallel_ranks &&
         a.schedule.parallelism == b.schedule.parallelism && a.schedule.micro_batches == b.schedule.micro_batches;
}
}  // namespace

std::shared_ptr<const StepSetup> SharedStepSetup::get(std::span<const LayerSpec> layers, optim::OptimizerKind kind,
                                                      const optim::Hyperparameters& hp,
                                                      const StepSetupOptions& options) {
  if (!setup_) {
    setup_ = std::make_shared<const StepSetup>(set_up_step(layers, kind, hp, options));
    layers_.assign(layers.begin(), layers.end());
    kind_ = kind;
    options_ = options;
    return setup_;
  }
  bool same = layers.size() == layers_.size() && kind == kind_ && same_options(options, options_);
  for (std::size_t l = 0; same && l < layers.size(); ++l) same = same_layer(layers[l], layers_[l]);
  if (!same)
    throw std::logic_error("SharedStepSetup: a driver of another model or other options (share a set-up only "
                           "among drivers of the same model and options)");
  return setup_;
}

const std::vector<int>& SharedStepSetup::block_owners(int ranks) {
  if (!setup_) throw std::logic_error("SharedStepSetup::block_owners before any set-up");
  auto found = owners_.find(ranks);
  if (found == owners_.end()) found = owners_.emplace(ranks, setup_->block_owners(ranks)).first;
  return found->second;
}

}  // namespace asteria::runtime
