// Orthonormal bases by Householder QR or by LU-preconditioned shifted Cholesky QR (GEMM/SYRK-rich).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
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

// Decides when a Cholesky QR pass may be the last: its input, column-equilibrated, must have
// ‖G̃ − I‖₂ <= 1/2 (κ² <= 3), from which one Cholesky QR pass leaves q orthonormal to working
// precision (the CholeskyQR2 analysis, Yamamoto et al. 2015). ‖·‖_F >= ‖·‖₂ settles it when
// it is small, and ‖·‖_F > √n/2 rules it out; in between (the Frobenius norm can be √n times
// the 2-norm) a few Lanczos steps on N = C G̃ C (C = diag(unscale), so N has unit diagonal)
// decide. Ritz values lie inside N's spectrum, so one outside [1/2, 3/2] answers "no" at once;
// "yes" needs the extreme Ritz values so far inside that, by the Kuczyński–Woźniakowski
// bound for a random start (P[θ_max < (1−ε)λ_max] <= 1.648√n·e^{−√ε(2k−1)} for PSD
// matrices, applied to N and to 3/2·I − N), an eigenvalue beyond the limits has probability
// below 1e-9. Each step is one O(n²) symmetric matrix-vector product.
template <Real T>
bool lanczos_certifies_final_pass(ConstMatrixView<T> scaled_gram, std::span<const double> unscale,
                                  OrthonormalizationReport& report) {
  constexpr int max_steps = 48;
  constexpr double failure_probability = 1e-9;
  const index n = scaled_gram.rows();
  const auto size = static_cast<std::size_t>(n);
  // Rounding of the matrix-vector products in T, with room to spare.
  const double margin = 4.0 * static_cast<double>(n + 1) * std::numeric_limits<T>::epsilon();
  const double upper_limit = 1.5 - margin;  // λ_max(N) <= 1 + 1/2
  const double lower_limit = 0.5 + margin;  // λ_min(N) >= 1 − 1/2
  std::mt19937_64 rng(0x5eed1a2c305ULL);
  std::normal_distribution<double> normal;
  std::vector<double> v(size), previous(size, 0.0), w(size);
  double norm2 = 0.0;
  for (double& x : v) {
    x = normal(rng);
    norm2 += x * x;
  }
  for (double& x : v) x /= std::sqrt(norm2);
  std::vector<T> x(size), y(size);
  std::vector<double> alpha, beta, ritz, off;
  double beta_previous = 0.0;
  for (int step = 1; step <= max_steps && step <= n; ++step) {
    for (std::size_t i = 0; i < size; ++i) x[i] = static_cast<T>(unscale[i] * v[i]);
    detail::symmetric_upper_matvec<T>(scaled_gram, x, y);
    ++report.lanczos_steps;
    double a = 0.0;
    for (std::size_t i = 0; i < size; ++i) {
      w[i] = unscale[i] * static_cast<double>(y[i]) - beta_previous * previous[i];
      a += w[i] * v[i];
    }
    double b2 = 0.0;
    for (std::size_t i = 0; i < size; ++i) {
      w[i] -= a * v[i];
      b2 += w[i] * w[i];
    }
    const double b = std::sqrt(b2);
    alpha.push_back(a);
    ritz = alpha;
    off = beta;
    if (!detail::tridiagonal_eigenvalues(ritz, off) || !std::isfinite(ritz.front()) || !std::isfinite(ritz.back()))
      return false;
    const double theta_min = ritz.front();
    const double theta_max = ritz.back();
    if (theta_max > upper_limit || theta_min < lower_limit) return false;
    // An invariant Krylov space (or all of it) makes the Ritz values eigenvalues.
    if (b <= 1e-10 * theta_max || step == n) return true;
    const double eps_upper = 1.0 - theta_max / upper_limit;
    const double eps_lower = 1.0 - (1.5 - theta_min) / (1.5 - lower_limit);
    const double k = 2.0 * step - 1.0;
    const double chance = 1.648 * std::sqrt(static_cast<double>(n)) *
                          (std::exp(-std::sqrt(eps_upper) * k) + std::exp(-std::sqrt(eps_lower) * k));
    if (chance <= failure_probability) return true;
    beta.push_back(b);
    beta_previous = b;
    previous.swap(v);
    for (std::size_t i = 0; i < size; ++i) v[i] = w[i] / b;
  }
  return false;
}

// Cholesky QR passes on q until orthonormal; `gram` holds the upper triangle of qᵀq for the
// first pass (later passes form their own). Each pass:
//   G = qᵀq;  D = diag(G)^½ rounded to powers of two;  G̃ = D⁻¹ G D⁻¹;
//   R̃ = chol(G̃ + s I);  q <- q (R̃ D)⁻¹.
// Equilibrating by D makes a pass invariant to column scaling (exactly, since D holds powers
// of two). Cholesky is tried unshifted (s = 0) first; when it breaks down the shift of Fukaya
// et al. 2020 (shifted CholeskyQR3) keeps it alive: each shifted pass divides κ by about √s.
// Their worst-case shift, 11(mn + n(n+1))u·‖A‖², exceeds ‖A‖² itself in float once n ≳ 900;
// the rounding error of the Gram matrix is in practice far smaller, so s starts at (m + n)u/16
// and grows 16-fold while Cholesky still fails (only the n³/3 factorization is redone). The
// pass whose input passes the final-pass test above runs unshifted and ends the loop; on it
// column k is negated where flip[k]. Returns false (q is then garbage) for a non-finite or zero
// column or when that point is not reached within max_passes.
template <Real T>
bool cholesky_qr_passes(MatrixView<T> q, MatrixView<T> gram, const std::vector<bool>& flip,
                        OrthonormalizationReport& report) {
  constexpr int max_passes = 6;
  constexpr int max_shift_increases = 4;
  const index m = q.rows();
  const index n = q.cols();
  const auto size = static_cast<std::size_t>(n);
  const double unit_roundoff = std::numeric_limits<T>::epsilon() / 2;
  const double base_shift = static_cast<double>(m + n) * unit_roundoff / 16.0;
  Matrix<T> factor(n, n);
  std::vector<double> scale(size), inverse_scale(size), inverse_root(size), unscale(size);
  for (int pass = 0; pass < max_passes; ++pass) {
    if (pass > 0) detail::gram_upper<T>(q, gram);
    for (std::size_t k = 0; k < size; ++k) {
      const double g = static_cast<double>(gram(static_cast<index>(k), static_cast<index>(k)));
      // A zero column stays zero under q R⁻¹ (every pass only recombines columns): hand over
      // to Householder at once rather than after max_passes.
      if (!std::isfinite(g) || g == 0.0) return false;
      scale[k] = power_of_two_root(g);
      inverse_scale[k] = 1.0 / scale[k];  // exact
      inverse_root[k] = 1.0 / std::sqrt(g);
      unscale[k] = scale[k] * inverse_root[k];  // C = D diag(G)^-½: N = C G̃ C has unit diagonal
    }
    // ‖N − I‖_F² from the upper triangle, and G̃ = D⁻¹ G D⁻¹ (exact) in place.
    double deviation2 = 0.0;
    for (index i = 0; i < n; ++i) {
      auto row = gram.row(i);
      const double ri = inverse_root[static_cast<std::size_t>(i)];
      const double si = inverse_scale[static_cast<std::size_t>(i)];
      for (index j = i + 1; j < n; ++j) {
        const double g = static_cast<double>(row[static_cast<std::size_t>(j)]);
        const double e = g * ri * inverse_root[static_cast<std::size_t>(j)];
        deviation2 += 2.0 * e * e;
      }
      for (index j = i; j < n; ++j) {
        const double g = static_cast<double>(row[static_cast<std::size_t>(j)]);
        row[static_cast<std::size_t>(j)] = static_cast<T>(g * si * inverse_scale[static_cast<std::size_t>(j)]);
      }
    }
    const double deviation = std::sqrt(deviation2);
    bool final_pass = deviation <= 0.5;
    if (!final_pass && deviation <= 0.5 * std::sqrt(static_cast<double>(n)))
      final_pass = lanczos_certifies_final_pass<T>(ConstMatrixView<T>(gram), unscale, report);
    double shift = 0.0;
    for (int attempt = 0;; ++attempt) {
      for (index i = 0; i < n; ++i) {
        std::copy(gram.row(i).begin() + i, gram.row(i).end(), factor.view().row(i).begin() + i);
        factor(i, i) = static_cast<T>(static_cast<double>(gram(i, i)) + shift);
      }
      if (detail::cholesky_upper(n, factor.data(), n) == 0) break;
      if (attempt == max_shift_increases) return false;
      ++report.shift_increases;
      final_pass = false;
      shift = shift == 0.0 ? base_shift : 16.0 * shift;
    }
    // R = R̃ D (exact: D holds powers of two); on the last pass also S R with S = diag(±1),
    // since q (S R)⁻¹ = q R⁻¹ S negates the flipped columns for free.
    for (index i = 0; i < n; ++i) {
      auto row = factor.view().row(i);
      const T sign = final_pass && flip[static_cast<std::size_t>(i)] ? T(-1) : T(1);
      for (index j = i; j < n; ++j)
        row[static_cast<std::size_t>(j)] *= sign * static_cast<T>(scale[static_cast<std::size_t>(j)]);
    }
    detail::solve_right_upper<T>(factor, q);
    ++report.cholesky_passes;
    if (final_pass) return all_finite(ConstMatrixView<T>(q));
  }
  return false;
}

// to(k, i) = a(i, order[k]) (order empty: the identity). A band of rows of `a` stays in cache
// while every column is taken from it: with the columns permuted, square tiles would fetch
// each cache line of `a` once per column it holds.
template <Real T>
void gather_transposed(ConstMatrixView<T> a, std::span<const index> order, MatrixView<T> to) {
  constexpr index band = 8;
  for (index i0 = 0; i0 < to.cols(); i0 += band) {
    const index i1 = std::min(i0 + band, to.cols());
    for (index k = 0; k < to.rows(); ++k) {
      const index column = order.empty() ? k : order[static_cast<std::size_t>(k)];
      auto out = to.row(k);
      for (index i = i0; i < i1; ++i) out[static_cast<std::size_t>(i)] = a(i, column);
    }
  }
}

// LU-preconditioned shifted Cholesky QR of a[:, order] into q (LU-CholeskyQR, Terao, Ozaki &
// Ogita 2020). Plain Cholesky QR squares κ: a float input with κ > u^-½ ≈ 4e3 — F·B of a
// warm refresh has κ ~ 1e4 and beyond once column-equilibrated, since the components of the
// small-eigenvalue columns along the large eigenvectors are amplified — needs a shifted pass
// and then two more. Row-pivoted LU first, Π A = L U, keeps the column order (U is upper
// triangular), and L (|entries| <= 1, unit diagonal) is typically conditioned like n rather
// than like A, so the passes run on Πᵀ L: one pass leaves it nearly orthonormal and a second
// finishes, Q = orth(Πᵀ L) and A = Q (R_L U). Cost: LU 2n³/3 + a first pass whose Gram is
// lauum on a triangle (n³/3) — about what plain Cholesky QR2 costs — and rank-deficient or
// ill-conditioned A no longer matter. Column k of Q is negated where U_kk < 0, so that
// q_kᵀ a_k = (R_L)_kk |U_kk| >= 0.
template <Real T>
bool lu_cholesky_qr(ConstMatrixView<T> a, std::span<const index> order, MatrixView<T> q,
                    OrthonormalizationReport& report) {
  const index m = a.rows();
  const index n = a.cols();
  Matrix<T> columns(n, m);  // column-major A
  gather_transposed(a, order, columns.view());
  std::vector<index> rows(static_cast<std::size_t>(m));
  if (detail::lu_row_pivoted<T>(columns.view(), rows) < 0) return false;
  std::vector<bool> flip(static_cast<std::size_t>(n));
  for (index k = 0; k < n; ++k) {
    // U(0..k, k) = columns(k, 0..k) vanishes exactly when column k of A does (A(:, k) =
    // Πᵀ L U(:, k)): such a column is left to Householder, as in any other pass.
    auto u = columns.view().row(k).first(static_cast<std::size_t>(k + 1));
    if (std::ranges::all_of(u, [](T x) { return x == T(0); })) return false;
    flip[static_cast<std::size_t>(k)] = u.back() < T(0);
  }
  // q = Πᵀ L: row rows[i] of q is row i of L, L(i, j) = columns(j, i) below the diagonal.
  constexpr index tile = 32;
  for (index i0 = 0; i0 < m; i0 += tile)
    for (index j0 = 0; j0 < n; j0 += tile) {
      const index i1 = std::min(i0 + tile, m);
      const index j1 = std::min(j0 + tile, n);
      for (index i = i0; i < i1; ++i) {
        auto out = q.row(rows[static_cast<std::size_t>(i)]);
        for (index j = j0; j < j1; ++j)
          out[static_cast<std::size_t>(j)] = i > j ? columns(j, i) : (i == j ? T(1) : T(0));
      }
    }
  // LᵀL lands in columns' leading n x n block, which then serves every pass as Gram storage.
  detail::unit_lower_gram<T>(columns.view());
  report.lu_preconditioned = true;
  return cholesky_qr_passes(q, columns.view().block(0, 0, n, n), flip, report);
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
  if (method == Orthogonalization::shifted_cholesky_qr) {
    if (lu_cholesky_qr(a, order, q, report)) return Status::success();
    report.fell_back = true;
  }
  gather_columns(a, order, q);
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
