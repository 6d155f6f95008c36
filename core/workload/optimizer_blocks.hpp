#pragma once
// The optimizer's side of a workload: every weight cut into the blocks the optimizer keeps
// state for, by optim::plan_blocks as optim::TensorOptimizer cuts them (matrices by
// max_precond_dim for the matrix methods; AdamW and Muon keep a matrix whole; tensors of order
// <= 1 get one AdamW block with optim::vector_fallback_hyperparameters), with per block the
// state it allocates and what each phase costs — from the shapes alone, so a 7B model can be
// described without allocating it. The figures come from the optimizers' own shape model
// (core/optim/shape_model.hpp), which the real blocks and refresh jobs use too.
#include <cstddef>
#include <string>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/shape_model.hpp"
#include "core/platform/cost.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::workload {

using linalg::index;

struct BlockSpec {
  std::size_t weight = 0;  // index into WorkloadModel::weights
  std::string label;       // "layer3.attn.q block 2" (blocks counted from 0, row-major)
  index row0 = 0;          // where the block sits in its weight
  index col0 = 0;
  index rows = 0;
  index cols = 0;
  bool fallback = false;   // a vector (order <= 1, or merged) handed to AdamW, not preconditioned
  optim::OptimizerKind kind = optim::OptimizerKind::adamw;  // the block's own optimizer
  std::size_t state_bytes = 0;
  // The refresh job's pieces of work (RefreshJob::cost()): the first refresh of the block and
  // every later one. SOAP and KL-Shampoo start with a full eigh and then warm-start (power
  // step + QR); Shampoo recomputes its roots from scratch, so both lists are equal. Empty for
  // blocks without a refresh (AdamW, Muon, fallbacks).
  std::vector<platform::Cost> first_refresh;
  std::vector<platform::Cost> warm_refresh;
  // Every-step device work (optim::phase_costs): statistics, update, installing a refresh.
  platform::Cost accumulate;
  platform::Cost apply;
  platform::Cost publish;
};

struct OptimizerTotals {
  std::size_t state_bytes = 0;
  std::size_t blocks = 0;
  std::size_t matrix_blocks = 0;    // blocks run by the chosen optimizer
  std::size_t fallback_blocks = 0;  // AdamW blocks of order <= 1 tensors
  std::size_t largest_block = 0;    // index of the block with the most state (first of ties)
  std::size_t largest_block_bytes = 0;
  double first_refresh_flops = 0.0;  // over all blocks, one refresh each
  double warm_refresh_flops = 0.0;
};

// Bytes of state one rows x cols block allocates (BlockState::tensor_bytes()) at
// `element_bytes` per value: optim::state_bytes under `hp`, or under the default
// hyperparameters of `kind`. (A using-declaration, not a wrapper of the same signature, which
// argument-dependent lookup would make ambiguous.)
using optim::state_bytes;
std::size_t state_bytes(optim::OptimizerKind kind, index rows, index cols, std::size_t element_bytes);

// The cost() of the block's refresh job, first (full) or later (warm): optim::refresh_cost.
std::vector<platform::Cost> refresh_costs(optim::OptimizerKind kind, const optim::Hyperparameters& hp, index rows,
                                          index cols, std::size_t element_bytes, bool first);

// Blocks of every weight of `model`, in weight order. This overload uses the default
// hyperparameters of `kind` with `max_precond_dim`, and state in the precision of the master
// weights (config.parameter_bytes).
std::vector<BlockSpec> optimizer_blocks(const WorkloadModel& model, optim::OptimizerKind kind, index max_precond_dim);
// Throws asteria::InputError for invalid hyperparameters or an element size of 0.
std::vector<BlockSpec> optimizer_blocks(const WorkloadModel& model, optim::OptimizerKind kind,
                                        const optim::Hyperparameters& hp, std::size_t element_bytes);

OptimizerTotals summarize(const std::vector<BlockSpec>& blocks);

}  // namespace asteria::workload
