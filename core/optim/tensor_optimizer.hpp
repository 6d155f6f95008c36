#pragma once
// The synchronous optimizer of one parameter tensor: blocks it, runs every block's three
// phases in the reference order of block_optimizer.hpp, applies the failure policies.
// This is the oracle a runtime with staleness 0 must match bit for bit.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/ops/cpu_device.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/optim/blocking.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::optim {

struct OptimizerCounters {
  std::int64_t refreshes = 0;                  // refresh jobs run and published
  std::int64_t refresh_failures = 0;           // refreshes that failed (previous preconditioner kept)
  std::int64_t skipped_non_finite_blocks = 0;  // block-steps skipped for a non-finite gradient
};

// The 2-D view of a tensor (C order) that its blocks' regions index into, and whether the
// optimizer sees it as a vector: as_matrix(shape), or with Shampoo's merge_small_dims the
// tensor without its dimensions of 1, one 1 x N vector when it holds at most max_precond_dim
// values (a view of the same memory either way).
struct TensorView {
  MatrixShape shape;
  bool vector = false;
};
TensorView tensor_view(OptimizerKind kind, const Hyperparameters& hp, std::span<const index> shape);

// How a tensor's optimizer is split into blocks, decided without allocating any state (a
// data-free simulation plans a 7B model's blocks this way). Regions index into
// tensor_view(kind, hp, shape).shape.
struct BlockPlan {
  BlockRegion region;
  OptimizerKind kind = OptimizerKind::adamw;  // the tensor's, or AdamW for vectors (unless preconditioned)
  Hyperparameters hp;
};
std::vector<BlockPlan> plan_blocks(OptimizerKind kind, const Hyperparameters& hp, std::span<const index> shape);

// The decision plan_blocks lists the blocks of: the tensor's view, its blocks' optimizer and
// hyperparameters, and their largest side (0: one block, the whole view).
struct BlockGrid {
  MatrixShape view;
  OptimizerKind kind = OptimizerKind::adamw;
  Hyperparameters hp;
  index side = 0;
};
BlockGrid block_grid(OptimizerKind kind, const Hyperparameters& hp, std::span<const index> shape);
// A grid's distinct block shapes and how many blocks have each (at most four: full blocks and
// the edges), for sizes of tensors too large to list the blocks of (a footprint).
struct BlockShapeCount {
  index rows = 0;
  index cols = 0;
  double count = 0.0;
};
std::vector<BlockShapeCount> block_shapes(const BlockGrid& grid);
// "<source> block 3 (rows 0:128, cols 256:384)", for error messages.
std::string describe_block(const std::string& source, std::size_t block, const BlockRegion& region);

template <Real T>
class TensorOptimizer {
 public:
  struct Block {
    BlockRegion region;
    std::unique_ptr<BlockOptimizer<T>> optimizer;
    int consecutive_refresh_failures = 0;
    int consecutive_non_finite = 0;
  };

  // Tensors of order >= 2 are blocked by hp.max_precond_dim (Muon keeps the whole matrix);
  // tensors of order <= 1 use AdamW with vector_fallback_hyperparameters().
  // Throws InputError (naming `source`) for invalid hyperparameters.
  TensorOptimizer(OptimizerKind kind, const Hyperparameters& hp, std::vector<index> shape,
                  std::string source = "optimizer");

  // One synchronous step. `params` and `grads` hold the tensor in C order. Throws InputError
  // on a size mismatch and NumericalError when a failure policy says so (naming the block);
  // the weights of a block are never written with a non-finite value.
  // On the host, one thread (a CpuDevice of the optimizer's own):
  void step(std::span<T> params, std::span<const T> grads);
  // On `device`, whose memory holds `params`, `grads` and every block's state.
  void step(ops::Device& device, std::span<T> params, std::span<const T> grads);

  Step steps_taken() const noexcept { return steps_; }
  const OptimizerCounters& counters() const noexcept { return counters_; }
  const std::vector<Block>& blocks() const noexcept { return blocks_; }
  std::vector<Block>& blocks() noexcept { return blocks_; }
  MatrixShape matrix_shape() const noexcept { return shape2d_; }
  OptimizerKind kind() const noexcept { return kind_; }

  // "block 3 (rows 0:128, cols 256:384)", for error messages.
  std::string describe(std::size_t block) const;

 private:
  void refresh_failed(std::size_t b, const Status& status);

  OptimizerKind kind_;
  Hyperparameters hp_;
  std::vector<index> shape_;
  MatrixShape shape2d_;
  std::string source_;
  std::vector<Block> blocks_;
  Step steps_ = 0;
  OptimizerCounters counters_;
  std::unique_ptr<ops::CpuDevice> host_;
};

}  // namespace asteria::optim
