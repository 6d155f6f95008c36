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
void AdamWBlock<T>::accumulate(ops::Device& /*device*/, linalg::ConstMatrixView<T> /*grad*/, Step /*t*/) {
  // Moments are updated in apply(): AdamW has no statistics separate from its moments.
}

template <Real T>
bool AdamWBlock<T>::apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad,
                          Step /*t*/) {
  const Step t = this->state_.counter(step_) + 1;
  const double bias_correction1 = 1.0 - std::pow(hp_.beta1, static_cast<double>(t));
  const double bias_correction2 = 1.0 - std::pow(hp_.beta2, static_cast<double>(t));
  const ops::AdamWStep<T> rule{static_cast<T>(hp_.beta1),
                               static_cast<T>(hp_.beta2),
                               static_cast<T>(hp_.lr / bias_correction1),
                               static_cast<T>(1.0 / std::sqrt(bias_correction2)),
                               static_cast<T>(hp_.eps),
                               static_cast<T>(hp_.lr * hp_.weight_decay)};
  const ops::Flag non_finite = device.flag();
  device.update(non_finite, rule, weights, this->state_.tensor(m_), this->state_.tensor(v_), grad);
  if (device.raised(non_finite)) return false;
  this->state_.counter(step_) = t;
  return true;
}

template class AdamWBlock<float>;
template class AdamWBlock<double>;

}  // namespace asteria::optim
