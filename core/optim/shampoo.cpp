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
    : BlockOptimizer<T>(rows, cols),
      hp_(hp),
      settings_(shampoo_root_settings(hp)),
      filtered_(rows, cols),
      graft_direction_(hp.grafting ? rows : 0, hp.grafting ? cols : 0),
      half_(rows, cols),
      direction_(rows, cols) {
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
void ShampooBlock<T>::accumulate(linalg::ConstMatrixView<T> grad, Step /*t*/) {
  // β2 = 1 is DS's AdaGrad-style sum; otherwise an EMA whose bias the refresh corrects.
  const bool sum = hp_.beta2 == 1.0;
  const T decay = sum ? T(1) : static_cast<T>(hp_.beta2);
  const T weight = sum ? T(1) : static_cast<T>(1.0 - hp_.beta2);
  linalg::syrk<T>(weight, grad, linalg::Op::none, decay, this->state_.tensor(left_));
  linalg::syrk<T>(weight, grad, linalg::Op::transpose, decay, this->state_.tensor(right_));
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
std::unique_ptr<RefreshJob<T>> ShampooBlock<T>::snapshot(Step t) const {
  const std::int64_t k = this->state_.counter(stats_steps_);
  const double bias_correction = hp_.beta2 < 1.0 ? 1.0 - std::pow(hp_.beta2, static_cast<double>(k)) : 1.0;
  return std::make_unique<ShampooRefreshJob<T>>(t, k, this->state_.tensor(left_), this->state_.tensor(right_),
                                                bias_correction, settings_);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> ShampooBlock<T>::snapshot_reusing(Step t, std::unique_ptr<RefreshJob<T>> spare) const {
  auto* job = dynamic_cast<ShampooRefreshJob<T>*>(spare.get());
  if (job == nullptr) return snapshot(t);
  const std::int64_t k = this->state_.counter(stats_steps_);
  const double bias_correction = hp_.beta2 < 1.0 ? 1.0 - std::pow(hp_.beta2, static_cast<double>(k)) : 1.0;
  job->refill(t, k, this->state_.tensor(left_), this->state_.tensor(right_), bias_correction);
  return spare;
}

template <Real T>
std::unique_ptr<RefreshJob<T>> ShampooBlock<T>::receiver(Step t, std::unique_ptr<RefreshJob<T>> spare) const {
  const std::int64_t k = this->state_.counter(stats_steps_);
  const index left_n = this->state_.tensor(left_).rows();
  const index right_n = this->state_.tensor(right_).rows();
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
void ShampooBlock<T>::publish(RefreshJob<T>& finished) {
  auto* job = dynamic_cast<ShampooRefreshJob<T>*>(&finished);
  if (job == nullptr) throw std::invalid_argument("ShampooBlock::publish: not a Shampoo refresh job");
  if (!job->finished()) throw std::logic_error("ShampooBlock::publish: the refresh job has not succeeded");
  linalg::copy(job->left_root(), this->state_.tensor(left_root_));
  linalg::copy(job->right_root(), this->state_.tensor(right_root_));
  this->state_.counter(root_stats_steps_) = job->stats_count();
}

template <Real T>
void ShampooBlock<T>::compute_direction(linalg::ConstMatrixView<T> grad, std::int64_t k) {
  BlockState<T>& s = this->state_;
  const index rows = this->rows();
  const index cols = this->cols();

  // Ḡ: bias-corrected EMA of the raw gradient (DS's filtered gradient).
  if (momentum_ >= 0) {
    auto m = s.tensor(momentum_);
    const T b1 = static_cast<T>(hp_.beta1);
    const T inv_bc1 = static_cast<T>(1.0 / (1.0 - std::pow(hp_.beta1, static_cast<double>(k))));
    for (index i = 0; i < rows; ++i)
      for (index j = 0; j < cols; ++j) {
        m(i, j) = b1 * m(i, j) + (T(1) - b1) * grad(i, j);
        filtered_(i, j) = m(i, j) * inv_bc1;
      }
  } else {
    linalg::copy(grad, filtered_.view());
  }

  // Adam graft: second moment of the raw gradient, applied to Ḡ.
  if (graft_sq_ >= 0) {
    auto v = s.tensor(graft_sq_);
    const bool sum = hp_.graft_beta2 == 1.0;
    const T b2 = sum ? T(1) : static_cast<T>(hp_.graft_beta2);
    const T w = sum ? T(1) : static_cast<T>(1.0 - hp_.graft_beta2);
    const T inv_bc2 = sum ? T(1) : static_cast<T>(1.0 / (1.0 - std::pow(hp_.graft_beta2, static_cast<double>(k))));
    const T eps = static_cast<T>(hp_.graft_eps);
    for (index i = 0; i < rows; ++i)
      for (index j = 0; j < cols; ++j) {
        const T g = grad(i, j);
        v(i, j) = b2 * v(i, j) + w * g * g;
        graft_direction_(i, j) = filtered_(i, j) / (std::sqrt(v(i, j) * inv_bc2) + eps);
      }
  }

  const bool have_roots = s.counter(root_stats_steps_) > 0;
  if (!have_roots && graft_sq_ >= 0) {
    linalg::copy<T, T>(graft_direction_, direction_.view());
    return;
  }
  // P = L̂ Ḡ R̂ (identity roots before the first publish when grafting is off).
  linalg::gemm<T>(T(1), s.tensor(left_root_), linalg::Op::none, filtered_, linalg::Op::none, T(0), half_);
  linalg::gemm<T>(T(1), half_, linalg::Op::none, s.tensor(right_root_), linalg::Op::none, T(0), direction_);
  if (graft_sq_ >= 0) {
    const double graft_norm = linalg::frobenius_norm<T>(graft_direction_);
    const double shampoo_norm = linalg::frobenius_norm<T>(direction_);
    const T scale = static_cast<T>(graft_norm / (shampoo_norm + kGraftNormFloor));
    for (T& x : direction_.values()) x *= scale;
  }
}

template <Real T>
bool ShampooBlock<T>::apply(linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step /*t*/) {
  const std::int64_t k = this->state_.counter(step_) + 1;
  compute_direction(grad, k);
  const T lr = static_cast<T>(hp_.lr);
  const T wd = static_cast<T>(hp_.weight_decay);
  // DS's decoupled weight decay: P ← P + wd·W, then W ← W − lr·P.
  for (index i = 0; i < this->rows(); ++i)
    for (index j = 0; j < this->cols(); ++j) {
      direction_(i, j) = lr * (direction_(i, j) + wd * weights(i, j));
      if (!std::isfinite(direction_(i, j))) return false;  // nothing non-finite reaches the weights
    }
  for (index i = 0; i < this->rows(); ++i)
    for (index j = 0; j < this->cols(); ++j) weights(i, j) -= direction_(i, j);
  this->state_.counter(step_) = k;
  return true;
}

template class ShampooBlock<float>;
template class ShampooBlock<double>;

}  // namespace asteria::optim
