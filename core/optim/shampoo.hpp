#pragma once
// Shampoo for one m x n block, as Distributed Shampoo (DS, facebookresearch/optimizers) with
// Adam grafting; see ALGORITHMS.md "Shampoo (as in DS)".
//
//   accumulate: L ← β2 L + w G Gᵀ, R ← β2 R + w Gᵀ G   (w = 1 if β2 = 1, else 1 − β2)
//   refresh:    L̂ = (L/c + εI)^(−1/p), R̂ likewise       (c = 1 − β2^k when β2 < 1, else 1;
//               p = 2·order = 4, or exponent_override)
//   apply:      Ḡ = EMA(G, β1)/(1 − β1^k); P = L̂ Ḡ R̂, rescaled to the Frobenius norm of the
//               Adam direction; W ← W − lr·(P + wd·W)
//
// Step counting (DS semantics). Steps are 1-based and counted per block: k is the number of
// gradients this block has folded in (equal to the driver's step unless the block skipped
// non-finite gradients, as PyTorch's per-parameter step counts; it also makes a restored state
// carry its own schedule). With s = hp.effective_start_preconditioning_step() (DS default
// −1 ⇒ s = precondition_frequency f), roots are refreshed when k = s or when k > s and
// k mod f = 0 — exactly DS's `step == start or (step % f == 0 and step > start)`. Before the
// first root is published the update is the graft direction alone (DS: step < start); without
// grafting the initial identity roots make it momentum SGD, as DS's identity-initialised roots.
// Unlike DS, s < f is accepted (DS rejects it): refreshes then run at s, f, 2f, ...
//
// A vector's block (1 x n, Hyperparameters::vector_block under precondition_vectors) is DS's
// one-sided Shampoo of a 1-D tensor: only R = Σ gᵀg accumulates, L̂ stays 1, R̂ = (R/c + εI)^(−1/2).
#include <memory>

#include "core/linalg/matrix.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/shape_model.hpp"
#include "core/optim/shampoo_refresh.hpp"

namespace asteria::optim {

template <Real T>
class ShampooBlock final : public BlockOptimizer<T> {
 public:
  // Throws InputError when the root order does not suit the root method (coupled Newton needs
  // an integer order). The state is laid out by optim::state_layout.
  ShampooBlock(const Hyperparameters& hp, index rows, index cols);

  std::string_view name() const noexcept override { return "shampoo"; }
  void accumulate(ops::Device& device, linalg::ConstMatrixView<T> grad, Step t) override;
  std::int64_t statistics_updates() const noexcept override;
  bool refresh_due_after(std::int64_t updates) const override;
  std::unique_ptr<RefreshJob<T>> snapshot(ops::Device& device, Step t) const override;
  std::unique_ptr<RefreshJob<T>> snapshot_reusing(ops::Device& device, Step t,
                                                  std::unique_ptr<RefreshJob<T>> spare) const override;
  std::unique_ptr<RefreshJob<T>> receiver(Step t, std::unique_ptr<RefreshJob<T>> spare) const override;
  std::unique_ptr<RefreshJob<T>> resumed(Step stats_step, std::int64_t stamp) const override;
  void publish(ops::Device& device, RefreshJob<T>& finished) override;
  int activation_delay() const noexcept override { return optim::activation_delay(OptimizerKind::shampoo); }
  bool apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step t) override;

  // The root order p of both factors.
  double root_exponent() const noexcept { return settings_.exponent; }

 private:
  Hyperparameters hp_;
  ShampooRootSettings settings_;
  // Slots in the state arena.
  int left_ = 0;             // L, rows x rows
  int right_ = 0;            // R, cols x cols
  int left_root_ = 0;        // L̂ (identity until the first publish)
  int right_root_ = 0;       // R̂
  int momentum_ = -1;        // EMA of G (absent when β1 = 0)
  int graft_sq_ = -1;        // Adam second moment of the graft (absent without grafting)
  int step_ = 0;             // updates applied (β1 and graft bias corrections)
  int stats_steps_ = 0;      // gradients folded into L and R (schedule, β2 bias correction)
  int root_stats_steps_ = 0; // stats_steps of the active roots; 0: none published yet
};

}  // namespace asteria::optim
