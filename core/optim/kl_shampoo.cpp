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
T KlShampooBlock<T>::clamp_limit(index dimension) const {
  if (hp_.kl_max_clamp_value <= 0.0) return std::numeric_limits<T>::infinity();
  return static_cast<T>(std::max(10.0, std::min(static_cast<double>(dimension), hp_.kl_max_clamp_value)));
}

namespace {

// λ ← β λ + (1−β)·estimate on the stored s = λ^(−1/2), with the reference's conventions: a zero
// s stands for λ = 0, a non-finite s becomes 0, and s is clamped from above.
template <Real T>
void update_inv_sqrt_eigenvalues(MatrixView<T> inv_sqrt, const std::vector<T>& estimate, T beta, T limit) {
  for (index i = 0; i < inv_sqrt.rows(); ++i) {
    const T s = inv_sqrt(i, 0);
    T lambda = T(1) / (s * s);
    if (!std::isfinite(lambda)) lambda = T(0);
    lambda = beta * lambda + (T(1) - beta) * estimate[static_cast<std::size_t>(i)];
    T next = T(1) / std::sqrt(lambda);
    if (!std::isfinite(next)) next = T(0);
    inv_sqrt(i, 0) = std::min(next, limit);
  }
}

}  // namespace

template <Real T>
void KlShampooBlock<T>::update_statistics(ConstMatrixView<T> grad) {
  BlockState<T>& s = this->state_;
  const index rows = this->rows();
  const index cols = this->cols();
  const T beta = static_cast<T>(hp_.effective_shampoo_beta());
  const ConstMatrixView<T> q_left = s.tensor(left_basis_);
  const ConstMatrixView<T> q_right = s.tensor(right_basis_);
  const ConstMatrixView<T> s_left = s.tensor(left_inv_sqrt_before_);
  const ConstMatrixView<T> s_right = s.tensor(right_inv_sqrt_before_);

  Matrix<T> left_projected(rows, cols), right_projected(rows, cols), both(rows, cols);
  linalg::gemm<T>(T(1), q_left, Op::transpose, grad, Op::none, T(0), left_projected.view());     // Q_aᵀ G
  linalg::gemm<T>(T(1), grad, Op::none, q_right, Op::none, T(0), right_projected.view());        // G Q_b
  linalg::gemm<T>(T(1), left_projected.view(), Op::none, q_right, Op::none, T(0), both.view());  // Q_aᵀ G Q_b

  // Eigenvalue estimates from the start-of-step s: diag(Q_aᵀ G Ŝ_b⁻¹ Gᵀ Q_a)/d_b and likewise.
  std::vector<T> left_estimate(static_cast<std::size_t>(rows), T(0));
  std::vector<T> right_estimate(static_cast<std::size_t>(cols), T(0));
  for (index i = 0; i < rows; ++i)
    for (index j = 0; j < cols; ++j) {
      const T c2 = both(i, j) * both(i, j);
      left_estimate[static_cast<std::size_t>(i)] += c2 * s_right(j, 0) * s_right(j, 0);
      right_estimate[static_cast<std::size_t>(j)] += c2 * s_left(i, 0) * s_left(i, 0);
    }
  for (T& x : left_estimate) x /= static_cast<T>(cols);
  for (T& x : right_estimate) x /= static_cast<T>(rows);

  // S_b ← β S_b + (1−β)/d_a (diag(s_a) Q_aᵀ G)ᵀ(diag(s_a) Q_aᵀ G) = … Gᵀ Ŝ_a⁻¹ G; S_a likewise.
  for (index i = 0; i < rows; ++i)
    for (index j = 0; j < cols; ++j) {
      left_projected(i, j) *= s_left(i, 0);
      right_projected(i, j) *= s_right(j, 0);
    }
  linalg::syrk<T>((T(1) - beta) / static_cast<T>(rows), left_projected.view(), Op::transpose, beta,
                  s.tensor(right_stats_));
  linalg::syrk<T>((T(1) - beta) / static_cast<T>(cols), right_projected.view(), Op::none, beta, s.tensor(left_stats_));

  update_inv_sqrt_eigenvalues(s.tensor(left_inv_sqrt_), left_estimate, beta, clamp_limit(rows));
  update_inv_sqrt_eigenvalues(s.tensor(right_inv_sqrt_), right_estimate, beta, clamp_limit(cols));
}

template <Real T>
void KlShampooBlock<T>::accumulate(ConstMatrixView<T> grad, Step t) {
  BlockState<T>& s = this->state_;
  // Keep the start-of-step eigenvalues: this step's update (apply) must read them.
  linalg::copy(ConstMatrixView<T>(s.tensor(left_inv_sqrt_)), s.tensor(left_inv_sqrt_before_));
  linalg::copy(ConstMatrixView<T>(s.tensor(right_inv_sqrt_)), s.tensor(right_inv_sqrt_before_));
  s.counter(accumulated_step_) = t;
  if (s.counter(statistics_updates_) == 0) {
    // No basis or eigenvalues yet: plain two-sided statistics, as the reference's first step.
    const T beta = static_cast<T>(hp_.effective_shampoo_beta());
    linalg::syrk<T>((T(1) - beta) / static_cast<T>(this->cols()), grad, Op::none, beta, s.tensor(left_stats_));
    linalg::syrk<T>((T(1) - beta) / static_cast<T>(this->rows()), grad, Op::transpose, beta, s.tensor(right_stats_));
  } else {
    update_statistics(grad);
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
std::unique_ptr<RefreshJob<T>> KlShampooBlock<T>::snapshot(Step t) const {
  return snapshot_reusing(t, nullptr);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> KlShampooBlock<T>::snapshot_reusing(Step t, std::unique_ptr<RefreshJob<T>> spare) const {
  const BlockState<T>& s = this->state_;
  return take_eigenbasis_snapshot<T>({t, s.counter(basis_version_), s.tensor(left_stats_), s.tensor(right_stats_),
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
void KlShampooBlock<T>::publish(RefreshJob<T>& finished) {
  auto* job = dynamic_cast<EigenbasisRefreshJob<T>*>(&finished);
  if (job == nullptr) throw Error("kl-shampoo: publish() was given a refresh job of another optimizer");
  BlockState<T>& s = this->state_;
  linalg::copy(job->new_basis(Side::left), s.tensor(left_basis_));
  linalg::copy(job->new_basis(Side::right), s.tensor(right_basis_));
  if (job->full()) reset_eigenvalues();
  ++s.counter(basis_version_);
  s.counter(basis_stats_step_) = job->stats_step();
}

template <Real T>
bool KlShampooBlock<T>::apply(MatrixView<T> weights, ConstMatrixView<T> grad, Step t) {
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
  MatrixView<T> m = s.tensor(m_);

  // The new momentum is committed only together with the weights.
  const T b1 = static_cast<T>(hp_.beta1);
  Matrix<T> momentum(rows, cols), half(rows, cols), projected(rows, cols);
  for (index i = 0; i < rows; ++i)
    for (index j = 0; j < cols; ++j) momentum(i, j) = b1 * m(i, j) + (T(1) - b1) * grad(i, j);

  linalg::gemm<T>(T(1), q_left, Op::transpose, momentum.view(), Op::none, T(0), half.view());
  linalg::gemm<T>(T(1), half.view(), Op::none, q_right, Op::none, T(0), projected.view());
  const T eps = static_cast<T>(hp_.eps);
  for (index i = 0; i < rows; ++i)
    for (index j = 0; j < cols; ++j) {
      const T scale = s_left(i, 0) * s_right(j, 0);
      projected(i, j) *= scale / (T(1) + eps * scale);
    }
  linalg::gemm<T>(T(1), q_left, Op::none, projected.view(), Op::none, T(0), half.view());
  linalg::gemm<T>(T(1), half.view(), Op::none, q_right, Op::transpose, T(0), projected.view());

  if (!write_update_then_decay<T>(weights, projected.view(), static_cast<T>(hp_.lr),
                                  static_cast<T>(hp_.lr * hp_.weight_decay)))
    return false;
  linalg::copy(ConstMatrixView<T>(momentum.view()), m);
  s.counter(step_) = k;
  return true;
}

template class KlShampooBlock<float>;
template class KlShampooBlock<double>;

}  // namespace asteria::optim
