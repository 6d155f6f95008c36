#pragma once
// Orthonormalization with diagnostics, and the orthogonality measure used to judge it.
// (eigenbasis.hpp declares the plain orthonormalize(); these add what callers and benchmarks
// need to see how it went.)
#include <span>

#include "core/common/status.hpp"
#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::linalg {

// How an orthonormalization went.
struct OrthonormalizationReport {
  int cholesky_passes = 0;  // Cholesky QR passes run (0 for Householder)
  int shift_increases = 0;  // Cholesky factorizations retried with a larger shift
  bool fell_back = false;   // shifted Cholesky QR gave up and Householder produced q
  bool lu_preconditioned = false;  // the passes ran on the L of a row-pivoted LU
  int lanczos_steps = 0;    // matrix-vector products spent estimating ‖G̃ − I‖₂
};

// q = orth(a[:, order]): like orthonormalize() on the columns of a taken in `order` (a
// permutation of 0..a.cols()-1; empty means the identity), without materializing the
// permuted copy. q must not overlap a unless it is exactly a (then order must be empty).
template <Real T>
Status orthonormalize_columns(ConstMatrixView<T> a, std::span<const index> order, Orthogonalization method,
                              MatrixView<T> q, OrthonormalizationReport& report);

// ‖QᵀQ − I‖_F, accumulated in double (costs one n x n x m product in double).
template <Real T>
double orthogonality_error(ConstMatrixView<T> q);

}  // namespace asteria::linalg
