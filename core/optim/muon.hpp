#pragma once
// Muon (KellerJordan/Muon) for one whole weight matrix: momentum, Nesterov look-ahead, and an
// approximate orthogonalization of the update by a quintic Newton–Schulz iteration, computed in
// the parameter's dtype. See ALGORITHMS.md "Muon". No statistics, no refresh.
//
// The iteration runs on the short side: for rows <= cols on X = U (A = X Xᵀ, X ← aX + (bA + cA²)X),
// for rows > cols on the transpose without forming it (A = UᵀU, U ← aU + U(bA + cA²)), which is
// the same polynomial of the same matrix.
#include "core/linalg/matrix.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::optim {

template <Real T>
class MuonBlock final : public BlockOptimizer<T> {
 public:
  MuonBlock(const Hyperparameters& hp, index rows, index cols);

  std::string_view name() const noexcept override { return "muon"; }
  void accumulate(ops::Device& device, linalg::ConstMatrixView<T> grad, Step t) override;
  bool apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step t) override;

 private:
  // Replaces x (rows x cols) by the Newton–Schulz approximation of its orthogonal polar factor.
  void orthogonalize(ops::Device& device, ops::Buffer& x);

  Hyperparameters hp_;
  int momentum_ = 0;
  int step_ = 0;
};

}  // namespace asteria::optim
