#include "core/optim/muon.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/linalg/blas.hpp"
#include "core/optim/shape_model.hpp"

namespace asteria::optim {
namespace {

// Quintic coefficients chosen to maximize the slope at zero (KellerJordan/Muon).
constexpr double kA = 3.4445;
constexpr double kB = -4.7750;
constexpr double kC = 2.0315;
constexpr double kNormFloor = 1e-7;

}  // namespace

template <Real T>
MuonBlock<T>::MuonBlock(const Hyperparameters& hp, index rows, index cols)
    : BlockOptimizer<T>(rows, cols),
      hp_(hp),
      update_(std::min(rows, cols), std::max(rows, cols)),
      next_(std::min(rows, cols), std::max(rows, cols)),
      gram_(std::min(rows, cols), std::min(rows, cols)),
      poly_(std::min(rows, cols), std::min(rows, cols)) {
  BlockState<T>& s = this->state_;
  s.add_layout(state_layout(OptimizerKind::muon, hp, rows, cols), state_counters(OptimizerKind::muon, hp));
  momentum_ = s.tensor_slot("momentum");
  step_ = s.counter_slot("step");
}

template <Real T>
void MuonBlock<T>::accumulate(linalg::ConstMatrixView<T> /*grad*/, Step /*t*/) {
  // Muon keeps no statistics apart from its momentum, which apply() updates.
}

template <Real T>
void MuonBlock<T>::orthogonalize(linalg::Matrix<T>& x) {
  const T a = static_cast<T>(kA);
  const T b = static_cast<T>(kB);
  const T c = static_cast<T>(kC);
  for (int s = 0; s < hp_.newton_schulz_steps; ++s) {
    linalg::syrk<T>(T(1), x, linalg::Op::none, T(0), gram_);                                  // A = X Xᵀ
    linalg::gemm<T>(c, gram_, linalg::Op::none, gram_, linalg::Op::none, T(0), poly_);        // cA²
    for (index i = 0; i < poly_.rows(); ++i)
      for (index j = 0; j < poly_.cols(); ++j) poly_(i, j) += b * gram_(i, j);                // B = bA + cA²
    linalg::copy<T, T>(x, next_.view());
    linalg::gemm<T>(T(1), poly_, linalg::Op::none, x, linalg::Op::none, a, next_);          // X ← aX + BX
    std::swap(x, next_);
  }
}

template <Real T>
bool MuonBlock<T>::apply(linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step /*t*/) {
  const index rows = this->rows();
  const index cols = this->cols();
  const bool transposed = rows > cols;  // iterate on the short side: X Xᵀ is min(rows, cols)²
  auto m = this->state_.tensor(momentum_);
  const T beta = static_cast<T>(hp_.beta1);
  for (index i = 0; i < rows; ++i)
    for (index j = 0; j < cols; ++j) {
      const T g = grad(i, j);
      m(i, j) += (T(1) - beta) * (g - m(i, j));                     // m ← lerp(m, G, 1 − β)
      const T u = hp_.nesterov ? g + beta * (m(i, j) - g) : m(i, j);  // u ← lerp(G, m, β)
      (transposed ? update_(j, i) : update_(i, j)) = u;
    }
  const T inv_norm = static_cast<T>(1.0 / (linalg::frobenius_norm<T>(update_) + kNormFloor));
  for (T& x : update_.values()) x *= inv_norm;
  orthogonalize(update_);

  const T step = static_cast<T>(hp_.lr * std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(cols))));
  const T keep = static_cast<T>(1.0 - hp_.lr * hp_.weight_decay);
  auto updated = [&](index i, index j) {
    return keep * weights(i, j) - step * (transposed ? update_(j, i) : update_(i, j));
  };
  for (index i = 0; i < rows; ++i)  // nothing non-finite reaches the weights
    for (index j = 0; j < cols; ++j)
      if (!std::isfinite(updated(i, j))) return false;
  for (index i = 0; i < rows; ++i)
    for (index j = 0; j < cols; ++j) weights(i, j) = updated(i, j);
  ++this->state_.counter(step_);
  return true;
}

template class MuonBlock<float>;
template class MuonBlock<double>;

}  // namespace asteria::optim
