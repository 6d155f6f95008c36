#pragma once
// The training loop: runs a TrainingModel's steps (a SyntheticModel, or a real transformer) on a
// Platform with the tiered state store and the preconditioner service in the loop, as a
// framework integration would, and measures what the optimizer costs each step.
//
// One step t (all calls on the constructing thread):
//   service.on_step_begin(t)
//   forward: layer 0..N-1 on the device stream (modelled work); the store starts moving the
//            state of the blocks updated first (prefetch, in backward order)
//   backward, last layer first; for layer L:
//     submit L's backward work (its body computes L's gradient when numerics run);
//     wait for it — the device is then idle, so every wait below is visible, never hidden;
//     release the blocks of layer L+1 (dirty); acquire the blocks of layer L (state-move wait);
//     per block b of L: service.after_backward (non-finite policy, publication point of delay-1
//       optimizers, accumulate, snapshot + submit a due refresh) and, unless b skipped the step,
//       service.apply (publication point of delay-0 optimizers, waiting for a late refresh, then
//       the update) — the update fused right after the layer's backward, as ZeRO does;
//     submit L's optimizer work: `full` mode runs those hooks inside its body (real numerics on
//       the device stream), `emulated` mode runs them on this thread with the device numerics
//       switched off (ModelledBlock) and submits the work without a body (modelled time only).
//     blocks the store updates on the host (host, nvme policies) are charged as urgent Work
//     (one per block) on the host workers instead, waited for before their blocks are released;
//   wait for the last optimizer work (the device stream is drained), release, on_step_end,
//   store.end_step().
//
// With `full` numerics and S = 0 the weights after every step are bit-identical to
// TensorOptimizer::step on each layer (same blocks, same phase order per block).
#include <cstddef>
#include <exception>
#include <memory>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/platform/platform.hpp"
#include "core/runtime/driver/device_costs.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/driver/modelled_block.hpp"
#include "core/runtime/driver/synthetic_model.hpp"
#include "core/runtime/driver/training_model.hpp"
#include "core/runtime/service/preconditioner_service.hpp"
#include "core/runtime/store/state_store.hpp"

namespace asteria::runtime {

template <linalg::Real T>
class StepDriver {
 public:
  // `platform` and `model` must outlive the driver. Throws InputError for invalid options or
  // hyperparameters and PlacementError when the state does not fit the tier budgets.
  StepDriver(platform::Platform& platform, TrainingModel<T>& model, optim::OptimizerKind kind,
             const optim::Hyperparameters& hp, DriverOptions options);
  // Waits for device work still in flight (its bodies use the service and the model).
  ~StepDriver();
  StepDriver(const StepDriver&) = delete;
  StepDriver& operator=(const StepDriver&) = delete;

  // Runs the next step (1, 2, ...) and returns its figures.
  StepRecord run_step();
  // After the last step: waits for state moves, gives every block's state its own storage back
  // (the store's regions are released) and settles the service, so that with S = 0 every block
  // state equals the synchronous optimizer's. No step may follow.
  void finish();

  optim::Step steps_done() const noexcept { return step_; }
  const std::vector<StepRecord>& history() const noexcept { return history_; }
  std::size_t block_count() const noexcept { return blocks_.size(); }
  std::size_t layer_count() const noexcept { return layers_.size(); }
  // State of the optimizer doing block b's numerics (inside a ModelledBlock in emulated mode).
  const optim::BlockState<T>& block_state(std::size_t b) const { return blocks_.at(b).numerics->state(); }
  const std::string& block_label(std::size_t b) const { return blocks_.at(b).label; }
  const PreconditionerService<T>& service() const noexcept { return *service_; }
  const StateStore& store() const noexcept { return *store_; }
  const DriverOptions& options() const noexcept { return options_; }
  // Bytes of optimizer state over every block.
  std::size_t state_bytes() const noexcept;

 private:
  struct Block {
    std::size_t layer = 0;
    std::string label;
    optim::BlockRegion region;
    BlockId service_id = 0;
    BlockId store_id = 0;
    optim::BlockOptimizer<T>* numerics = nullptr;  // the real optimizer
    ModelledBlock<T>* modelled = nullptr;          // its wrapper in emulated mode
    std::unique_ptr<Relocatable> bytes;  // the state's arena, or declared bytes in shapes mode
    PhaseCosts costs;
  };
  struct Layer {
    std::unique_ptr<optim::TensorOptimizer<T>> tensor;                      // values modes
    std::vector<std::unique_ptr<optim::BlockOptimizer<T>>> shape_blocks;  // shapes mode
    std::vector<std::size_t> blocks;  // indices into blocks_
  };
  struct StepTotals {
    platform::Seconds compute = 0.0;
    platform::Seconds optimizer_device = 0.0;
    platform::Seconds acquire_wait = 0.0;
  };

  platform::Seconds modelled(const platform::Cost& cost) const;
  platform::Pending submit(platform::Work work);
  void wait_ok(platform::Pending& pending, const char* what);
  void forward(optim::Step t, StepTotals& totals);
  platform::Pending backward(std::size_t layer, optim::Step t, StepTotals& totals);
  platform::Pending update(std::size_t layer, optim::Step t, StepTotals& totals);
  void run_hooks(std::size_t layer, optim::Step t);
  void add_shape_blocks(std::size_t l, optim::OptimizerKind kind, const optim::Hyperparameters& hp,
                        const std::vector<index>& shape, Layer& layer);
  void release_layer(std::size_t layer);
  void wait_host_updates(std::size_t layer);
  void wait_in_flight() noexcept;

  platform::Platform& platform_;
  TrainingModel<T>& model_;
  optim::OptimizerKind kind_;
  DriverOptions options_;
  std::vector<Layer> layers_;
  std::vector<Block> blocks_;
  std::vector<BlockId> use_order_;  // service/store ids in backward order
  std::unique_ptr<PreconditionerService<T>> service_;
  std::unique_ptr<StateStore> store_;  // after the states and the service: destroyed first
  std::vector<platform::Pending> in_flight_;  // device work whose bodies may still run
  std::vector<std::pair<std::size_t, platform::Pending>> host_updates_;  // (layer, its host-side update)
  std::exception_ptr body_error_;
  T shape_gradient_ = T(0);  // shapes mode: the stand-in gradient and weight the hooks pass
  T shape_weight_ = T(0);  // set by a device body, read after waiting for it
  std::vector<StepRecord> history_;
  optim::Step step_ = 0;
  bool finished_ = false;
};

}  // namespace asteria::runtime
