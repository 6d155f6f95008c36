#pragma once
// AdamW (decoupled weight decay), per block. Also the fallback for tensors of order <= 1.
// apply() is one pass over memory (ops::AdamWStep): an element whose update is non-finite keeps
// its weight and moments, the others are updated, and apply() returns false.
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::optim {

template <Real T>
class AdamWBlock final : public BlockOptimizer<T> {
 public:
  AdamWBlock(const Hyperparameters& hp, index rows, index cols);
  std::string_view name() const noexcept override { return "adamw"; }
  void accumulate(ops::Device& device, linalg::ConstMatrixView<T> grad, Step t) override;
  bool apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step t) override;

 private:
  Hyperparameters hp_;
  int m_ = 0;
  int v_ = 0;
  int step_ = 0;  // updates applied to this block (bias correction)
};

}  // namespace asteria::optim
