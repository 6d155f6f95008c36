// Orthonormal bases by Householder QR or by shifted Cholesky QR (GEMM/SYRK-rich).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/linalg/blas.hpp"
#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/lapack_kernels.hpp"
#include "core/linalg/orthogonality.hpp"

namespace asteria::linalg {
namespace {

// Householder QR in place (q holds a on entry), column k negated where R_kk < 0 so that
// q(:,k)ᵀ a(:,k) = |R_kk| >= 0.
template <Real T>
Status householder_in_place(MatrixView<T> q) {
  if (Status status = detail::householder_qr_in_place(q, true); !status.ok()) return status;
  if (!all_finite(ConstMatrixView<T>(q))) return {StatusCode::non_finite_output, "orthonormalize: non-finite result"};
  return Status::success();
}

// Power of two nearest sqrt(g) (within a factor √2): scaling by it is exact.
double power_of_two_root(double g) {
  if (!(g > 0.0) || !std::isfinite(g)) return 1.0;
  return std::ldexp(1.0, static_cast<int>(std::lround(0.5 * std::log2(g))));
}

// Shifted Cholesky QR, repeated until orthonormal; q holds a on entry. Each pass:
//   G = qᵀq;  D = diag(G)^½ rounded to powers of two;  G̃ = D⁻¹ G D⁻¹;
//   R̃ = chol(G̃ + s I);  q <- q (R̃ D)⁻¹.
// Equilibrating by D makes a pass invariant to column scaling (exactly, since D holds powers
// of two), so columns of very different norms — F·B has column norms ≈ eigenvalues — cost no
// accuracy. The shift s (Fukaya et al. 2020, shifted CholeskyQR3) keeps the factorization
// alive when q is too ill-conditioned or rank-deficient for plain Cholesky QR; each shifted
// pass divides κ by about √s. Their worst-case shift, 11(mn + n(n+1))u·‖A‖², exceeds ‖A‖²
// itself in float once n ≳ 900 (and then no longer improves κ); the rounding error of the Gram
// matrix is in practice far smaller, so s starts at (m + n)u/16 and grows 16-fold whenever
// Cholesky still fails (only the n³/3 factorization is redone). A pass whose input already has
// ‖G̃ − I‖_F <= 1/2 (κ(q)² <= 3) runs unshifted and leaves q orthonormal to working precision
// (CholeskyQR2 analysis, Yamamoto et al. 2015), ending the loop: 2–3 passes for well-conditioned
// input, 3 for a warm SOAP refresh, 3–5 for rank-deficient input. Returns false (q is then
// garbage) for an exactly zero column or when that point is not reached within max_passes.
template <Real T>
bool shifted_cholesky_qr_in_place(MatrixView<T> q, OrthonormalizationReport& report) {
  constexpr int max_passes = 6;
  constexpr int max_shift_increases = 4;
  const index m = q.rows();
  const index n = q.cols();
  const double unit_roundoff = std::numeric_limits<T>::epsilon() / 2;
  const double base_shift = static_cast<double>(m + n) * unit_roundoff / 16.0;
  Matrix<T> gram(n, n);
  Matrix<T> factor(n, n);
  std::vector<double> scale(static_cast<std::size_t>(n));
  std::vector<double> diagonal(static_cast<std::size_t>(n));
  for (int pass = 0; pass < max_passes; ++pass) {
    detail::gram_upper<T>(q, gram.view());
    for (index k = 0; k < n; ++k) {
      const double g = static_cast<double>(gram(k, k));
      // A zero column stays zero under q R⁻¹ (every pass only recombines columns): hand over
      // to Householder at once rather than after max_passes.
      if (!std::isfinite(g) || g == 0.0) return false;
      scale[static_cast<std::size_t>(k)] = power_of_two_root(g);
    }
    // ‖diag(G)^-½ G diag(G)^-½ − I‖_F², from the upper triangle: decides the last pass.
    for (index k = 0; k < n; ++k) diagonal[static_cast<std::size_t>(k)] = static_cast<double>(gram(k, k));
    double deviation2 = 0.0;
    for (index i = 0; i < n; ++i) {  // diagonal entries are positive (checked above)
      const double gi = diagonal[static_cast<std::size_t>(i)];
      for (index j = i + 1; j < n; ++j) {
        const double g = static_cast<double>(gram(i, j));
        deviation2 += 2.0 * g * g / (gi * diagonal[static_cast<std::size_t>(j)]);
      }
    }
    for (index i = 0; i < n; ++i)  // G̃ = D⁻¹ G D⁻¹, exact
      for (index j = i; j < n; ++j)
        gram(i, j) = static_cast<T>(static_cast<double>(gram(i, j)) /
                                    (scale[static_cast<std::size_t>(i)] * scale[static_cast<std::size_t>(j)]));
    bool final_pass = deviation2 <= 0.25;
    double shift = final_pass ? 0.0 : base_shift;
    for (int attempt = 0;; ++attempt) {
      for (index i = 0; i < n; ++i) {
        std::copy(gram.view().row(i).begin() + i, gram.view().row(i).end(), factor.view().row(i).begin() + i);
        factor(i, i) = static_cast<T>(static_cast<double>(gram(i, i)) + shift);
      }
      if (detail::cholesky_upper(n, factor.data(), n) == 0) break;
      if (attempt == max_shift_increases) return false;
      ++report.shift_increases;
      final_pass = false;
      shift = shift == 0.0 ? base_shift : 16.0 * shift;
    }
    for (index i = 0; i < n; ++i) {  // R = R̃ D (exact: D holds powers of two)
      auto row = factor.view().row(i);
      for (index j = i; j < n; ++j) row[static_cast<std::size_t>(j)] *= static_cast<T>(scale[static_cast<std::size_t>(j)]);
    }
    detail::solve_right_upper<T>(factor, q);
    ++report.cholesky_passes;
    if (final_pass) return all_finite(ConstMatrixView<T>(q));
  }
  return false;
}

template <Real T>
void gather_columns(ConstMatrixView<T> a, std::span<const index> order, MatrixView<T> q) {
  if (order.empty()) {
    if (a.data() != q.data()) copy(a, q);
    return;
  }
  for (index i = 0; i < a.rows(); ++i) {
    auto from = a.row(i);
    auto to = q.row(i);
    for (std::size_t k = 0; k < order.size(); ++k) to[k] = from[static_cast<std::size_t>(order[k])];
  }
}

bool is_permutation(std::span<const index> order, index n) {
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (index k : order) {
    if (k < 0 || k >= n || seen[static_cast<std::size_t>(k)]) return false;
    seen[static_cast<std::size_t>(k)] = true;
  }
  return true;
}

}  // namespace

template <Real T>
Status orthonormalize_columns(ConstMatrixView<T> a, std::span<const index> order, Orthogonalization method,
                              MatrixView<T> q, OrthonormalizationReport& report) {
  report = {};
  const index m = a.rows();
  const index n = a.cols();
  if (m < n || q.rows() != m || q.cols() != n)
    return {StatusCode::invalid_argument, "orthonormalize: expected a with rows >= cols and q of the same shape"};
  if (!order.empty() && (static_cast<index>(order.size()) != n || !is_permutation(order, n)))
    return {StatusCode::invalid_argument, "orthonormalize: order must be a permutation of the columns"};
  if (!all_finite(a)) return {StatusCode::non_finite_input, "orthonormalize: input holds NaN or Inf"};
  if (n == 0) return Status::success();
  const bool same_storage = a.data() == q.data() && a.stride() == q.stride();
  if ((same_storage && !order.empty()) || (!same_storage && detail::overlaps(a, ConstMatrixView<T>(q))) ||
      (same_storage && method == Orthogonalization::shifted_cholesky_qr)) {
    // The fallback needs a intact: work from a private copy.
    const Matrix<T> source(a);
    return orthonormalize_columns(ConstMatrixView<T>(source), order, method, q, report);
  }
  gather_columns(a, order, q);
  if (method == Orthogonalization::shifted_cholesky_qr) {
    if (shifted_cholesky_qr_in_place(q, report)) return Status::success();
    report.fell_back = true;
    gather_columns(a, order, q);
  }
  return householder_in_place(q);
}

template <Real T>
Status orthonormalize(ConstMatrixView<T> a, Orthogonalization method, MatrixView<T> q) {
  OrthonormalizationReport report;
  return orthonormalize_columns(a, {}, method, q, report);
}

template <Real T>
double orthogonality_error(ConstMatrixView<T> q) {
  const index n = q.cols();
  Matrix<double> wide(q.rows(), n);
  copy(q, wide.view());
  Matrix<double> gram(n, n);
  detail::gram_upper<double>(wide, gram.view());
  double sum = 0.0;
  for (index i = 0; i < n; ++i)
    for (index j = i; j < n; ++j) {
      const double e = gram(i, j) - (i == j ? 1.0 : 0.0);
      sum += i == j ? e * e : 2.0 * e * e;
    }
  return std::sqrt(sum);
}

template Status orthonormalize_columns<float>(ConstMatrixView<float>, std::span<const index>, Orthogonalization,
                                              MatrixView<float>, OrthonormalizationReport&);
template Status orthonormalize_columns<double>(ConstMatrixView<double>, std::span<const index>, Orthogonalization,
                                               MatrixView<double>, OrthonormalizationReport&);
template Status orthonormalize<float>(ConstMatrixView<float>, Orthogonalization, MatrixView<float>);
template Status orthonormalize<double>(ConstMatrixView<double>, Orthogonalization, MatrixView<double>);
template double orthogonality_error<float>(ConstMatrixView<float>);
template double orthogonality_error<double>(ConstMatrixView<double>);

}  // namespace asteria::linalg
