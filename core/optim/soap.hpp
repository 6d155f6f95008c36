#pragma once
// SOAP (nikhilvyas/SOAP, arXiv 2409.11321): Adam run in the eigenbasis of Shampoo's
// statistics, per block. ALGORITHMS.md "SOAP" gives the equations.
//
// Schedule of the block's k-th step (k counts the steps that reached the block; the block's
// first finite gradient is k = 1), in the synchronous order of block_optimizer.hpp:
//   accumulate  L ← sβ L + (1−sβ) G Gᵀ,  R ← sβ R + (1−sβ) Gᵀ G   (every step, k = 1 included;
//               the update never reads L or R, so its order relative to apply is free).
//   refresh_due k = 1, then k = 1 + f, 1 + 2f, … (the reference refreshes after the update of its
//               (k−1)-th Adam step when (k−1) % f == 0, with the step's own G in L and R).
//   snapshot    L, R and the current bases. The first job (no basis published yet) is a full
//               eigh, columns by descending eigenvalue; later jobs are warm: estimate
//               diag(Qᵀ F Q), sort descending, one power step F·Q, orthogonalize.
//   apply       k = 1: no update (the reference initialises its basis from G₁ and skips G₁);
//               nor later while no basis has been published (see below).
//               k > 1: G′ = Q_Lᵀ G Q_R; m ← β1 m + (1−β1) G′; v ← β2 v + (1−β2) G′²;
//               W ← (W − lr·√(1−β2^s)/(1−β1^s) · Q_L (m/(√v+ε)) Q_Rᵀ)·(1 − lr·wd), s = k − 1
//               (the number of moment updates, as the reference's step counter; since the
//               moments' restart, see below).
//   publish     activation_delay() = 1: after the step's apply, so step k+1 uses the new basis.
//               m (kept in the current basis) is rotated exactly into the new one:
//               m ← (Q_L,newᵀ Q_L) m (Q_Rᵀ Q_R,new), with the change-of-basis matrices computed
//               by the refresh job (off the critical path); v's rows and columns are permuted by
//               the job's sort order (hp.soap_second_moment = permute, the reference's), or
//               rotated with m: v ← (C_L∘C_L) v (C_R∘C_R)ᵀ (= rotate). Rotating m only here
//               equals the reference's rotate back and forth every step.
//
// Before the first publish the bases are the identity. A runtime that publishes the first job
// S steps late makes no update meanwhile (as the reference's initialising step), unless
// hp.soap_adam_before_first_basis, which runs plain Adam (with SOAP's bias correction) in the
// identity basis. Either way the first publish restarts m, v and the bias correction (s counts
// the updates since), so the block enters its first eigenbasis as the reference does. (Carrying
// v over from Adam steps would put per-coordinate magnitudes on unrelated eigen-directions;
// where v is ~0 and the rotated m is not, the update is m/ε.) At S = 0 the first basis lands
// before the second step and neither rule changes anything.
//
// Later publishes (permute): v is permuted only when the job started from the basis that is
// still installed; a job snapshotted from an older basis (possible only when S >= f) leaves v
// as it is — every basis is (approximately) in descending eigenvalue order, so axis k still
// means "k-th largest", which is the correspondence the permutation maintains.
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/shape_model.hpp"

namespace asteria::optim {

template <Real T>
class SoapBlock final : public BlockOptimizer<T> {
 public:
  SoapBlock(const Hyperparameters& hp, index rows, index cols);
  std::string_view name() const noexcept override { return "soap"; }

  void accumulate(ops::Device& device, linalg::ConstMatrixView<T> grad, Step t) override;
  std::int64_t statistics_updates() const noexcept override;
  bool refresh_due_after(std::int64_t updates) const override;
  std::unique_ptr<RefreshJob<T>> snapshot(ops::Device& device, Step t) const override;
  std::unique_ptr<RefreshJob<T>> snapshot_reusing(ops::Device& device, Step t,
                                                  std::unique_ptr<RefreshJob<T>> spare) const override;
  std::unique_ptr<RefreshJob<T>> receiver(Step t, std::unique_ptr<RefreshJob<T>> spare) const override;
  std::unique_ptr<RefreshJob<T>> resumed(Step stats_step, std::int64_t stamp) const override;
  void publish(ops::Device& device, RefreshJob<T>& finished) override;
  int activation_delay() const noexcept override { return optim::activation_delay(OptimizerKind::soap); }
  bool apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step t) override;

  // Number of bases published so far (0: the identity placeholder is in use).
  std::int64_t basis_version() const noexcept { return this->state_.counter(basis_version_); }

 private:
  // The change-of-basis matrices are the device's memory.
  void rotate_momentum(ops::Device& device, linalg::ConstMatrixView<T> left_change,
                       linalg::ConstMatrixView<T> right_change);
  void rotate_second_moment(ops::Device& device, linalg::ConstMatrixView<T> left_change,
                            linalg::ConstMatrixView<T> right_change);

  Hyperparameters hp_;
  int m_ = 0;            // first moment, in the current basis
  int v_ = 0;            // second moment, in the current basis
  int left_stats_ = 0;   // L (rows x rows)
  int right_stats_ = 0;  // R (cols x cols)
  int left_basis_ = 0;   // Q_L
  int right_basis_ = 0;  // Q_R
  int statistics_updates_ = 0;
  int step_ = 0;  // apply calls, the initialising one included
  int basis_version_ = 0;
  int basis_stats_step_ = 0;  // stats step of the installed basis (0: identity)
  int moments_restart_ = 0;   // moment updates made before the moments restarted (first basis)
};

}  // namespace asteria::optim
