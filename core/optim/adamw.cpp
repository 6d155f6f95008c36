#include "core/optim/adamw.hpp"

#include <cmath>

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

  for (index i = 0; i < m.rows(); ++i)
    for (index j = 0; j < m.cols(); ++j) {
      const T g = grad(i, j);
      m(i, j) = b1 * m(i, j) + (T(1) - b1) * g;
      v(i, j) = b2 * v(i, j) + (T(1) - b2) * g * g;
    }
  auto delta = [&](index i, index j) {
    return lr * (m(i, j) / bc1) / (std::sqrt(v(i, j) / bc2) + eps) + decay * weights(i, j);
  };
  // Check the whole update before writing any weight: nothing non-finite reaches them.
  for (index i = 0; i < m.rows(); ++i)
    for (index j = 0; j < m.cols(); ++j)
      if (!std::isfinite(delta(i, j))) return false;
  for (index i = 0; i < m.rows(); ++i)
    for (index j = 0; j < m.cols(); ++j) weights(i, j) -= delta(i, j);
  this->state_.counter(step_) = t;
  return true;
}

template class AdamWBlock<float>;
template class AdamWBlock<double>;

}  // namespace asteria::optim
