#include "core/optim/tensor_optimizer.hpp"

#include <array>
#include <utility>

#include <functional>
#include <numeric>

#include "core/common/error.hpp"
#include "core/linalg/blas.hpp"
#include "core/optim/factory.hpp"

namespace asteria::optim {

TensorView tensor_view(OptimizerKind kind, const Hyperparameters& hp, std::span<const index> shape) {
  const MatrixShape matrix = as_matrix(shape);  // checks the dimensions
  if (kind != OptimizerKind::shampoo || !hp.merge_small_dims) return {matrix, shape.size() < 2};
  std::vector<index> kept;
  index values = 1;
  for (index d : shape) {
    values *= d;
    if (d != 1) kept.push_back(d);
  }
  if (kept.size() <= 1 || values <= hp.max_precond_dim) return {{1, values}, true};
  return {as_matrix(kept), false};
}

BlockGrid block_grid(OptimizerKind kind, const Hyperparameters& hp, std::span<const index> shape) {
  const TensorView view = tensor_view(kind, hp, shape);
  BlockGrid grid{view.shape, kind, hp, 0};
  if (view.vector && kind == OptimizerKind::shampoo && hp.precondition_vectors) {
    // One-sided Shampoo on 1 x n pieces of at most max_precond_dim, as DS blocks a 1-D tensor.
    grid.hp.vector_block = true;
    grid.side = hp.max_precond_dim;
  } else if (view.vector) {
    grid.kind = OptimizerKind::adamw;
    grid.hp = vector_fallback_hyperparameters(kind, hp);
  } else if (kind != OptimizerKind::muon && kind != OptimizerKind::adamw) {
    grid.side = hp.max_precond_dim;  // element-wise and whole-matrix methods keep one block
  }
  return grid;
}

std::vector<BlockShapeCount> block_shapes(const BlockGrid& grid) {
  const MatrixShape v = grid.view;
  if (v.rows == 0 || v.cols == 0) return {};
  if (grid.side < 1) return {{v.rows, v.cols, 1.0}};
  const index b = grid.side;
  // (side, how many) of the full pieces and the edge along each dimension.
  const std::array<std::pair<index, double>, 2> row_pieces = {{{b, static_cast<double>(v.rows / b)}, {v.rows % b, 1.0}}};
  const std::array<std::pair<index, double>, 2> col_pieces = {{{b, static_cast<double>(v.cols / b)}, {v.cols % b, 1.0}}};
  std::vector<BlockShapeCount> shapes;
  for (const auto& [rows, row_count] : row_pieces)
    for (const auto& [cols, col_count] : col_pieces)
      if (rows > 0 && cols > 0 && row_count > 0.0 && col_count > 0.0) shapes.push_back({rows, cols, row_count * col_count});
  return shapes;
}

std::vector<BlockPlan> plan_blocks(OptimizerKind kind, const Hyperparameters& hp, std::span<const index> shape) {
  const BlockGrid grid = block_grid(kind, hp, shape);
  std::vector<BlockRegion> regions;
  if (grid.view.rows > 0 && grid.view.cols > 0)
    regions = grid.side > 0 ? split_into_blocks(grid.view, grid.side)
                            : std::vector<BlockRegion>{{0, 0, grid.view.rows, grid.view.cols}};
  std::vector<BlockPlan> plan;
  plan.reserve(regions.size());
  for (const BlockRegion& r : regions) plan.push_back({r, grid.kind, grid.hp});
  return plan;
}

std::string describe_block(const std::string& source, std::size_t b, const BlockRegion& r) {
  return source + " block " + std::to_string(b) + " (rows " + std::to_string(r.row0) + ":" +
         std::to_string(r.row0 + r.rows) + ", cols " + std::to_string(r.col0) + ":" + std::to_string(r.col0 + r.cols) +
         ")";
}

template <Real T>
TensorOptimizer<T>::TensorOptimizer(OptimizerKind kind, const Hyperparameters& hp, std::vector<index> shape,
                                    std::string source)
    : kind_(kind),
      hp_(hp),
      shape_(std::move(shape)),
      shape2d_(tensor_view(kind, hp, shape_).shape),
      source_(std::move(source)),
      host_(std::make_unique<ops::CpuDevice>()) {
  validate(hp_, source_);
  for (const BlockPlan& p : plan_blocks(kind_, hp_, shape_))
    blocks_.push_back({p.region, make_block_optimizer<T>(p.kind, p.hp, p.region.rows, p.region.cols)});
}

template <Real T>
std::string TensorOptimizer<T>::describe(std::size_t b) const {
  return describe_block(source_, b, blocks_[b].region);
}

template <Real T>
void TensorOptimizer<T>::refresh_failed(std::size_t b, const Status& status) {
  ++counters_.refresh_failures;
  if (++blocks_[b].consecutive_refresh_failures > hp_.max_consecutive_refresh_failures)
    throw NumericalError(describe(b) + ": " + std::to_string(blocks_[b].consecutive_refresh_failures) +
                         " consecutive preconditioner refreshes failed (limit " +
                         std::to_string(hp_.max_consecutive_refresh_failures) + "); last: " + status.message());
}

template <Real T>
void TensorOptimizer<T>::step(std::span<T> params, std::span<const T> grads) {
  step(*host_, params, grads);
}

template <Real T>
void TensorOptimizer<T>::step(ops::Device& device, std::span<T> params, std::span<const T> grads) {
  const auto expected = static_cast<std::size_t>(shape2d_.rows * shape2d_.cols);
  if (params.size() != expected)
    throw InputError(source_, "params", "expected " + std::to_string(expected) + " values, found " +
                                            std::to_string(params.size()));
  if (grads.size() != expected)
    throw InputError(source_, "grads", "expected " + std::to_string(expected) + " values, found " +
                                           std::to_string(grads.size()));
  const Step t = steps_ + 1;
  linalg::MatrixView<T> w_all(params.data(), shape2d_.rows, shape2d_.cols);
  linalg::ConstMatrixView<T> g_all(grads.data(), shape2d_.rows, shape2d_.cols);

  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    Block& block = blocks_[b];
    const BlockRegion& r = block.region;
    auto w = w_all.block(r.row0, r.col0, r.rows, r.cols);
    auto g = g_all.block(r.row0, r.col0, r.rows, r.cols);

    const ops::Flag non_finite_gradient = device.flag();
    device.check_finite(g, non_finite_gradient);
    if (device.raised(non_finite_gradient)) {
      ++counters_.skipped_non_finite_blocks;
      ++block.consecutive_non_finite;
      if (hp_.non_finite == NonFinitePolicy::error)
        throw NumericalError(describe(b) + ": gradient holds NaN or Inf at step " + std::to_string(t));
      if (block.consecutive_non_finite > hp_.max_consecutive_non_finite)
        throw NumericalError(describe(b) + ": " + std::to_string(block.consecutive_non_finite) +
                             " consecutive non-finite gradients (limit " +
                             std::to_string(hp_.max_consecutive_non_finite) + ")");
      continue;
    }
    block.consecutive_non_finite = 0;

    BlockOptimizer<T>& opt = *block.optimizer;
    opt.accumulate(device, g, t);
    std::unique_ptr<RefreshJob<T>> job;
    if (opt.refresh_due(t)) {
      job = opt.snapshot(device, t);
      if (Status s = job->run(); !s.ok()) {
        refresh_failed(b, s);
        job.reset();
      }
    }
    auto publish = [&] {
      opt.publish(device, *job);
      ++counters_.refreshes;
      block.consecutive_refresh_failures = 0;
    };
    if (job && opt.activation_delay() == 0) publish();
    if (!opt.apply(device, w, g, t))
      throw NumericalError(describe(b) + ": the update at step " + std::to_string(t) +
                           " is non-finite; no non-finite value was written to the weights");
    if (job && opt.activation_delay() != 0) publish();
  }
  steps_ = t;
}

template class TensorOptimizer<float>;
template class TensorOptimizer<double>;

}  // namespace asteria::optim
