#pragma once
// AdamW (decoupled weight decay), per block. Also the fallback for tensors of order <= 1 and
// Shampoo's grafting direction.
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::optim {

template <Real T>
class AdamWBlock final : public BlockOptimizer<T> {
 public:
  AdamWBlock(const Hyperparameters& hp, index rows, index cols);
  std::string_view name() const noexcept override { return "adamw"; }
  void accumulate(linalg::ConstMatrixView<T> grad, Step t) override;
  bool apply(linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step t) override;

 private:
  Hyperparameters hp_;
  int m_ = 0;
  int v_ = 0;
  int step_ = 0;  // updates applied to this block (bias correction)
};

}  // namespace asteria::optim
