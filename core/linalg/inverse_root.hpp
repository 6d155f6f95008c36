#pragma once
// Inverse p-th roots of symmetric positive semi-definite matrices, X ≈ (A + εI)^(-1/p).
// Both methods return a Status and never write non-finite output: on failure `out` is left
// untouched. `out` may alias `a`. Both triangles of `a` must hold the matrix.
#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::linalg {

// Eigen method (ALGORITHMS.md): A + εI = Q Λ Qᵀ; if λ_min < ε every eigenvalue is shifted by
// ε − λ_min; X = Q Λ^(−1/p) Qᵀ. Float input is retried in double when the float solve fails
// (no convergence or non-finite results). p > 0 (need not be an integer), ε >= 0.
// Cost: one syevd plus one SYRK, X = (Q D)(Q D)ᵀ with D = Λ^(−1/(2p)).
// Fails (non_finite_output) when the root is infinite (singular A with ε = 0) or beyond T.
template <Real T>
Status inverse_root_eigen(ConstMatrixView<T> a, double p, double epsilon, MatrixView<T> out);

struct CoupledNewtonOptions {
  int max_iterations = 100;  // DS CoupledNewtonConfig
  double tolerance = 1e-6;   // on ‖M − I‖_∞ = max_ij |M − I|_ij (DS: torch.dist(M, I, inf))
};

// Coupled Newton iteration (DS): z = (p+1)/(2‖A+εI‖_F); X = z^(1/p) I; M = z (A+εI);
// repeat M' = ((p+1)/p) I − M/p; X ← X M'; M ← M'^p M until ‖M − I‖_∞ ≤ tol. Integer p ≥ 1.
// Returns no_convergence when the tolerance is not met within max_iterations, or earlier once
// the error has entered the quadratic phase (< 1e-2) and stops halving — the rounding floor of
// T is then above the tolerance and more iterations only cost time. A matrix with a negative
// eigenvalue diverges: non_finite_output. The returned X is exactly symmetric.
template <Real T>
Status inverse_root_newton(ConstMatrixView<T> a, int p, double epsilon, const CoupledNewtonOptions& options,
                           MatrixView<T> out);

// What the iteration did, for cost models (each iteration of p = 4 costs 6n³ flops: one GEMM
// for X, two SYRKs and one GEMM for M).
struct NewtonReport {
  int iterations = 0;
  double error = 0.0;  // final max_ij |M − I|
};
template <Real T>
Status inverse_root_newton(ConstMatrixView<T> a, int p, double epsilon, const CoupledNewtonOptions& options,
                           MatrixView<T> out, NewtonReport& report);

// Relative check error ‖X^(−p) − (A + εI)‖_F / max(‖A + εI‖_F, tiny), computed in double via an
// eigendecomposition of X's symmetric part. Used by tests and to reject bad roots. +∞ when the
// shapes disagree, an input is not finite, or X is not positive definite.
template <Real T>
double inverse_root_residual(ConstMatrixView<T> a, ConstMatrixView<T> x, double p, double epsilon);

}  // namespace asteria::linalg
