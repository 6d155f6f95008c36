#include "core/optim/soap.hpp"

#include <cmath>

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
SoapBlock<T>::SoapBlock(const Hyperparameters& hp, index rows, index cols) : BlockOptimizer<T>(rows, cols), hp_(hp) {
  BlockState<T>& s = this->state_;
  s.add_layout(state_layout(OptimizerKind::soap, hp, rows, cols), state_counters(OptimizerKind::soap, hp));
  m_ = s.tensor_slot("exp_avg");
  v_ = s.tensor_slot("exp_avg_sq");
  left_stats_ = s.tensor_slot("stats_left");
  right_stats_ = s.tensor_slot("stats_right");
  left_basis_ = s.tensor_slot("basis_left");
  right_basis_ = s.tensor_slot("basis_right");
  statistics_updates_ = s.counter_slot(statistics_counter(OptimizerKind::soap));
  step_ = s.counter_slot("step");
  basis_version_ = s.counter_slot("basis_version");
  basis_stats_step_ = s.counter_slot("basis_stats_step");
  moments_restart_ = s.counter_slot("moments_restart");
  // Identity bases until the first refresh is published (see the header).
  for (int slot : {left_basis_, right_basis_}) {
    MatrixView<T> q = s.tensor(slot);
    for (index i = 0; i < q.rows(); ++i) q(i, i) = T(1);
  }
}

template <Real T>
void SoapBlock<T>::accumulate(ops::Device& device, ConstMatrixView<T> grad, Step /*t*/) {
  const T beta = static_cast<T>(hp_.effective_shampoo_beta());
  device.syrk<T>(T(1) - beta, grad, Op::none, beta, this->state_.tensor(left_stats_));
  device.syrk<T>(T(1) - beta, grad, Op::transpose, beta, this->state_.tensor(right_stats_));
  ++this->state_.counter(statistics_updates_);
}

template <Real T>
std::int64_t SoapBlock<T>::statistics_updates() const noexcept {
  return this->state_.counter(statistics_updates_);
}

template <Real T>
bool SoapBlock<T>::refresh_due_after(std::int64_t updates) const {
  return optim::refresh_due_after(OptimizerKind::soap, hp_, updates);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> SoapBlock<T>::snapshot(ops::Device& device, Step t) const {
  return snapshot_reusing(device, t, nullptr);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> SoapBlock<T>::snapshot_reusing(ops::Device& device, Step t,
                                                              std::unique_ptr<RefreshJob<T>> spare) const {
  const BlockState<T>& s = this->state_;
  return take_eigenbasis_snapshot<T>(device,
                                     {t, s.counter(basis_version_), s.tensor(left_stats_), s.tensor(right_stats_),
                                      s.tensor(left_basis_), s.tensor(right_basis_), linalg::EigenvalueOrder::descending,
                                      hp_.basis_orthogonalization, /*compute_change_of_basis=*/true},
                                     std::move(spare));
}

template <Real T>
std::unique_ptr<RefreshJob<T>> SoapBlock<T>::receiver(Step t, std::unique_ptr<RefreshJob<T>> spare) const {
  const BlockState<T>& s = this->state_;
  return take_eigenbasis_receiver<T>({t, s.counter(basis_version_), s.tensor(left_stats_), s.tensor(right_stats_),
                                      s.tensor(left_basis_), s.tensor(right_basis_), linalg::EigenvalueOrder::descending,
                                      hp_.basis_orthogonalization, /*compute_change_of_basis=*/true},
                                     std::move(spare));
}

template <Real T>
std::unique_ptr<RefreshJob<T>> SoapBlock<T>::resumed(Step stats_step, std::int64_t stamp) const {
  // Sizes from the layout: the state may rest evicted (on NVMe) while a checkpoint is restored.
  const std::vector<TensorSlot>& layout = this->state_.layout();
  return std::make_unique<EigenbasisRefreshJob<T>>(stats_step, stamp, layout[static_cast<std::size_t>(left_stats_)].rows,
                                                   layout[static_cast<std::size_t>(right_stats_)].rows,
                                                   linalg::EigenvalueOrder::descending, hp_.basis_orthogonalization,
                                                   /*compute_change_of_basis=*/true);
}

template <Real T>
void SoapBlock<T>::rotate_momentum(ops::Device& device, ConstMatrixView<T> left_change,
                                   ConstMatrixView<T> right_change) {
  // m ← C_L m C_Rᵀ with C = Q_newᵀ Q_installed: back to the original space and into the new basis.
  MatrixView<T> m = this->state_.tensor(m_);
  ops::Buffer half = device.matrix<T>(this->rows(), this->cols());
  device.gemm<T>(T(1), left_change, Op::none, ConstMatrixView<T>(m), Op::none, T(0), half.view<T>());
  device.gemm<T>(T(1), half.view<T>(), Op::none, right_change, Op::transpose, T(0), m);
}

template <Real T>
void SoapBlock<T>::rotate_second_moment(ops::Device& device, ConstMatrixView<T> left_change,
                                        ConstMatrixView<T> right_change) {
  // v ← (C_L∘C_L) v (C_R∘C_R)ᵀ: each new coordinate's v is the rotation-weighted mix of the old
  // ones, the diagonal of C diag(v) Cᵀ per side (exact when the old coordinates are uncorrelated).
  ops::Buffer left = device.matrix<T>(left_change.rows(), left_change.cols());
  ops::Buffer right = device.matrix<T>(right_change.rows(), right_change.cols());
  device.map(ops::Square<T>{}, left.view<T>(), left_change);
  device.map(ops::Square<T>{}, right.view<T>(), right_change);
  MatrixView<T> v = this->state_.tensor(v_);
  ops::Buffer half = device.matrix<T>(this->rows(), this->cols());
  device.gemm<T>(T(1), left.view<T>(), Op::none, ConstMatrixView<T>(v), Op::none, T(0), half.view<T>());
  device.gemm<T>(T(1), half.view<T>(), Op::none, right.view<T>(), Op::transpose, T(0), v);
}

template <Real T>
void SoapBlock<T>::publish(ops::Device& device, RefreshJob<T>& finished) {
  auto* job = dynamic_cast<EigenbasisRefreshJob<T>*>(&finished);
  if (job == nullptr) throw Error("soap: publish() was given a refresh job of another optimizer");
  BlockState<T>& s = this->state_;
  const index rows = this->rows();
  const index cols = this->cols();
  // The job's results are host memory; the block's state is the device's.
  if (s.counter(basis_version_) == 0 && s.counter(step_) > 1) {
    // The first basis, published late (S > 0): the moments and the bias correction restart in
    // it, as the reference's do at its first basis. After identity-basis (plain Adam) updates,
    // v's per-coordinate magnitudes would otherwise sit on unrelated eigen-directions, and where
    // v is ~0 but the rotated m is not, m/(√v+ε) reaches m/ε.
    device.fill(s.tensor(m_), T(0));
    device.fill(s.tensor(v_), T(0));
    s.counter(moments_restart_) = s.counter(step_) - 1;
  } else if (job->from_version() == s.counter(basis_version_)) {
    // The job started from the installed basis: its change of basis and sort order apply.
    ops::Buffer left_change = device.matrix<T>(rows, rows);
    ops::Buffer right_change = device.matrix<T>(cols, cols);
    device.upload_async(job->change_of_basis(Side::left), left_change.view<T>());
    device.upload_async(job->change_of_basis(Side::right), right_change.view<T>());
    rotate_momentum(device, left_change.view<T>(), right_change.view<T>());
    if (hp_.soap_second_moment == SecondMomentOnRefresh::rotate)
      rotate_second_moment(device, left_change.view<T>(), right_change.view<T>());
    else
      device.permute<T>(s.tensor(v_), job->order(Side::left), job->order(Side::right));
  } else {
    // Started from an older basis (published late): rotate from the installed one; under
    // `permute` v keeps its axes (see the header).
    ops::Buffer left_basis = device.matrix<T>(rows, rows);
    ops::Buffer right_basis = device.matrix<T>(cols, cols);
    device.upload_async(job->new_basis(Side::left), left_basis.view<T>());
    device.upload_async(job->new_basis(Side::right), right_basis.view<T>());
    ops::Buffer left_change = device.matrix<T>(rows, rows);
    ops::Buffer right_change = device.matrix<T>(cols, cols);
    device.gemm<T>(T(1), left_basis.view<T>(), Op::transpose, ConstMatrixView<T>(s.tensor(left_basis_)), Op::none,
                   T(0), left_change.view<T>());
    device.gemm<T>(T(1), right_basis.view<T>(), Op::transpose, ConstMatrixView<T>(s.tensor(right_basis_)), Op::none,
                   T(0), right_change.view<T>());
    rotate_momentum(device, left_change.view<T>(), right_change.view<T>());
    if (hp_.soap_second_moment == SecondMomentOnRefresh::rotate)
      rotate_second_moment(device, left_change.view<T>(), right_change.view<T>());
  }
  device.upload_async(job->new_basis(Side::left), s.tensor(left_basis_));
  device.upload_async(job->new_basis(Side::right), s.tensor(right_basis_));
  ++s.counter(basis_version_);
  s.counter(basis_stats_step_) = job->stats_step();
}

template <Real T>
bool SoapBlock<T>::apply(ops::Device& device, MatrixView<T> weights, ConstMatrixView<T> grad, Step /*t*/) {
  BlockState<T>& s = this->state_;
  const std::int64_t k = s.counter(step_) + 1;
  const bool identity_basis = s.counter(basis_version_) == 0;
  if (k == 1 || (identity_basis && !hp_.soap_adam_before_first_basis)) {
    // The initialising step makes no update, nor do later ones until the first basis lands.
    s.counter(step_) = k;
    return true;
  }
  const index rows = this->rows();
  const index cols = this->cols();
  const ConstMatrixView<T> q_left = s.tensor(left_basis_);
  const ConstMatrixView<T> q_right = s.tensor(right_basis_);
  const T b1 = static_cast<T>(hp_.beta1);
  const T b2 = static_cast<T>(hp_.beta2);

  // G′ = Q_Lᵀ G Q_R
  ops::Buffer half = device.matrix<T>(rows, cols);
  ops::Buffer rotated = device.matrix<T>(rows, cols);
  ops::Buffer direction = device.matrix<T>(rows, cols);
  device.gemm<T>(T(1), q_left, Op::transpose, grad, Op::none, T(0), half.view<T>());
  device.gemm<T>(T(1), half.view<T>(), Op::none, q_right, Op::none, T(0), rotated.view<T>());

  // m′/(√v′+ε) from the moments the step would commit; m and v are committed only together with
  // the weights.
  device.map(ops::SoapDirection<T>{b1, b2, static_cast<T>(hp_.eps)}, direction.view<T>(), s.tensor(m_),
             s.tensor(v_), rotated.view<T>());

  // D = Q_L (m/(√v+ε)) Q_Rᵀ
  device.gemm<T>(T(1), q_left, Op::none, direction.view<T>(), Op::none, T(0), half.view<T>());
  device.gemm<T>(T(1), half.view<T>(), Op::none, q_right, Op::transpose, T(0), direction.view<T>());

  const auto updates = static_cast<double>(k - 1 - s.counter(moments_restart_));
  const double step = hp_.lr * std::sqrt(1.0 - std::pow(hp_.beta2, updates)) / (1.0 - std::pow(hp_.beta1, updates));
  const ops::Flag non_finite = device.flag();
  device.checked_write(non_finite,
                       ops::DescentThenDecay<T>{static_cast<T>(step), T(1) - static_cast<T>(hp_.lr * hp_.weight_decay)},
                       weights, ConstMatrixView<T>(direction.view<T>()));
  device.map_unless_raised(non_finite, ops::SoapMoments<T>{b1, b2}, s.tensor(m_), s.tensor(v_),
                           ConstMatrixView<T>(rotated.view<T>()));
  if (device.raised(non_finite)) return false;
  s.counter(step_) = k;
  return true;
}

template class SoapBlock<float>;
template class SoapBlock<double>;

}  // namespace asteria::optim
