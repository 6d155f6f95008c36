#include "core/optim/muon.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

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
MuonBlock<T>::MuonBlock(const Hyperparameters& hp, index rows, index cols) : BlockOptimizer<T>(rows, cols), hp_(hp) {
  BlockState<T>& s = this->state_;
  s.add_layout(state_layout(OptimizerKind::muon, hp, rows, cols), state_counters(OptimizerKind::muon, hp));
  momentum_ = s.tensor_slot("momentum");
  step_ = s.counter_slot("step");
}

template <Real T>
void MuonBlock<T>::accumulate(ops::Device& /*device*/, linalg::ConstMatrixView<T> /*grad*/, Step /*t*/) {
  // Muon keeps no statistics apart from its momentum, which apply() updates.
}

template <Real T>
void MuonBlock<T>::orthogonalize(ops::Device& device, ops::Buffer& x) {
  const index rows = this->rows();
  const index cols = this->cols();
  const bool wide = rows <= cols;  // X Xᵀ on the short side
  const index side = std::min(rows, cols);
  const T a = static_cast<T>(kA);
  const T b = static_cast<T>(kB);
  const T c = static_cast<T>(kC);
  ops::Buffer gram = device.matrix<T>(side, side);
  ops::Buffer poly = device.matrix<T>(side, side);
  ops::Buffer next = device.matrix<T>(rows, cols);
  for (int s = 0; s < hp_.newton_schulz_steps; ++s) {
    device.syrk<T>(T(1), x.view<T>(), wide ? linalg::Op::none : linalg::Op::transpose, T(0), gram.view<T>());  // A
    device.gemm<T>(c, gram.view<T>(), linalg::Op::none, gram.view<T>(), linalg::Op::none, T(0), poly.view<T>());  // cA²
    device.map(ops::AddScaled<T>{b}, poly.view<T>(), linalg::ConstMatrixView<T>(gram.view<T>()));  // B = bA + cA²
    device.copy<T>(x.view<T>(), next.view<T>());
    if (wide)  // X ← aX + BX
      device.gemm<T>(T(1), poly.view<T>(), linalg::Op::none, x.view<T>(), linalg::Op::none, a, next.view<T>());
    else  // U ← aU + UB
      device.gemm<T>(T(1), x.view<T>(), linalg::Op::none, poly.view<T>(), linalg::Op::none, a, next.view<T>());
    std::swap(x, next);
  }
}

template <Real T>
bool MuonBlock<T>::apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad,
                         Step /*t*/) {
  const index rows = this->rows();
  const index cols = this->cols();
  ops::Buffer update = device.matrix<T>(rows, cols);
  // m ← lerp(m, G, 1 − β); u ← lerp(G, m, β) (Nesterov) or m
  device.map(ops::MuonMomentum<T>{static_cast<T>(hp_.beta1), hp_.nesterov}, this->state_.tensor(momentum_),
             update.view<T>(), grad);
  const ops::Scalar norm = device.scalar();
  device.norm<T>(update.view<T>(), norm);
  device.scale_by_ratio<T>(update.view<T>(), nullptr, norm, kNormFloor);
  orthogonalize(device, update);

  const T step = static_cast<T>(hp_.lr * std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(cols))));
  const T keep = static_cast<T>(1.0 - hp_.lr * hp_.weight_decay);
  const ops::Flag non_finite = device.flag();  // nothing non-finite reaches the weights
  device.checked_write(non_finite, ops::MuonDescent<T>{keep, step}, weights,
                       linalg::ConstMatrixView<T>(update.view<T>()));
  if (device.raised(non_finite)) return false;
  ++this->state_.counter(step_);
  return true;
}

template class MuonBlock<float>;
template class MuonBlock<double>;

}  // namespace asteria::optim
