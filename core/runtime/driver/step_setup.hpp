#pragma once
// The step's set-up as a pure function of the model's layers, the optimizer and the run's
// settings: every layer's optimizer blocks (cut as optim::TensorOptimizer cuts them, labelled as
// the step plan, the trace and a placement plan name them), per block its state, its refresh
// jobs' buffers and what each phase costs, and the layers' and blocks' work the schedule turns
// into a step plan. The step driver builds its blocks from it, the placement planner
// (core/planner/step_model.hpp) predicts the same blocks from it, and asteria sim reports its
// totals: the three cannot disagree on a block's label, size or cost.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/optim/shape_model.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/plan/schedule.hpp"
#include "core/runtime/driver/training_model.hpp"
#include "core/runtime/service/shadow_bound.hpp"

namespace asteria::runtime {

struct BlockSetup {
  std::size_t layer = 0;     // index into the layers
  std::string label;         // optim::describe_block of its layer's name and its place there
  optim::BlockPlan cut;      // region (in `view`), the block's own optimizer and hyperparameters
  optim::MatrixShape view;   // the layer's tensor as the region indexes it (optim::tensor_view)
  std::size_t state_bytes = 0;          // optim::state_bytes at the setup's element size
  std::size_t job_bytes = 0;            // one refresh job's buffers (0: no refreshes)
  std::size_t receiving_job_bytes = 0;  // a job receiving another rank's result: the result alone
  std::int64_t live_jobs = 0;           // its refresh jobs alive at once at worst (shadow_bound.hpp)
  int activation_delay = 0;
  std::vector<platform::Cost> warm_refresh;  // a refresh after the first (optim::refresh_cost)
  double warm_refresh_flops = 0.0;           // their sum: what refresh ownership balances
  optim::PhaseCosts costs;                   // accumulate, apply, publish on the device
  // Bytes of the block's gradient, and of its weights: what a host update moves each way.
  double value_bytes = 0.0;
};

struct StepSetupOptions {
  std::size_t element_bytes = sizeof(float);  // of the model's values and the optimizer state
  int staleness = 0;
  // The schedule's options; a host_piece_bytes of 0 becomes the driver's split of host updates
  // (pieces of a million values, at most one per host worker).
  plan::ScheduleOptions schedule;
  int host_workers = 1;
};

struct StepSetup {
  std::vector<plan::LayerWork> layers;
  std::vector<BlockSetup> blocks;  // layer by layer, each layer's blocks in its optimizer's order
  plan::ScheduleOptions schedule;  // the options', host pieces filled in

  std::vector<std::string> labels() const;
  std::size_t state_bytes() const noexcept;
  // The rank that owns each block when `ranks` ranks shard the state (plan::assign_block_owners
  // over the blocks' state bytes and layers): the step driver's owners and the planner's.
  std::vector<int> block_owners(int ranks) const;
  // The blocks' work for the schedule, each updated where `sites` says (one per block; empty:
  // every block on the device) and owned by `owners` (sharded state; empty: every rank).
  std::vector<plan::BlockWork> block_work(std::span<const plan::Resource> sites = {},
                                          std::span<const int> owners = {}) const;
  // The step plan of those blocks with the layers (schedule_plan), with this host release delay.
  plan::StepPlan plan(std::span<const plan::Resource> sites, std::span<const int> owners, int host_release_delay,
                      int rank = 0) const;
  // The gathers of every sharded block's weights from its owner (plan::weights_gather_plan).
  plan::StepPlan weights_gather_plan(std::span<const int> owners, int rank) const;
  // Each block's refresh jobs as the shadow pool sees them. `receiving[b]` (empty: none): another
  // rank runs block b's refresh and sends its result; `shared`: results travel between ranks.
  // Blocks with `held[b]` false (empty: all held) hold no jobs here.
  std::vector<ShadowDemand> shadow_demands(const std::vector<bool>& receiving = {}, bool shared = false,
                                           const std::vector<bool>& held = {}) const;
};

// Throws InputError (naming the layer) for invalid hyperparameters or a tensor its optimizer
// cannot cut.
StepSetup set_up_step(std::span<const LayerSpec> layers, optim::OptimizerKind kind, const optim::Hyperparameters& hp,
                      const StepSetupOptions& options);

}  // namespace asteria::runtime
