#include "core/optim/adamw.hpp"

#include <cmath>
#include <limits>

#include "core/optim/shape_model.hpp"

namespace asteria::optim {

template <Real T>
AdamWBlock<T>::AdamWBlock(const Hyperparameters& hp, index rows, index cols) : BlockOptimizer<T>(rows, cols), hp_(hp) {
  BlockState<T>& s = this->state_;
  s.add_layout(state_layout(OptimizerKind::adamw, hp, rows, cols), state_counters(OptimizerKind::adamw, hp));
  m_ = s.tensor_slot("exp_avg");
  v_ = s.tensor_slot("exp_avg_sq");
  step_ = s.counter_slot("step");
}

template <Real T>
void AdamWBlock<T>::accumulate(linalg::ConstMatrixView<T> grad, Step /*t*/) {
  // Moments are updated in apply(): AdamW has no statistics separate from its moments.
  (void)grad;
}

template <Real T>
bool AdamWBlock<T>::apply(linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step /*t*/) {
  auto m = this->state_.tensor(m_);
  auto v = this->state_.tensor(v_);
  const Step t = this->state_.counter(step_) + 1;
  const T b1 = static_cast<T>(hp_.beta1);
  const T b2 = static_cast<T>(hp_.beta2);
  const T bc1 = static_cast<T>(1.0 - std::pow(hp_.beta1, static_cast<double>(t)));
  const T bc2 = static_cast<T>(1.0 - std::pow(hp_.beta2, static_cast<double>(t)));
  const T lr = static_cast<T>(hp_.lr);
  const T eps = static_cast<T>(hp_.eps);
  const T decay = static_cast<T>(hp_.lr * hp_.weight_decay);

  // Row by row over raw pointers, the finiteness test folded into a flag: loops the compiler
  // vectorizes (the per-element arithmetic, hence every result, is as written).
  const T one_minus_b1 = T(1) - b1, one_minus_b2 = T(1) - b2;
  for (index i = 0; i < m.rows(); ++i) {
    T* __restrict mi = m.row(i).data();
    T* __restrict vi = v.row(i).data();
    const T* __restrict gi = grad.row(i).data();
    for (index j = 0; j < m.cols(); ++j) {
      const T g = gi[j];
      mi[j] = b1 * mi[j] + one_minus_b1 * g;
      vi[j] = b2 * vi[j] + one_minus_b2 * g * g;
    }
  }
  auto delta = [=](T mij, T vij, T wij) { return lr * (mij / bc1) / (std::sqrt(vij / bc2) + eps) + decay * wij; };
  // Check the whole update before writing any weight: nothing non-finite reaches them.
  // |x| <= max is false for NaN and ±inf alike.
  const T largest = std::numeric_limits<T>::max();
  bool finite = true;
  for (index i = 0; i < m.rows(); ++i) {
    const T* __restrict mi = m.row(i).data();
    const T* __restrict vi = v.row(i).data();
    const T* __restrict wi = weights.row(i).data();
    bool row_finite = true;
    for (index j = 0; j < m.cols(); ++j) row_finite &= std::abs(delta(mi[j], vi[j], wi[j])) <= largest;
    finite = finite && row_finite;
  }
  if (!finite) return false;
  for (index i = 0; i < m.rows(); ++i) {
    const T* __restrict mi = m.row(i).data();
    const T* __restrict vi = v.row(i).data();
    T* __restrict wi = weights.row(i).data();
    for (index j = 0; j < m.cols(); ++j) wi[j] -= delta(mi[j], vi[j], wi[j]);
  }
  this->state_.counter(step_) = t;
  return true;
}

template class AdamWBlock<float>;
template class AdamWBlock<double>;

}  // namespace asteria::optim
