// Eigen-method inverse p-th root and the residual check shared by tests and callers.
#include "core/linalg/inverse_root.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/linalg/blas.hpp"
#include "core/linalg/lapack_kernels.hpp"

namespace asteria::linalg {
namespace {

// X = Q Λ^(−1/p) Qᵀ = (Q D)(Q D)ᵀ with D = Λ^(−1/(2p)): one SYRK on the eigenvector storage
// (which holds Qᵀ, so scaling its rows by D gives (Q D)ᵀ in place).
template <Real S, Real T>
Status root_from_eigen(detail::SymmetricEigen<S>& eig, double p, double epsilon, MatrixView<T> out) {
  const index n = eig.n;
  const double lambda_min = static_cast<double>(eig.values.front());
  // ALGORITHMS.md: when λ_min < ε (a PSD matrix's rounding noise, or an indefinite input),
  // shift every eigenvalue by ε − λ_min so the smallest becomes ε.
  const double shift = lambda_min < epsilon ? epsilon - lambda_min : 0.0;
  const double smallest = lambda_min + shift;
  if (!(smallest > 0.0))
    return {StatusCode::non_finite_output, "inverse_root_eigen: singular matrix (epsilon is 0)"};
  // Every |X_ij| <= max_k d_k² = smallest^(−1/p); refuse before writing what T cannot hold.
  if (!(std::pow(smallest, -1.0 / p) < static_cast<double>(std::numeric_limits<T>::max()) / 4.0))
    return {StatusCode::non_finite_output, "inverse_root_eigen: root overflows the output type"};
  MatrixView<S> scaled = eig.vectors();
  for (index k = 0; k < n; ++k) {
    const auto d = static_cast<S>(std::pow(static_cast<double>(eig.values[static_cast<std::size_t>(k)]) + shift, -0.5 / p));
    for (S& v : scaled.row(k)) v *= d;
  }
  if constexpr (std::is_same_v<S, T>) {
    detail::gram_full<T>(scaled, out);
  } else {
    Matrix<S> wide(n, n);
    detail::gram_full<S>(scaled, wide.view());
    copy(ConstMatrixView<S>(wide), out);
  }
  return Status::success();
}

}  // namespace

template <Real T>
Status inverse_root_eigen(ConstMatrixView<T> a, double p, double epsilon, MatrixView<T> out) {
  const index n = a.rows();
  if (a.cols() != n || out.rows() != n || out.cols() != n)
    return {StatusCode::invalid_argument, "inverse_root_eigen: expected square a and out of the same shape"};
  if (!(p > 0.0) || !std::isfinite(p) || !(epsilon >= 0.0) || !std::isfinite(epsilon))
    return {StatusCode::invalid_argument, "inverse_root_eigen: expected p > 0 and a finite epsilon >= 0"};
  if (!all_finite(a)) return {StatusCode::non_finite_input, "inverse_root_eigen: input holds NaN or Inf"};
  if (n == 0) return Status::success();
  // The solver copies a first, so out may alias a.
  return detail::solve_symmetric_with_retry(a, epsilon, [&]<Real S>(detail::SymmetricEigen<S>& eig) {
    return root_from_eigen(eig, p, epsilon, out);
  });
}

template <Real T>
double inverse_root_residual(ConstMatrixView<T> a, ConstMatrixView<T> x, double p, double epsilon) {
  constexpr double invalid = std::numeric_limits<double>::infinity();
  const index n = a.rows();
  if (a.cols() != n || x.rows() != n || x.cols() != n || !(p > 0.0) || !std::isfinite(epsilon)) return invalid;
  if (!all_finite(a) || !all_finite(x)) return invalid;
  if (n == 0) return 0.0;
  // Decompose the symmetric part of X in double: X^(−p) = V M^(−p) Vᵀ.
  Matrix<double> sym(n, n);
  for (index i = 0; i < n; ++i)
    for (index j = i; j < n; ++j) sym(i, j) = 0.5 * (static_cast<double>(x(i, j)) + static_cast<double>(x(j, i)));
  detail::SymmetricEigen<double> eig;
  if (!detail::solve_symmetric<double>(ConstMatrixView<double>(sym), 0.0, eig).ok()) return invalid;
  if (!(eig.values.front() > 0.0)) return invalid;  // X must be positive definite
  MatrixView<double> scaled = eig.vectors();
  for (index k = 0; k < n; ++k) {
    const double d = std::pow(eig.values[static_cast<std::size_t>(k)], -0.5 * p);
    for (double& v : scaled.row(k)) v *= d;
  }
  detail::gram_full<double>(scaled, sym.view());  // sym now holds X^(−p)
  double diff2 = 0.0;
  double ref2 = 0.0;
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) {
      const double target = static_cast<double>(a(i, j)) + (i == j ? epsilon : 0.0);
      diff2 += (sym(i, j) - target) * (sym(i, j) - target);
      ref2 += target * target;
    }
  const double ratio = std::sqrt(diff2) / std::max(std::sqrt(ref2), std::numeric_limits<double>::min());
  return std::isfinite(ratio) ? ratio : invalid;
}

template Status inverse_root_eigen<float>(ConstMatrixView<float>, double, double, MatrixView<float>);
template Status inverse_root_eigen<double>(ConstMatrixView<double>, double, double, MatrixView<double>);
template double inverse_root_residual<float>(ConstMatrixView<float>, ConstMatrixView<float>, double, double);
template double inverse_root_residual<double>(ConstMatrixView<double>, ConstMatrixView<double>, double, double);

}  // namespace asteria::linalg
