// SOAP / KL-Shampoo eigenbases: full initial basis and the warm-started refresh.
#include "core/linalg/eigenbasis.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/linalg/blas.hpp"
#include "core/linalg/lapack_kernels.hpp"
#include "core/linalg/orthogonality.hpp"

namespace asteria::linalg {

template <Real T>
Status initial_eigenbasis(ConstMatrixView<T> stats, MatrixView<T> basis) {
  const index n = stats.rows();
  if (stats.cols() != n || basis.rows() != n || basis.cols() != n)
    return {StatusCode::invalid_argument, "initial_eigenbasis: expected square stats and basis of the same shape"};
  if (!all_finite(stats)) return {StatusCode::non_finite_input, "initial_eigenbasis: statistics hold NaN or Inf"};
  if (n == 0) return Status::success();
  // SOAP: eigh(F + 1e-30 I), columns flipped to descending eigenvalue order.
  constexpr double soap_ridge = 1e-30;
  return detail::solve_symmetric_with_retry(stats, soap_ridge, [&]<Real S>(detail::SymmetricEigen<S>& eig) {
    // The solver's row k is the eigenvector of the k-th smallest eigenvalue; basis column j is
    // the eigenvector of the j-th largest: basis(i, j) = vectors(n-1-j, i), copied tile by tile.
    ConstMatrixView<S> vectors = eig.vectors();
    constexpr index tile = 32;
    for (index i0 = 0; i0 < n; i0 += tile)
      for (index j0 = 0; j0 < n; j0 += tile)
        for (index i = i0; i < std::min(i0 + tile, n); ++i)
          for (index j = j0; j < std::min(j0 + tile, n); ++j) basis(i, j) = static_cast<T>(vectors(n - 1 - j, i));
    return Status::success();
  });
}

template <Real T>
Status refresh_eigenbasis(ConstMatrixView<T> stats, ConstMatrixView<T> basis, EigenvalueOrder ordering,
                          Orthogonalization method, MatrixView<T> new_basis, std::span<index> order,
                          std::span<T> estimated_eigenvalues) {
  const index n = stats.rows();
  const index k = basis.cols();
  if (stats.cols() != n || basis.rows() != n || k > n || new_basis.rows() != n || new_basis.cols() != k ||
      static_cast<index>(order.size()) != k ||
      (!estimated_eigenvalues.empty() && static_cast<index>(estimated_eigenvalues.size()) != k))
    return {StatusCode::invalid_argument,
            "refresh_eigenbasis: expected square stats, basis and new_basis of the same shape, order (and "
            "estimated_eigenvalues when given) of one entry per column"};
  if (!all_finite(stats) || !all_finite(basis))
    return {StatusCode::non_finite_input, "refresh_eigenbasis: statistics or basis hold NaN or Inf"};
  if (k == 0) return Status::success();

  // One power step: P = F B (the only n³ product besides the orthogonalization).
  Matrix<T> product(n, k);
  gemm<T>(T(1), stats, Op::none, basis, Op::none, T(0), product);
  // λ̃ = diag(Bᵀ F B) = column dot products of B and P, accumulated in double row by row.
  std::vector<double> estimate(static_cast<std::size_t>(k), 0.0);
  for (index i = 0; i < n; ++i) {
    auto b = basis.row(i);
    auto p = product.view().row(i);
    for (index j = 0; j < k; ++j)
      estimate[static_cast<std::size_t>(j)] +=
          static_cast<double>(b[static_cast<std::size_t>(j)]) * static_cast<double>(p[static_cast<std::size_t>(j)]);
  }
  // B is finite, so a non-finite entry of P's column j makes λ̃_j non-finite (0·Inf is NaN):
  // checking the estimates checks P.
  if (!detail::all_finite(std::span<const double>(estimate)))
    return {StatusCode::non_finite_output, "refresh_eigenbasis: F·B overflowed"};

  std::vector<index> permutation(static_cast<std::size_t>(k));
  std::iota(permutation.begin(), permutation.end(), index{0});
  if (ordering == EigenvalueOrder::descending)
    std::ranges::stable_sort(permutation, [&](index x, index y) {
      return estimate[static_cast<std::size_t>(x)] > estimate[static_cast<std::size_t>(y)];
    });

  // new_basis = orth(P[:, order]); B is no longer read, so new_basis may alias it.
  OrthonormalizationReport report;
  const std::span<const index> column_order =
      ordering == EigenvalueOrder::keep ? std::span<const index>{} : std::span<const index>(permutation);
  if (Status status = orthonormalize_columns<T>(product, column_order, method, new_basis, report); !status.ok())
    return status;
  std::ranges::copy(permutation, order.begin());
  for (index j = 0; j < k && !estimated_eigenvalues.empty(); ++j)
    estimated_eigenvalues[static_cast<std::size_t>(j)] =
        static_cast<T>(estimate[static_cast<std::size_t>(permutation[static_cast<std::size_t>(j)])]);
  return Status::success();
}

template Status initial_eigenbasis<float>(ConstMatrixView<float>, MatrixView<float>);
template Status initial_eigenbasis<double>(ConstMatrixView<double>, MatrixView<double>);
template Status refresh_eigenbasis<float>(ConstMatrixView<float>, ConstMatrixView<float>, EigenvalueOrder,
                                          Orthogonalization, MatrixView<float>, std::span<index>, std::span<float>);
template Status refresh_eigenbasis<double>(ConstMatrixView<double>, ConstMatrixView<double>, EigenvalueOrder,
                                           Orthogonalization, MatrixView<double>, std::span<index>, std::span<double>);

}  // namespace asteria::linalg
