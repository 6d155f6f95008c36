#include "core/optim/kl_shampoo.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/common/error.hpp"
#include "core/linalg/blas.hpp"
#include "core/optim/eigenbasis_refresh.hpp"
#include "core/optim/shape_model.hpp"

namespace asteria::optim {

using linalg::ConstMatrixView;
using linalg::Matrix;
using linalg::MatrixView;
using linalg::Op;

template <Real T>
KlShampooBlock<T>::KlShampooBlock(const Hyperparameters& hp, index rows, index cols)
    : BlockOptimizer<T>(rows, cols), hp_(hp) {
  BlockState<T>& s = this->state_;
  s.add_layout(state_layout(OptimizerKind::kl_shampoo, hp, rows, cols), state_counters(OptimizerKind::kl_shampoo, hp));
  m_ = s.tensor_slot("exp_avg");
  left_stats_ = s.tensor_slot("stats_left");
  right_stats_ = s.tensor_slot("stats_right");
  left_basis_ = s.tensor_slot("basis_left");
  right_basis_ = s.tensor_slot("basis_right");
  left_inv_sqrt_ = s.tensor_slot("inv_sqrt_eigenvalues_left");
  right_inv_sqrt_ = s.tensor_slot("inv_sqrt_eigenvalues_right");
  left_inv_sqrt_before_ = s.tensor_slot("inv_sqrt_eigenvalues_left_before");
  right_inv_sqrt_before_ = s.tensor_slot("inv_sqrt_eigenvalues_right_before");
  statistics_updates_ = s.counter_slot(statistics_counter(OptimizerKind::kl_shampoo));
  accumulated_step_ = s.counter_slot("accumulated_step");
  step_ = s.counter_slot("step");
  basis_version_ = s.counter_slot("basis_version");
  basis_stats_step_ = s.counter_slot("basis_stats_step");
  // Identity bases until the first refresh is published (see the header).
  for (int slot : {left_basis_, right_basis_}) {
    MatrixView<T> q = s.tensor(slot);
    for (index i = 0; i < q.rows(); ++i) q(i, i) = T(1);
  }
  reset_eigenvalues();
}

template <Real T>
void KlShampooBlock<T>::reset_eigenvalues() {
  const T initial = static_cast<T>(1.0 / std::sqrt(hp_.kl_init_eigenvalue));
  for (int slot : {left_inv_sqrt_, right_inv_sqrt_, left_inv_sqrt_before_, right_inv_sqrt_before_})
    linalg::fill(this->state_.tensor(slot), initial);
}

template <Real T>
void KlShampooBlock<T>::reset_eigenvalues(ops::Device& device) {
  const T initial = static_cast<T>(1.0 / std::sqrt(hp_.kl_init_eigenvalue));
  for (int slot : {left_inv_sqrt_, right_inv_sqrt_, left_inv_sqrt_before_, right_inv_sqrt_before_})
    device.fill(this->state_.tensor(slot), initial);
}

template <Real T>
T KlShampooBlock<T>::clamp_limit(index dimension) const {
  if (hp_.kl_max_clamp_value <= 0.0) return std::numeric_limits<T>::infinity();
  return static_cast<T>(std::max(10.0, std::min(static_cast<double>(dimension), hp_.kl_max_clamp_value)));
}

template <Real T>
void KlShampooBlock<T>::update_statistics(ops::Device& device, ConstMatrixView<T> grad) {
  BlockState<T>& s = this->state_;
  const index rows = this->rows();
  const index cols = this->cols();
  const T beta = static_cast<T>(hp_.effective_shampoo_beta());
  const ConstMatrixView<T> q_left = s.tensor(left_basis_);
  const ConstMatrixView<T> q_right = s.tensor(right_basis_);
  const ConstMatrixView<T> s_left = s.tensor(left_inv_sqrt_before_);
  const ConstMatrixView<T> s_right = s.tensor(right_inv_sqrt_before_);

  ops::Buffer left_projected = device.matrix<T>(rows, cols);
  ops::Buffer right_projected = device.matrix<T>(rows, cols);
  ops::Buffer both = device.matrix<T>(rows, cols);
  device.gemm<T>(T(1), q_left, Op::transpose, grad, Op::none, T(0), left_projected.view<T>());  // Q_aᵀ G
  device.gemm<T>(T(1), grad, Op::none, q_right, Op::none, T(0), right_projected.view<T>());     // G Q_b
  device.gemm<T>(T(1), left_projected.view<T>(), Op::none, q_right, Op::none, T(0), both.view<T>());  // Q_aᵀ G Q_b

  // Eigenvalue estimates from the start-of-step s: diag(Q_aᵀ G Ŝ_b⁻¹ Gᵀ Q_a)/d_b and likewise.
  ops::Buffer left_estimate = device.matrix<T>(rows, 1);
  ops::Buffer right_estimate = device.matrix<T>(cols, 1);
  device.kl_estimates<T>(both.view<T>(), s_left, s_right, left_estimate.view<T>(), right_estimate.view<T>());

  // S_b ← β S_b + (1−β)/d_a (diag(s_a) Q_aᵀ G)ᵀ(diag(s_a) Q_aᵀ G) = … Gᵀ Ŝ_a⁻¹ G; S_a likewise.
  device.map(ops::ScaleRows<T>{}, left_projected.view<T>(), s_left);
  device.map(ops::ScaleCols<T>{}, right_projected.view<T>(), s_right);
  device.syrk<T>((T(1) - beta) / static_cast<T>(rows), left_projected.view<T>(), Op::transpose, beta,
                 s.tensor(right_stats_));
  device.syrk<T>((T(1) - beta) / static_cast<T>(cols), right_projected.view<T>(), Op::none, beta,
                 s.tensor(left_stats_));

  device.map(ops::KlInverseSqrtEigenvalues<T>{beta, clamp_limit(rows)}, s.tensor(left_inv_sqrt_),
             ConstMatrixView<T>(left_estimate.view<T>()));
  device.map(ops::KlInverseSqrtEigenvalues<T>{beta, clamp_limit(cols)}, s.tensor(right_inv_sqrt_),
             ConstMatrixView<T>(right_estimate.view<T>()));
}

template <Real T>
void KlShampooBlock<T>::accumulate(ops::Device& device, ConstMatrixView<T> grad, Step t) {
  BlockState<T>& s = this->state_;
  // Keep the start-of-step eigenvalues: this step's update (apply) must read them.
  device.copy<T>(s.tensor(left_inv_sqrt_), s.tensor(left_inv_sqrt_before_));
  device.copy<T>(s.tensor(right_inv_sqrt_), s.tensor(right_inv_sqrt_before_));
  s.counter(accumulated_step_) = t;
  if (s.counter(statistics_updates_) == 0) {
    // No basis or eigenvalues yet: plain two-sided statistics, as the reference's first step.
    const T beta = static_cast<T>(hp_.effective_shampoo_beta());
    device.syrk<T>((T(1) - beta) / static_cast<T>(this->cols()), grad, Op::none, beta, s.tensor(left_stats_));
    device.syrk<T>((T(1) - beta) / static_cast<T>(this->rows()), grad, Op::transpose, beta, s.tensor(right_stats_));
  } else {
    update_statistics(device, grad);
  }
  ++s.counter(statistics_updates_);
}

template <Real T>
std::int64_t KlShampooBlock<T>::statistics_updates() const noexcept {
  return this->state_.counter(statistics_updates_);
}

template <Real T>
bool KlShampooBlock<T>::refresh_due_after(std::int64_t updates) const {
  return optim::refresh_due_after(OptimizerKind::kl_shampoo, hp_, updates);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> KlShampooBlock<T>::snapshot(ops::Device& device, Step t) const {
  return snapshot_reusing(device, t, nullptr);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> KlShampooBlock<T>::snapshot_reusing(ops::Device& device, Step t,
                                                                   std::unique_ptr<RefreshJob<T>> spare) const {
  const BlockState<T>& s = this->state_;
  return take_eigenbasis_snapshot<T>(device,
                                     {t, s.counter(basis_version_), s.tensor(left_stats_), s.tensor(right_stats_),
                                      s.tensor(left_basis_), s.tensor(right_basis_), linalg::EigenvalueOrder::keep,
                                      hp_.basis_orthogonalization, /*compute_change_of_basis=*/false},
                                     std::move(spare));
}

template <Real T>
std::unique_ptr<RefreshJob<T>> KlShampooBlock<T>::receiver(Step t, std::unique_ptr<RefreshJob<T>> spare) const {
  const BlockState<T>& s = this->state_;
  return take_eigenbasis_receiver<T>({t, s.counter(basis_version_), s.tensor(left_stats_), s.tensor(right_stats_),
                                      s.tensor(left_basis_), s.tensor(right_basis_), linalg::EigenvalueOrder::keep,
                                      hp_.basis_orthogonalization, /*compute_change_of_basis=*/false},
                                     std::move(spare));
}

template <Real T>
std::unique_ptr<RefreshJob<T>> KlShampooBlock<T>::resumed(Step stats_step, std::int64_t stamp) const {
  // Sizes from the layout: the state may rest evicted (on NVMe) while a checkpoint is restored.
  const std::vector<TensorSlot>& layout = this->state_.layout();
  return std::make_unique<EigenbasisRefreshJob<T>>(stats_step, stamp, layout[static_cast<std::size_t>(left_stats_)].rows,
                                                   layout[static_cast<std::size_t>(right_stats_)].rows,
                                                   linalg::EigenvalueOrder::keep, hp_.basis_orthogonalization,
                                                   /*compute_change_of_basis=*/false);
}

template <Real T>
void KlShampooBlock<T>::publish(ops::Device& device, RefreshJob<T>& finished) {
  auto* job = dynamic_cast<EigenbasisRefreshJob<T>*>(&finished);
  if (job == nullptr) throw Error("kl-shampoo: publish() was given a refresh job of another optimizer");
  BlockState<T>& s = this->state_;
  device.upload_async(job->new_basis(Side::left), s.tensor(left_basis_));
  device.upload_async(job->new_basis(Side::right), s.tensor(right_basis_));
  if (job->full()) reset_eigenvalues(device);
  ++s.counter(basis_version_);
  s.counter(basis_stats_step_) = job->stats_step();
}

template <Real T>
bool KlShampooBlock<T>::apply(ops::Device& device, MatrixView<T> weights, ConstMatrixView<T> grad, Step t) {
  BlockState<T>& s = this->state_;
  const std::int64_t k = s.counter(step_) + 1;
  if (k == 1) {  // the initialising step makes no update
    s.counter(step_) = k;
    return true;
  }
  const index rows = this->rows();
  const index cols = this->cols();
  const bool accumulated_this_step = s.counter(accumulated_step_) == t;
  const ConstMatrixView<T> s_left = s.tensor(accumulated_this_step ? left_inv_sqrt_before_ : left_inv_sqrt_);
  const ConstMatrixView<T> s_right = s.tensor(accumulated_this_step ? right_inv_sqrt_before_ : right_inv_sqrt_);
  const ConstMatrixView<T> q_left = s.tensor(left_basis_);
  const ConstMatrixView<T> q_right = s.tensor(right_basis_);

  // The new momentum is committed only together with the weights.
  ops::Buffer momentum = device.matrix<T>(rows, cols);
  ops::Buffer half = device.matrix<T>(rows, cols);
  ops::Buffer projected = device.matrix<T>(rows, cols);
  device.map(ops::MomentumLerp<T>{static_cast<T>(hp_.beta1)}, momentum.view<T>(), ConstMatrixView<T>(s.tensor(m_)),
             grad);

  device.gemm<T>(T(1), q_left, Op::transpose, momentum.view<T>(), Op::none, T(0), half.view<T>());
  device.gemm<T>(T(1), half.view<T>(), Op::none, q_right, Op::none, T(0), projected.view<T>());
  device.map(ops::KlPrecondition<T>{static_cast<T>(hp_.eps)}, projected.view<T>(), s_left, s_right);
  device.gemm<T>(T(1), q_left, Op::none, projected.view<T>(), Op::none, T(0), half.view<T>());
  device.gemm<T>(T(1), half.view<T>(), Op::none, q_right, Op::transpose, T(0), projected.view<T>());

  const ops::Flag non_finite = device.flag();
  device.checked_write(non_finite,
                       ops::DescentThenDecay<T>{static_cast<T>(hp_.lr), T(1) - static_cast<T>(hp_.lr * hp_.weight_decay)},
                       weights, ConstMatrixView<T>(projected.view<T>()));
  device.map_unless_raised(non_finite, ops::Assign<T>{}, s.tensor(m_), ConstMatrixView<T>(momentum.view<T>()));
  if (device.raised(non_finite)) return false;
  s.counter(step_) = k;
  return true;
}

template class KlShampooBlock<float>;
template class KlShampooBlock<double>;

}  // namespace asteria::optim
