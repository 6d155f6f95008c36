#pragma once
// Eigenbases of Kronecker-factor statistics for SOAP and KL-Shampoo: a full initial basis, and
// the cheap warm-started refresh (one power iteration + orthogonalization) of SOAP.
#include <span>

#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::linalg {

// Eigenvectors of F + 1e-30·I in the columns of `basis`, descending eigenvalue order
// (SOAP's get_orthogonal_matrix); float solves retry in double.
template <Real T>
Status initial_eigenbasis(ConstMatrixView<T> stats, MatrixView<T> basis);

enum class Orthogonalization {
  householder,  // LAPACK geqrf + orgqr
  // Row-pivoted LU, then Cholesky QR on L (lauum/SYRK + potrf + TRSM), shifted only if a
  // Cholesky breaks down; 2 passes for warm refreshes up to n = 4096 (GEMM-rich, faster than
  // Householder with multithreaded BLAS); Householder fallback for an exactly zero column.
  shifted_cholesky_qr,
};

// Orthonormal basis of a's column space (a is n x n or tall): q = orth(a), i.e. the Q of
// a = Q R with R upper triangular, so span(q_1..q_k) ⊇ span(a_1..a_k). Columns keep their order
// and direction (q(:,k)ᵀ a(:,k) = R_kk >= 0). Rank-deficient a still gets a full orthonormal q.
// q may be a itself (in place); otherwise it must not overlap a. orthogonality.hpp adds a
// variant with a report and a column permutation.
template <Real T>
Status orthonormalize(ConstMatrixView<T> a, Orthogonalization method, MatrixView<T> q);

enum class EigenvalueOrder {
  descending,  // SOAP: sort by estimated eigenvalue before the power step
  keep,        // KL-Shampoo: no sorting
};

// Warm refresh of basis B for statistics F (both n x n):
//   estimate λ̃ = diag(Bᵀ F B); `order` (size n) receives the column permutation (new column
//   k is old column order[k]; identity for EigenvalueOrder::keep); then
//   new_basis = orth(F · B[:, order]).
// `estimated_eigenvalues` (size n, optional: may be empty) receives λ̃ in the new order.
// Cost: one GEMM for F·B (λ̃ from column dot products of B and F·B) plus the orthogonalization.
// The sort is stable (ties keep their order). new_basis may be basis itself. On failure
// new_basis, order and estimated_eigenvalues are unspecified but finite.
template <Real T>
Status refresh_eigenbasis(ConstMatrixView<T> stats, ConstMatrixView<T> basis, EigenvalueOrder ordering,
                          Orthogonalization method, MatrixView<T> new_basis, std::span<index> order,
                          std::span<T> estimated_eigenvalues);

}  // namespace asteria::linalg
