#pragma once
// Muon (KellerJordan/Muon) for one whole weight matrix: momentum, Nesterov look-ahead, and an
// approximate orthogonalization of the update by a quintic Newton–Schulz iteration, computed in
// the parameter's dtype. See ALGORITHMS.md "Muon". No statistics, no refresh.
#include "core/linalg/matrix.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::optim {

template <Real T>
class MuonBlock final : public BlockOptimizer<T> {
 public:
  MuonBlock(const Hyperparameters& hp, index rows, index cols);

  std::string_view name() const noexcept override { return "muon"; }
  void accumulate(linalg::ConstMatrixView<T> grad, Step t) override;
  bool apply(linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step t) override;

 private:
  // Replaces x (short side first: rows <= cols) by the Newton–Schulz approximation of its
  // orthogonal polar factor.
  void orthogonalize(linalg::Matrix<T>& x);

  Hyperparameters hp_;
  int momentum_ = 0;
  int step_ = 0;
  // Scratch, not state.
  linalg::Matrix<T> update_;  // short side first
  linalg::Matrix<T> next_;
  linalg::Matrix<T> gram_;    // A = X Xᵀ
  linalg::Matrix<T> poly_;    // B = bA + cA²
};

}  // namespace asteria::optim
