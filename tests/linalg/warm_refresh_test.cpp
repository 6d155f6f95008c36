// Pass counts of the LU-preconditioned shifted Cholesky QR: a warm SOAP refresh (F·B of
// statistics with a decaying spectrum, from the basis of slightly older statistics) must take
// no more than two Cholesky passes, and the Lanczos estimate of ‖G̃ − I‖₂ must end the loop
// early exactly when the 2-norm allows it. Results are checked in float64 by the test itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/orthogonality.hpp"
#include "tests/linalg/linalg_reference.hpp"

namespace asteria::linalg {
namespace {

using testing::Dense;

// F = G Gᵀ/n + 1e-4·mean(diag)·I with G(i, j) ~ N(0, 1)/√(1+j): a Kronecker factor whose
// spectrum decays over about five decades. `drift` adds a second seed's noise to G: the same
// statistics a few steps earlier or later.
Dense decaying_statistics(index n, double drift) {
  std::mt19937 rng(101);
  std::mt19937 rng2(102);
  std::normal_distribution<double> normal;
  Dense g(n, n);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) g(i, j) = normal(rng) / std::sqrt(1.0 + static_cast<double>(j));
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) g(i, j) += drift * normal(rng2) / std::sqrt(1.0 + static_cast<double>(j));
  Dense f = testing::multiply(g, testing::transpose(g));
  double trace = 0.0;
  for (index i = 0; i < n; ++i) trace += f(i, i);
  for (double& v : f.v) v /= static_cast<double>(n);
  for (index i = 0; i < n; ++i) f(i, i) += 1e-4 * trace / static_cast<double>(n * n);
  return f;
}

// ‖A − Q·triu(QᵀA)‖_F / ‖A‖_F and min_k (QᵀA)_kk / ‖a_k‖: A = QR with R upper triangular and
// a positive diagonal, i.e. Q is the Q of A's QR factorization.
struct QrCheck {
  double reconstruction = 0.0;
  double worst_diagonal = 0.0;
};

template <Real T>
QrCheck check_qr(const Dense& a, const Matrix<T>& q) {
  const index n = a.n_cols;
  const Dense qd = testing::to_dense<T>(q);
  Dense r = testing::multiply(testing::transpose(qd), a);
  QrCheck out{0.0, std::numeric_limits<double>::infinity()};
  for (index k = 0; k < n; ++k) {
    double norm = 0.0;
    for (index i = 0; i < a.n_rows; ++i) norm += a(i, k) * a(i, k);
    out.worst_diagonal = std::min(out.worst_diagonal, r(k, k) / std::sqrt(norm));
  }
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < i; ++j) r(i, j) = 0.0;
  const Dense rebuilt = testing::multiply(qd, r);
  double diff = 0.0;
  for (std::size_t k = 0; k < a.v.size(); ++k) diff += (a.v[k] - rebuilt.v[k]) * (a.v[k] - rebuilt.v[k]);
  out.reconstruction = std::sqrt(diff) / testing::frobenius(a);
  return out;
}

template <Real T>
void check_warm_refresh(index n) {
  SCOPED_TRACE("n=" + std::to_string(n) + (std::is_same_v<T, float> ? " float" : " double"));
  const double unit = std::numeric_limits<T>::epsilon() / 2;
  const double tol = 3.0 * static_cast<double>(n + 4) * unit;
  const Dense f = decaying_statistics(n, 0.0);
  Matrix<T> basis(n, n);
  ASSERT_TRUE(initial_eigenbasis<T>(testing::to_matrix<T>(decaying_statistics(n, 0.05)), basis).ok());

  // The refresh's orthogonalization input, formed here: P = F·B with columns sorted by the
  // Rayleigh quotients bᵀF b, descending.
  const Dense b = testing::to_dense<T>(basis);
  const Dense p = testing::multiply(f, b);
  std::vector<double> rayleigh(static_cast<std::size_t>(n), 0.0);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) rayleigh[static_cast<std::size_t>(j)] += b(i, j) * p(i, j);
  std::vector<index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), index{0});
  std::ranges::stable_sort(order, [&](index x, index y) {
    return rayleigh[static_cast<std::size_t>(x)] > rayleigh[static_cast<std::size_t>(y)];
  });
  const Matrix<T> product = testing::to_matrix<T>(p);
  Dense sorted(n, n);
  for (index i = 0; i < n; ++i)
    for (index k = 0; k < n; ++k) sorted(i, k) = static_cast<double>(product(i, order[static_cast<std::size_t>(k)]));

  Matrix<T> q(n, n);
  OrthonormalizationReport report;
  ASSERT_TRUE(orthonormalize_columns<T>(product, order, Orthogonalization::shifted_cholesky_qr, q, report).ok());
  EXPECT_FALSE(report.fell_back);
  EXPECT_TRUE(report.lu_preconditioned);
  EXPECT_GE(report.cholesky_passes, 1);
  EXPECT_LE(report.cholesky_passes, 2);
  EXPECT_LE(testing::orthogonality_defect<T>(q), tol);
  const QrCheck qr = check_qr<T>(sorted, q);
  EXPECT_LE(qr.reconstruction, tol);
  EXPECT_GT(qr.worst_diagonal, 0.0);

  // The refresh itself, on the same statistics and basis.
  Matrix<T> fresh(n, n);
  std::vector<index> refresh_order(static_cast<std::size_t>(n));
  ASSERT_TRUE(refresh_eigenbasis<T>(testing::to_matrix<T>(f), basis, EigenvalueOrder::descending,
                                    Orthogonalization::shifted_cholesky_qr, fresh, refresh_order, {})
                  .ok());
  EXPECT_LE(testing::orthogonality_defect<T>(fresh), tol);
}

TEST(WarmRefresh, AtMostTwoCholeskyPassesFloat) { check_warm_refresh<float>(256); }
TEST(WarmRefresh, AtMostTwoCholeskyPassesDouble) { check_warm_refresh<double>(128); }

// A = I + εZ, Z strictly lower triangular Gaussian: row-pivoted LU leaves it as it is (L = A,
// U = I), so the first pass sees G = AᵀA with ‖G − I‖₂ ≈ 2ε√n but ‖G − I‖_F ≈ εn. For
// ε = 0.005 at n = 256 that is ≈ 0.18 against ≈ 1.3: only the 2-norm estimate lets the first
// pass be the last. For ε = 0.02 (‖G − I‖₂ ≈ 0.7) it must not.
Dense perturbed_identity(index n, double epsilon) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  Dense a(n, n);
  for (index i = 0; i < n; ++i) {
    a(i, i) = 1.0;
    for (index j = 0; j < i; ++j) a(i, j) = epsilon * normal(rng);
  }
  return a;
}

TEST(ShiftedCholeskyQr, TwoNormEstimateEndsTheLoopWhenItMay) {
  const index n = 256;
  const double tol = 3.0 * static_cast<double>(n + 4) * std::numeric_limits<float>::epsilon() / 2;
  for (double epsilon : {0.005, 0.02}) {
    SCOPED_TRACE("epsilon=" + std::to_string(epsilon));
    const Dense a = perturbed_identity(n, epsilon);
    Matrix<float> q(n, n);
    OrthonormalizationReport report;
    ASSERT_TRUE(orthonormalize_columns<float>(testing::to_matrix<float>(a), {}, Orthogonalization::shifted_cholesky_qr,
                                              q, report)
                    .ok());
    EXPECT_FALSE(report.fell_back);
    EXPECT_GT(report.lanczos_steps, 0);
    EXPECT_EQ(report.cholesky_passes, epsilon < 0.01 ? 1 : 2);
    EXPECT_LE(testing::orthogonality_defect<float>(q), tol);
    const QrCheck qr = check_qr<float>(a, q);
    EXPECT_LE(qr.reconstruction, tol);
    EXPECT_GT(qr.worst_diagonal, 0.0);
  }
}

// F·B overflows float (3e38·√2 > FLT_MAX) although F and B are finite: reported, not passed on.
TEST(WarmRefresh, OverflowingProductIsReported) {
  Matrix<float> f(2, 2);
  fill(f.view(), 3.0e38F);
  Matrix<float> basis(2, 2);
  const float h = static_cast<float>(std::sqrt(0.5));
  basis(0, 0) = h;
  basis(1, 0) = h;
  basis(0, 1) = h;
  basis(1, 1) = -h;
  Matrix<float> next(2, 2);
  std::vector<index> order(2);
  for (Orthogonalization method : {Orthogonalization::householder, Orthogonalization::shifted_cholesky_qr})
    EXPECT_EQ(refresh_eigenbasis<float>(f, basis, EigenvalueOrder::descending, method, next, order, {}).code(),
              StatusCode::non_finite_output);
}

}  // namespace
}  // namespace asteria::linalg
