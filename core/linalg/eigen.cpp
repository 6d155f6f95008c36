#include "core/linalg/eigen.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "core/linalg/blas.hpp"
#include "core/linalg/lapack_kernels.hpp"

namespace asteria::linalg {

template <Real T>
Status eigh(ConstMatrixView<T> a, std::span<T> eigenvalues, MatrixView<T> eigenvectors) {
  const index n = a.rows();
  if (a.cols() != n || eigenvectors.rows() != n || eigenvectors.cols() != n ||
      static_cast<index>(eigenvalues.size()) != n)
    return {StatusCode::invalid_argument, "eigh: expected a square matrix and outputs of matching size"};
  if (!all_finite(a)) return {StatusCode::non_finite_input, "eigh: input holds NaN or Inf"};
  if (n == 0) return Status::success();
  return detail::solve_symmetric_with_retry(a, 0.0, [&]<Real S>(detail::SymmetricEigen<S>& eig) -> Status {
    for (index k = 0; k < n; ++k) {
      const auto value = static_cast<T>(eig.values[static_cast<std::size_t>(k)]);
      // A float matrix can have eigenvalues beyond float range (solved in double on retry).
      if (!std::isfinite(value)) return Status{StatusCode::non_finite_output, "eigh: eigenvalue exceeds the type's range"};
      eigenvalues[static_cast<std::size_t>(k)] = value;
    }
    // The solver holds Qᵀ (row k = eigenvector k); the caller wants eigenvectors in columns.
    detail::transpose_into(ConstMatrixView<S>(eig.vectors()), eigenvectors);
    return Status::success();
  });
}

template <Real T>
Status householder_qr(ConstMatrixView<T> a, MatrixView<T> q) {
  const index m = a.rows();
  const index n = a.cols();
  if (m < n || q.rows() != m || q.cols() != n)
    return {StatusCode::invalid_argument, "householder_qr: expected m >= n and q of shape m x n"};
  if (!all_finite(a)) return {StatusCode::non_finite_input, "householder_qr: input holds NaN or Inf"};
  if (n == 0) return Status::success();
  if (a.data() != q.data() || a.stride() != q.stride()) {
    if (detail::overlaps(a, ConstMatrixView<T>(q))) {
      const Matrix<T> private_copy(a);
      return householder_qr(ConstMatrixView<T>(private_copy), q);
    }
    copy(a, q);
  }
  if (Status status = detail::householder_qr_in_place(q, false); !status.ok()) return status;
  if (!all_finite(ConstMatrixView<T>(q))) return {StatusCode::non_finite_output, "householder_qr: non-finite result"};
  return Status::success();
}

template Status eigh<float>(ConstMatrixView<float>, std::span<float>, MatrixView<float>);
template Status eigh<double>(ConstMatrixView<double>, std::span<double>, MatrixView<double>);
template Status householder_qr<float>(ConstMatrixView<float>, MatrixView<float>);
template Status householder_qr<double>(ConstMatrixView<double>, MatrixView<double>);

}  // namespace asteria::linalg
