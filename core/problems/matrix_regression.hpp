#pragma once
// The optimizer comparison problem: deterministic, ill-conditioned matrix regression with
// Kronecker structure, where a Kronecker-factored preconditioner (Shampoo, SOAP) matters.
//
//   loss(W) = ½ ‖X W Z − Y‖²_F / N,   W: m×n,  X: N×m,  Z: n×P,  Y: N×P
//   ∇loss(W) = Xᵀ (X W Z − Y) Zᵀ / N
//
// The Hessian is (Z Zᵀ) ⊗ (Xᵀ X / N): exactly the two-sided structure Shampoo's factors
// capture, and far from diagonal (the singular vectors of X and Z are random rotations), so
// Adam's diagonal scaling does not undo it.
//
// Construction (all from one seed, float64, reproducible across platforms):
//   X = √N · U_x diag(s_x) V_xᵀ, Z = U_z diag(s_z) V_zᵀ with Haar-like random orthonormal
//   U, V and fixed log-spaced spectra s_k = κ^(−k/(d−1)), so cond(X) = κ_x, cond(Z) = κ_z and
//   the eigenvalues of Xᵀ X / N lie in [κ_x⁻², 1].
//   W* has N(0, solution_scale²) entries; Y = X W* Z + E where E is Gaussian noise projected
//   onto the complement of range(X), so Xᵀ E = 0: W* is the exact minimiser and the optimal
//   loss is ½‖E‖²_F / N, known in closed form.
// The optimizers start from W = 0.
//
// Scale, chosen once for every optimizer (no per-optimizer tuning): the top eigenvalue of the
// Hessian is 1 and the entries of W* are ~0.1, so gradients start at O(0.1) — far above every
// default epsilon — and an Adam-like step of lr = 1e-3 per coordinate is 1% of the typical
// distance to the optimum. Full-Hessian conditioning is κ_x²κ_z² = 1e12 with the defaults.
// With the defaults and a 2000-step budget to a target of 1e-3 of the initial excess loss,
// AdamW (lr 1e-3) reaches it in ~1000-1300 steps, Shampoo (lr 1e-2, grafted) and SOAP
// (lr 3e-3) in well under 200; KL-Shampoo's default lr 1e-4 moves ten times slower than
// AdamW's and Muon's constant lr 0.02 orthogonalized steps stall around 1e-2 of the excess, so
// neither reaches this target — an honest consequence of the defaults, not of the problem.
#include <cstdint>

#include "core/linalg/matrix.hpp"

namespace asteria::problems {

using linalg::index;

struct MatrixRegressionSpec {
  index rows = 32;                 // m: rows of W
  index cols = 16;                 // n: columns of W
  index samples = 64;              // N >= m: rows of X
  index outputs = 32;              // P >= n: columns of Z
  double condition_x = 1e3;        // κ_x = cond(X)
  double condition_z = 1e3;        // κ_z = cond(Z)
  double solution_scale = 0.1;     // standard deviation of the entries of W*
  double noise_scale = 0.01;       // standard deviation of the noise before projection
  std::uint64_t seed = 0;
};

class MatrixRegression {
 public:
  // Throws InputError ("comparison problem", field, expectation) for an invalid spec.
  explicit MatrixRegression(const MatrixRegressionSpec& spec);

  const MatrixRegressionSpec& spec() const noexcept { return spec_; }
  index rows() const noexcept { return spec_.rows; }
  index cols() const noexcept { return spec_.cols; }

  double loss(linalg::ConstMatrixView<double> w) const;
  // Writes ∇loss(w) into `gradient` (rows × cols) and returns loss(w).
  double loss_and_gradient(linalg::ConstMatrixView<double> w, linalg::MatrixView<double> gradient) const;

  double optimal_loss() const noexcept { return optimal_loss_; }
  const linalg::Matrix<double>& solution() const noexcept { return solution_; }
  linalg::Matrix<double> initial_point() const { return {spec_.rows, spec_.cols}; }

  const linalg::Matrix<double>& x() const noexcept { return x_; }
  const linalg::Matrix<double>& z() const noexcept { return z_; }
  const linalg::Matrix<double>& y() const noexcept { return y_; }

 private:
  // residual = X W Z − Y (N × P)
  void residual(linalg::ConstMatrixView<double> w, linalg::Matrix<double>& xw, linalg::Matrix<double>& r) const;

  MatrixRegressionSpec spec_;
  linalg::Matrix<double> x_, z_, y_, solution_;
  double optimal_loss_ = 0.0;
};

}  // namespace asteria::problems
