#pragma once
// Dense symmetric eigendecomposition and Householder QR through LAPACKE.
#include <span>

#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::linalg {

// a = Q diag(λ) Qᵀ for symmetric a (both triangles must hold the matrix), λ ascending,
// eigenvectors in the columns of `eigenvectors` (n x n). LAPACK divide and conquer (syevd).
// Float input whose single-precision solve fails or yields non-finite values is retried in
// double. Never writes non-finite output: on failure the outputs are unspecified and the
// status says why.
template <Real T>
Status eigh(ConstMatrixView<T> a, std::span<T> eigenvalues, MatrixView<T> eigenvectors);

// Orthonormal factor Q (m x n, m >= n) of the thin QR decomposition a = QR (geqrf + orgqr).
// q may alias nothing in a.
template <Real T>
Status householder_qr(ConstMatrixView<T> a, MatrixView<T> q);

}  // namespace asteria::linalg
