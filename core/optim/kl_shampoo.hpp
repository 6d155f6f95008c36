#pragma once
// KL-Shampoo (Lin et al. 2025, yorkerlin/KL-Methods optim/kl_opt.py), per 2-D block.
// ALGORITHMS.md "KL-Shampoo" gives the equations; d_a = rows, d_b = cols, s = λ^(−1/2) (stored).
//
// Schedule of the block's k-th step (k counts the steps that reached the block), in the
// synchronous order of block_optimizer.hpp:
//   accumulate  k = 1: S_a ← β S_a + (1−β)/d_b G Gᵀ, S_b ← β S_b + (1−β)/d_a Gᵀ G (plain, as the
//               reference before it has a basis); λ keeps its initial value.
//               k > 1, with the basis Q and the s of the start of the step:
//               S_a ← β S_a + (1−β)/d_b G Ŝ_b⁻¹ Gᵀ,  S_b ← β S_b + (1−β)/d_a Gᵀ Ŝ_a⁻¹ G,
//               λ_a ← β λ_a + (1−β) diag(Q_aᵀ G Ŝ_b⁻¹ Gᵀ Q_a)/d_b (λ_b likewise), where
//               Ŝ⁻¹ = Q diag(s²) Qᵀ and λ = 1/s² (0 when s = 0); then s = 1/√λ (0 when not
//               finite), clamped to ≤ max(10, min(d, kl_max_clamp_value)).
//   refresh_due k = 1 (full eigh of S, descending; the reference's initial basis), then
//               k = 1 + f, 1 + 2f, … (the reference's step counter k − 1 hits a multiple of f),
//               on the statistics that include G_k: Q ← orth(S Q), no sorting.
//   apply       k = 1: no update. k > 1: m ← lerp(m, G, 1−β1) (original space);
//               E = s_a s_bᵀ / (1 + ε s_a s_bᵀ); U = Q_a [(Q_aᵀ m Q_b) ⊙ E] Q_bᵀ;
//               W ← (W − lr·U)·(1 − lr·wd).
//   publish     activation_delay() = 1: the new basis serves from step k+1, for both the update
//               and the statistics (the reference refreshes Q after the step's update). A full
//               (initial) job also resets λ to kl_init_eigenvalue, as the reference's basis
//               initialisation does; λ belongs to a basis.
//
// The reference's update at step k reads the λ from before step k's statistics update, while
// the synchronous driver calls accumulate before apply. accumulate therefore keeps the values it
// started from (`inv_sqrt_eigenvalues_*_before`, tagged with the step), and apply uses them when
// accumulate has already run for this step — so the two commute. This costs m + n values of
// state beyond ALGORITHMS.md's m² + n² + m² + n² + m + n + mn.
//
// Before the first publish Q is the identity, so a late first publish still leaves a valid
// (diagonally scaled momentum) update meanwhile. A warm job snapshotted from an older basis
// (possible only when the staleness S >= f) is installed as it is.
//
// Deviations from the reference: computation in the block's dtype (the reference computes in
// bfloat16 except its decompositions); 2-D blocks only (tensors are viewed as matrices).
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/shape_model.hpp"

namespace asteria::optim {

template <Real T>
class KlShampooBlock final : public BlockOptimizer<T> {
 public:
  KlShampooBlock(const Hyperparameters& hp, index rows, index cols);
  std::string_view name() const noexcept override { return "kl-shampoo"; }

  void accumulate(ops::Device& device, linalg::ConstMatrixView<T> grad, Step t) override;
  std::int64_t statistics_updates() const noexcept override;
  bool refresh_due_after(std::int64_t updates) const override;
  std::unique_ptr<RefreshJob<T>> snapshot(ops::Device& device, Step t) const override;
  std::unique_ptr<RefreshJob<T>> snapshot_reusing(ops::Device& device, Step t,
                                                  std::unique_ptr<RefreshJob<T>> spare) const override;
  std::unique_ptr<RefreshJob<T>> receiver(Step t, std::unique_ptr<RefreshJob<T>> spare) const override;
  std::unique_ptr<RefreshJob<T>> resumed(Step stats_step, std::int64_t stamp) const override;
  void publish(ops::Device& device, RefreshJob<T>& finished) override;
  int activation_delay() const noexcept override { return optim::activation_delay(OptimizerKind::kl_shampoo); }
  bool apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step t) override;

  std::int64_t basis_version() const noexcept { return this->state_.counter(basis_version_); }

 private:
  void update_statistics(ops::Device& device, linalg::ConstMatrixView<T> grad);
  // The initial eigenvalues: on the host at construction, on the device at a full publish.
  void reset_eigenvalues();
  void reset_eigenvalues(ops::Device& device);
  T clamp_limit(index dimension) const;

  Hyperparameters hp_;
  int m_ = 0;  // momentum, original space
  int left_stats_ = 0;
  int right_stats_ = 0;
  int left_basis_ = 0;
  int right_basis_ = 0;
  int left_inv_sqrt_ = 0;  // s_a = λ_a^(−1/2), rows x 1
  int right_inv_sqrt_ = 0;
  int left_inv_sqrt_before_ = 0;  // s_a at the start of the step of the last accumulate
  int right_inv_sqrt_before_ = 0;
  int statistics_updates_ = 0;
  int accumulated_step_ = 0;  // t of the last accumulate (selects s for apply)
  int step_ = 0;              // apply calls, the initialising one included
  int basis_version_ = 0;
  int basis_stats_step_ = 0;
};

}  // namespace asteria::optim
