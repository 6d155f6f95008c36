#include "core/optim/shampoo.hpp"

#include <cmath>
#include <stdexcept>

#include "core/linalg/blas.hpp"
#include "core/optim/shape_model.hpp"

namespace asteria::optim {
namespace {

// DS's grafting guard: ‖P_graft‖ / (‖P‖ + 1e-16).
constexpr double kGraftNormFloor = 1e-16;

template <Real T>
void set_identity(linalg::MatrixView<T> m) {
  linalg::fill(m, T(0));
  for (index i = 0; i < m.rows(); ++i) m(i, i) = T(1);
}

}  // namespace

template <Real T>
ShampooBlock<T>::ShampooBlock(const Hyperparameters& hp, index rows, index cols)
    : BlockOptimizer<T>(rows, cols), hp_(hp), settings_(shampoo_root_settings(hp)) {
  BlockState<T>& s = this->state_;
  s.add_layout(state_layout(OptimizerKind::shampoo, hp, rows, cols), state_counters(OptimizerKind::shampoo, hp));
  left_ = s.tensor_slot("L");
  right_ = s.tensor_slot("R");
  left_root_ = s.tensor_slot("L_root");
  right_root_ = s.tensor_slot("R_root");
  momentum_ = s.find_tensor("momentum");          // only when β1 > 0
  graft_sq_ = s.find_tensor("graft_exp_avg_sq");  // only with grafting
  step_ = s.counter_slot("step");
  stats_steps_ = s.counter_slot(statistics_counter(OptimizerKind::shampoo));
  root_stats_steps_ = s.counter_slot("root_stats_steps");
  set_identity(s.tensor(left_root_));
  set_identity(s.tensor(right_root_));
}

template <Real T>
void ShampooBlock<T>::accumulate(ops::Device& device, linalg::ConstMatrixView<T> grad, Step /*t*/) {
  // β2 = 1 is DS's AdaGrad-style sum; otherwise an EMA whose bias the refresh corrects.
  const bool sum = hp_.beta2 == 1.0;
  const T decay = sum ? T(1) : static_cast<T>(hp_.beta2);
  const T weight = sum ? T(1) : static_cast<T>(1.0 - hp_.beta2);
  if (!settings_.one_sided) device.syrk<T>(weight, grad, linalg::Op::none, decay, this->state_.tensor(left_));
  device.syrk<T>(weight, grad, linalg::Op::transpose, decay, this->state_.tensor(right_));
  ++this->state_.counter(stats_steps_);
}

template <Real T>
std::int64_t ShampooBlock<T>::statistics_updates() const noexcept {
  return this->state_.counter(stats_steps_);
}

template <Real T>
bool ShampooBlock<T>::refresh_due_after(std::int64_t updates) const {
  return optim::refresh_due_after(OptimizerKind::shampoo, hp_, updates);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> ShampooBlock<T>::snapshot(ops::Device& device, Step t) const {
  return snapshot_reusing(device, t, nullptr);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> ShampooBlock<T>::snapshot_reusing(ops::Device& device, Step t,
                                                                 std::unique_ptr<RefreshJob<T>> spare) const {
  const std::int64_t k = this->state_.counter(stats_steps_);
  const double bias_correction = hp_.beta2 < 1.0 ? 1.0 - std::pow(hp_.beta2, static_cast<double>(k)) : 1.0;
  if (auto* job = dynamic_cast<ShampooRefreshJob<T>*>(spare.get())) {
    job->refill(device, t, k, this->state_.tensor(left_), this->state_.tensor(right_), bias_correction);
    return spare;
  }
  return std::make_unique<ShampooRefreshJob<T>>(device, t, k, this->state_.tensor(left_), this->state_.tensor(right_),
                                                bias_correction, settings_);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> ShampooBlock<T>::receiver(Step t, std::unique_ptr<RefreshJob<T>> spare) const {
  // Sizes from the layout: a receiver reads no values.
  const std::int64_t k = this->state_.counter(stats_steps_);
  const std::vector<TensorSlot>& layout = this->state_.layout();
  const index left_n = layout[static_cast<std::size_t>(left_)].rows;
  const index right_n = layout[static_cast<std::size_t>(right_)].rows;
  if (auto* job = dynamic_cast<ShampooRefreshJob<T>*>(spare.get())) {
    job->receive(t, k, left_n, right_n);
    return spare;
  }
  return std::make_unique<ShampooRefreshJob<T>>(t, k, left_n, right_n, settings_);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> ShampooBlock<T>::resumed(Step stats_step, std::int64_t stamp) const {
  // Sizes from the layout: the state may rest evicted (on NVMe) while a checkpoint is restored.
  const std::vector<TensorSlot>& layout = this->state_.layout();
  return std::make_unique<ShampooRefreshJob<T>>(stats_step, stamp, layout[static_cast<std::size_t>(left_)].rows,
                                                layout[static_cast<std::size_t>(right_)].rows, settings_);
}

template <Real T>
void ShampooBlock<T>::publish(ops::Device& device, RefreshJob<T>& finished) {
  auto* job = dynamic_cast<ShampooRefreshJob<T>*>(&finished);
  if (job == nullptr) throw std::invalid_argument("ShampooBlock::publish: not a Shampoo refresh job");
  if (!job->finished()) throw std::logic_error("ShampooBlock::publish: the refresh job has not succeeded");
  device.upload_async(job->left_root(), this->state_.tensor(left_root_));
  device.upload_async(job->right_root(), this->state_.tensor(right_root_));
  this->state_.counter(root_stats_steps_) = job->stats_count();
}

template <Real T>
bool ShampooBlock<T>::apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad,
                            Step /*t*/) {
  BlockState<T>& s = this->state_;
  const std::int64_t k = s.counter(step_) + 1;
  const index rows = this->rows();
  const index cols = this->cols();

  // Ḡ: bias-corrected EMA of the raw gradient (DS's filtered gradient); the gradient itself
  // without momentum.
  ops::Buffer filtered_buffer;
  linalg::ConstMatrixView<T> filtered = grad;
  if (momentum_ >= 0) {
    filtered_buffer = device.matrix<T>(rows, cols);
    const T inv_bc1 = static_cast<T>(1.0 / (1.0 - std::pow(hp_.beta1, static_cast<double>(k))));
    device.map(ops::FilteredGradient<T>{static_cast<T>(hp_.beta1), inv_bc1}, s.tensor(momentum_),
               filtered_buffer.view<T>(), grad);
    filtered = filtered_buffer.view<T>();
  }

  // Adam graft: second moment of the raw gradient, applied to Ḡ.
  ops::Buffer graft;
  if (graft_sq_ >= 0) {
    graft = device.matrix<T>(rows, cols);
    const bool sum = hp_.graft_beta2 == 1.0;
    const T inv_bc2 = sum ? T(1) : static_cast<T>(1.0 / (1.0 - std::pow(hp_.graft_beta2, static_cast<double>(k))));
    device.map(ops::AdamGraftDirection<T>{sum ? T(1) : static_cast<T>(hp_.graft_beta2),
                                          sum ? T(1) : static_cast<T>(1.0 - hp_.graft_beta2), inv_bc2,
                                          static_cast<T>(hp_.graft_eps)},
               s.tensor(graft_sq_), graft.view<T>(), grad, filtered);
  }

  // P = L̂ Ḡ R̂ (identity roots before the first publish when grafting is off), rescaled to the
  // graft's norm; before the first publish with grafting, the graft direction alone.
  ops::Buffer direction = device.matrix<T>(rows, cols);
  linalg::ConstMatrixView<T> update = direction.view<T>();
  const bool have_roots = s.counter(root_stats_steps_) > 0;
  if (!have_roots && graft_sq_ >= 0) {
    update = graft.view<T>();
  } else {
    ops::Buffer half = device.matrix<T>(rows, cols);
    device.gemm<T>(T(1), s.tensor(left_root_), linalg::Op::none, filtered, linalg::Op::none, T(0), half.view<T>());
    device.gemm<T>(T(1), half.view<T>(), linalg::Op::none, s.tensor(right_root_), linalg::Op::none, T(0),
                   direction.view<T>());
    if (graft_sq_ >= 0) {
      const ops::Scalar graft_norm = device.scalar();
      const ops::Scalar shampoo_norm = device.scalar();
      device.norm<T>(graft.view<T>(), graft_norm);
      device.norm<T>(direction.view<T>(), shampoo_norm);
      device.scale_by_ratio<T>(direction.view<T>(), &graft_norm, shampoo_norm, kGraftNormFloor);
    }
  }

  // DS's decoupled weight decay: W ← W − lr·(P + wd·W); nothing non-finite reaches the weights.
  const ops::Flag non_finite = device.flag();
  device.checked_write(non_finite,
                       ops::ShampooDescent<T>{static_cast<T>(hp_.lr), static_cast<T>(hp_.weight_decay)}, weights,
                       update);
  if (device.raised(non_finite)) return false;
  s.counter(step_) = k;
  return true;
}

template class ShampooBlock<float>;
template class ShampooBlock<double>;

}  // namespace asteria::optim
