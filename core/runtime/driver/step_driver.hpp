#pragma once
// The training loop: runs a TrainingModel's steps (a SyntheticModel, or a real transformer) on a
// Platform with the tiered state store and the preconditioner service in the loop, as a
// framework integration would, and measures what the optimizer costs each step.
//
// The step is data: at construction the driver sets the step up (step_setup.hpp: every layer's
// tensor cut into optimizer blocks), builds each block's optimizer (the real optimizers, or
// optim::ShapeBlocks when numerics are shapes), registers them with the
// service and the store, sets aside host room for the refresh jobs' buffers
// (the shadow pool, service/shadow_bound.hpp; the store keeps it free, so placement refuses a
// run whose pool cannot fit), and has the horizontal schedule (core/plan/schedule.hpp) write
// the step as a plan, with the release delay of host-updated blocks chosen to keep the host
// workers busy; the store's use order is read off the plan's acquire ops. Each step then is
//   service.on_step_begin(t); PlanInterpreter::run(t) (plan_interpreter.hpp); service.on_step_end(t);
//   store.end_step();
// With values and S = 0 the weights after every step are bit-identical to TensorOptimizer::step
// on each layer (same blocks, same phase order per block).
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/checkpoint/checkpoint_reader.hpp"
#include "core/checkpoint/checkpoint_writer.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/plan/step_plan.hpp"
#include "core/platform/platform.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/driver/plan_interpreter.hpp"
#include "core/runtime/driver/step_setup.hpp"
#include "core/runtime/driver/synthetic_model.hpp"
#include "core/runtime/driver/training_model.hpp"
#include "core/runtime/service/preconditioner_service.hpp"
#include "core/runtime/store/relocatable.hpp"
#include "core/runtime/store/state_store.hpp"

namespace asteria::runtime {

template <linalg::Real T>
class StepDriver {
 public:
  // `platform` and `model` must outlive the driver. Throws InputError for invalid options or
  // hyperparameters, or numerics the platform cannot run (platform::validate), and
  // PlacementError when the state, with the refresh jobs' host room, does not fit the tier
  // budgets.
  StepDriver(platform::Platform& platform, TrainingModel<T>& model, optim::OptimizerKind kind,
             const optim::Hyperparameters& hp, DriverOptions options);
  // Waits for device work still in flight (its bodies use the service and the model).
  ~StepDriver();
  StepDriver(const StepDriver&) = delete;
  StepDriver& operator=(const StepDriver&) = delete;

  // Runs the next step (1, 2, ...) and returns its figures. With deferred updates (the schedule's
  // defer fraction), the step's optimizer work ends during the next step: its service figures
  // (refreshes, staleness, waits, shadow and exchanged bytes) are added to history() then, and
  // the weights are those of the step only after the next step's forward has used them (or
  // after finish()).
  StepRecord run_step();
  // After the last step: waits for state moves, gives every block's state its own storage back
  // (the store's regions are released) and settles the service, so that with S = 0 every block
  // state equals the synchronous optimizer's. No step may follow.
  void finish();

  // fsdp: every rank gets the current weights of every block from its owner (one gather per
  // layer), where a step leaves those of the blocks other ranks own as its last gathers brought
  // them (before the owners' updates). A collective: every rank calls it, between steps;
  // finish() calls it (nothing to do after it). Nothing to do under other parallelisms (their
  // gathers follow the updates).
  void gather_weights();

  // Checkpoints (core/checkpoint), between steps. save() adds to `writer` the step count, each
  // layer's weights, and per block held here its state (layout and counters, then its values,
  // read one block at a time from wherever the store keeps them) and its part of the service
  // (refresh bookkeeping, jobs in flight finished and saved with their results). restore(), on a
  // driver built for the same model, optimizer, blocking and staleness that has run no step,
  // brings everything back (values written where the store placed them), so that with the
  // deterministic publication policy the run continues bit for bit as the uninterrupted one
  // would. Refused (InputError) for data-free numerics (no values to save) and for plans with
  // deferred updates (a step's optimizer work is still open when it returns). A chunk of another
  // model, optimizer or blocking is an InputError naming the checkpoint and chunk; after one,
  // the driver is partly restored and must be discarded.
  void save(checkpoint::CheckpointWriter& writer);
  void restore(const checkpoint::CheckpointReader& reader);
  // Throws the InputError save() and restore() would (or logic_error after finish()).
  void check_checkpointable() const;

  optim::Step steps_done() const noexcept { return step_; }
  const std::vector<StepRecord>& history() const noexcept { return history_; }
  std::size_t block_count() const noexcept { return blocks_.size(); }
  std::size_t layer_count() const noexcept { return layer_count_; }
  // Whether this rank holds block b's state (always, unless the state is sharded).
  bool holds_block(std::size_t b) const { return blocks_.at(b).local; }
  // State of the optimizer of block b (empty with shapes).
  const optim::BlockState<T>& block_state(std::size_t b) const { return blocks_.at(b).optimizer->state(); }
  const std::string& block_label(std::size_t b) const { return blocks_.at(b).label; }
  const PreconditionerService<T>& service() const noexcept { return *service_; }
  const StateStore& store() const noexcept { return *store_; }
  const DriverOptions& options() const noexcept { return options_; }
  // The plan every step runs.
  const plan::StepPlan& plan() const noexcept { return plan_; }
  // Bytes of optimizer state over every block.
  std::size_t state_bytes() const noexcept;

 private:
  // A block as this run holds it; what it is (label, region, costs, job bytes) is setup_'s.
  struct Block {
    std::size_t layer = 0;
    std::string label;
    optim::BlockOptimizer<T>* optimizer = nullptr;
    std::unique_ptr<Relocatable> bytes;  // the state's arena, or declared bytes with shapes
    BlockId service_id = 0;
    BlockId store_id = 0;
    int owner = -1;                // sharded state: the rank that holds and updates it
    bool local = true;             // this rank holds its state (registered with the service and store)
  };

  void add_blocks(optim::OptimizerKind kind, const optim::Hyperparameters& hp);
  plan::StepPlan make_plan() const;
  static void add_service_figures(StepRecord& r, const StepMetrics& metrics);
  int host_release_delay() const;

  platform::Platform& platform_;
  TrainingModel<T>& model_;
  DriverOptions options_;
  std::size_t layer_count_ = 0;
  // The layers' and blocks' work (step_setup.hpp), shared with the other units' drivers where
  // DriverOptions::shared_setup says so.
  std::shared_ptr<const StepSetup> setup_;
  std::vector<std::unique_ptr<optim::TensorOptimizer<T>>> tensors_;  // values
  std::vector<std::unique_ptr<optim::BlockOptimizer<T>>> shapes_;    // shapes
  std::vector<Block> blocks_;
  std::unique_ptr<PreconditionerService<T>> service_;
  std::unique_ptr<StateStore> store_;  // after the states and the service: destroyed before them
  plan::StepPlan plan_;
  // The plan carries deferred updates into the next step's forward: the service's step t ends
  // during plan t + 1 (at its boundary), and finish() runs the last step's carried ops.
  bool carries_updates_ = false;
  plan::StepPlan weights_gathers_;                    // fsdp: gather_weights()'s plan
  std::unique_ptr<PlanInterpreter<T>> gatherer_;      // and its interpreter
  std::unique_ptr<PlanInterpreter<T>> interpreter_;  // last: destroyed (drained) first
  std::vector<StepRecord> history_;
  optim::Step step_ = 0;
  bool finished_ = false;
};

}  // namespace asteria::runtime
