// Orthonormalization (Householder and shifted Cholesky QR) on well-conditioned, ill-conditioned,
// column-graded and rank-deficient matrices, checked in float64 by the test itself.
#include <gtest/gtest.h>

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

enum class Shape { gaussian, ill_conditioned, graded_columns, rank_deficient, zero_column };

const char* name(Shape s) {
  switch (s) {
    case Shape::gaussian: return "gaussian";
    case Shape::ill_conditioned: return "ill_conditioned";
    case Shape::graded_columns: return "graded_columns";
    case Shape::rank_deficient: return "rank_deficient";
    case Shape::zero_column: return "zero_column";
  }
  return "?";
}

Dense gaussian(index m, index n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Dense a(m, n);
  for (double& v : a.v) v = normal(rng);
  return a;
}

// Test matrices (m x n, m >= n). κ of the ill-conditioned one is 1e6 in float, 1e12 in double:
// past u^(−1/2), where plain Cholesky QR breaks down, and within u⁻¹, where QR is still stable.
template <Real T>
Dense make(Shape shape, index m, index n, std::uint32_t seed) {
  const bool single = std::is_same_v<T, float>;
  switch (shape) {
    case Shape::gaussian: return gaussian(m, n, seed);
    case Shape::ill_conditioned: {
      // U(:, :n) diag(σ) Wᵀ with U, W orthogonal and σ log-spaced.
      const Dense u = testing::random_orthogonal(m, seed);
      const Dense w = testing::random_orthogonal(n, seed + 1);
      const std::vector<double> sigma = testing::log_spectrum(n, 1.0, single ? 1e-6 : 1e-12);
      Dense left(m, n);
      for (index i = 0; i < m; ++i)
        for (index j = 0; j < n; ++j) left(i, j) = u(i, j) * sigma[static_cast<std::size_t>(j)];
      return testing::multiply(left, testing::transpose(w));
    }
    case Shape::graded_columns: {
      // Column norms spanning 1 … 1e-7 (1e-14), as F·B has (≈ the eigenvalues).
      Dense a = gaussian(m, n, seed);
      const std::vector<double> scale = testing::log_spectrum(n, 1.0, single ? 1e-7 : 1e-14);
      for (index i = 0; i < m; ++i)
        for (index j = 0; j < n; ++j) a(i, j) *= scale[static_cast<std::size_t>(j)];
      return a;
    }
    case Shape::rank_deficient: {
      const index r = std::max<index>(1, n / 3);
      return testing::multiply(gaussian(m, r, seed), gaussian(r, n, seed + 1));
    }
    case Shape::zero_column: {
      Dense a = gaussian(m, n, seed);
      for (index i = 0; i < m; ++i) a(i, 0) = 0.0;
      return a;
    }
  }
  return {};
}

template <Real T>
void check(Orthogonalization method, Shape shape, index m, index n, std::uint32_t seed) {
  SCOPED_TRACE(std::string(method == Orthogonalization::householder ? "householder " : "cholesky ") + name(shape) +
               " " + std::to_string(m) + "x" + std::to_string(n) + (std::is_same_v<T, float> ? " float" : " double"));
  const Matrix<T> a = testing::to_matrix<T>(make<T>(shape, m, n, seed));
  Matrix<T> q(m, n);
  OrthonormalizationReport report;
  const Status status = orthonormalize_columns<T>(a, {}, method, q, report);
  ASSERT_TRUE(status.ok()) << status.message();

  const double u = std::numeric_limits<T>::epsilon() / 2;
  const Dense ad = testing::to_dense<T>(a);
  const Dense qd = testing::to_dense<T>(q);
  const Dense r = testing::multiply(testing::transpose(qd), ad);  // QᵀA, upper triangular if A = QR
  Dense rebuilt_r = r;
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < i; ++j) rebuilt_r(i, j) = 0.0;
  const Dense rebuilt = testing::multiply(qd, rebuilt_r);
  double diff = 0.0;
  for (std::size_t k = 0; k < ad.v.size(); ++k) diff += (ad.v[k] - rebuilt.v[k]) * (ad.v[k] - rebuilt.v[k]);
  const double reconstruction = std::sqrt(diff) / testing::frobenius(ad);
  const double orthogonality = testing::orthogonality_defect<T>(q);
  double worst_sign = 0.0;  // most negative R_kk / ‖a_k‖
  for (index k = 0; k < n; ++k) {
    double norm = 0.0;
    for (index i = 0; i < m; ++i) norm += ad(i, k) * ad(i, k);
    if (norm > 0.0) worst_sign = std::min(worst_sign, r(k, k) / std::sqrt(norm));
  }
  // Householder QR's computed Q has ‖QᵀQ − I‖ = O(m·n·u) in the worst case and about n·u in
  // practice (seen: ≤ 0.7·n·u from n = 17 on, ≤ 3·n·u for n ≤ 2); shifted Cholesky QR ends with
  // a Cholesky QR pass on a κ ≤ √3 input, whose error bound has the same form. So 3(n+4)u for
  // both the orthogonality and the reconstruction A = Q·triu(QᵀA) — the latter fails unless Q
  // spans A's columns in order (span of q_1..q_k ⊇ span of a_1..a_k) with R triangular.
  const double tol = 3.0 * static_cast<double>(n + 4) * u;
  EXPECT_LE(orthogonality, tol);
  if (testing::frobenius(ad) > 0.0) {
    EXPECT_LE(reconstruction, tol);
  }
  // Direction: R_kk = q_kᵀa_k >= 0, strictly (relative to rounding) for full-rank input; a
  // dependent column has R_kk at rounding level and either sign.
  EXPECT_GE(worst_sign, -static_cast<double>(n + 4) * u);
  if (shape != Shape::rank_deficient && shape != Shape::zero_column) {
    for (index k = 0; k < n; ++k) EXPECT_GT(r(k, k), 0.0) << k;
  }
  if (method == Orthogonalization::householder) {
    EXPECT_EQ(report.cholesky_passes, 0);
  } else {
    // Cholesky QR must handle everything but an exactly zero column itself.
    EXPECT_EQ(report.fell_back, shape == Shape::zero_column);
  }
}

template <Real T>
void check_all(Orthogonalization method) {
  std::uint32_t seed = 21;
  for (Shape shape : {Shape::gaussian, Shape::ill_conditioned, Shape::graded_columns, Shape::rank_deficient,
                      Shape::zero_column})
    for (auto [m, n] : {std::pair<index, index>{1, 1}, {2, 2}, {17, 17}, {128, 128}, {200, 64}, {300, 300}})
      check<T>(method, shape, m, n, seed++);
}

TEST(Orthonormalize, HouseholderFloat) { check_all<float>(Orthogonalization::householder); }
TEST(Orthonormalize, HouseholderDouble) { check_all<double>(Orthogonalization::householder); }
TEST(Orthonormalize, ShiftedCholeskyQrFloat) { check_all<float>(Orthogonalization::shifted_cholesky_qr); }
TEST(Orthonormalize, ShiftedCholeskyQrDouble) { check_all<double>(Orthogonalization::shifted_cholesky_qr); }

// Taking columns in a given order is the same as orthonormalizing the permuted copy.
TEST(Orthonormalize, ColumnOrderMatchesPermutedCopy) {
  const index n = 40;
  const Dense a = gaussian(n, n, 5);
  std::vector<index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), index{0});
  std::shuffle(order.begin(), order.end(), std::mt19937(6));
  Dense permuted(n, n);
  for (index i = 0; i < n; ++i)
    for (index k = 0; k < n; ++k) permuted(i, k) = a(i, order[static_cast<std::size_t>(k)]);
  for (Orthogonalization method : {Orthogonalization::householder, Orthogonalization::shifted_cholesky_qr}) {
    const Matrix<double> source = testing::to_matrix<double>(a);
    Matrix<double> q(n, n);
    OrthonormalizationReport report;
    ASSERT_TRUE(orthonormalize_columns<double>(source, order, method, q, report).ok());
    Matrix<double> expected(n, n);
    ASSERT_TRUE(orthonormalize<double>(testing::to_matrix<double>(permuted), method, expected).ok());
    for (index i = 0; i < n; ++i)
      for (index k = 0; k < n; ++k) EXPECT_NEAR(q(i, k), expected(i, k), 1e-13);
  }
}

TEST(Orthonormalize, RejectsBadInput) {
  Matrix<float> a(3, 3);
  fill(a.view(), 1.0F);
  Matrix<float> q(3, 3);
  a(1, 1) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(orthonormalize<float>(a, Orthogonalization::shifted_cholesky_qr, q).code(), StatusCode::non_finite_input);
  Matrix<float> wide(2, 3);
  Matrix<float> wide_q(2, 3);
  EXPECT_EQ(orthonormalize<float>(wide, Orthogonalization::householder, wide_q).code(), StatusCode::invalid_argument);
  const std::vector<index> not_a_permutation = {0, 0, 1};
  OrthonormalizationReport report;
  a(1, 1) = 0.0F;
  EXPECT_EQ(orthonormalize_columns<float>(a, not_a_permutation, Orthogonalization::householder, q, report).code(),
            StatusCode::invalid_argument);
}

// In place (q is a) works for both methods.
TEST(Orthonormalize, InPlace) {
  const index n = 30;
  for (Orthogonalization method : {Orthogonalization::householder, Orthogonalization::shifted_cholesky_qr}) {
    Matrix<double> a = testing::to_matrix<double>(gaussian(n, n, 9));
    ASSERT_TRUE(orthonormalize<double>(a, method, a).ok());
    EXPECT_LE(testing::orthogonality_defect<double>(a), 1e-13);
  }
}

}  // namespace
}  // namespace asteria::linalg
