#pragma once
// Inverse p-th roots of symmetric positive semi-definite matrices, X ≈ (A + εI)^(-1/p).
// Both methods return a Status and never write non-finite output.
#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::linalg {

// Eigen method (ALGORITHMS.md): A + εI = Q Λ Qᵀ; if λ_min < ε every eigenvalue is shifted by
// ε − λ_min; X = Q Λ^(−1/p) Qᵀ. Float input is retried in double when the float solve fails.
// p > 0 (need not be an integer).
template <Real T>
Status inverse_root_eigen(ConstMatrixView<T> a, double p, double epsilon, MatrixView<T> out);

struct CoupledNewtonOptions {
  int max_iterations = 100;  // DS CoupledNewtonConfig
  double tolerance = 1e-6;   // on ‖M − I‖_∞
};

// Coupled Newton iteration (DS): z = (p+1)/(2‖A+εI‖_F); X = z^(1/p) I; M = z (A+εI);
// repeat M' = ((p+1)/p) I − M/p; X ← X M'; M ← M'^p M until ‖M − I‖_∞ ≤ tol. Integer p ≥ 1.
template <Real T>
Status inverse_root_newton(ConstMatrixView<T> a, int p, double epsilon, const CoupledNewtonOptions& options,
                           MatrixView<T> out);

// Relative check error ‖X^(−p) − (A + εI)‖_F / max(‖A + εI‖_F, tiny), computed in double via an
// eigendecomposition of X. Used by tests and to reject bad roots.
template <Real T>
double inverse_root_residual(ConstMatrixView<T> a, ConstMatrixView<T> x, double p, double epsilon);

}  // namespace asteria::linalg
