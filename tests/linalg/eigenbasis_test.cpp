// SOAP eigenbases: the initial basis (eigh, descending) and the warm refresh, checked against
// matrices of known eigendecomposition.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "core/linalg/eigen.hpp"
#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/orthogonality.hpp"
#include "tests/linalg/linalg_reference.hpp"

namespace asteria::linalg {
namespace {

using testing::Dense;

// |⟨basis(:, j), u(:, j)⟩| — 1 when the column is the eigenvector up to sign.
template <Real T>
double alignment(const Matrix<T>& basis, const Dense& u, index j) {
  double dot = 0.0;
  for (index i = 0; i < u.n_rows; ++i) dot += static_cast<double>(basis(i, j)) * u(i, j);
  return std::abs(dot);
}

template <Real T>
void check_initial(index n, std::uint32_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + (std::is_same_v<T, float> ? " float" : " double"));
  const Dense u = testing::random_orthogonal(n, seed);
  // Distinct eigenvalues, ratio 0.9 between neighbours: relative gaps ≥ 10%.
  std::vector<double> d(static_cast<std::size_t>(n));
  for (index i = 0; i < n; ++i) d[static_cast<std::size_t>(i)] = 2.0 * std::pow(0.9, static_cast<double>(i));
  const Matrix<T> f = testing::to_matrix<T>(testing::from_eigen(u, d));
  Matrix<T> basis(n, n);
  ASSERT_TRUE(initial_eigenbasis<T>(f, basis).ok());
  // Eigenvector error ≈ u‖F‖/gap (Davis–Kahan); the smallest gap is 0.1·λ_min ≈ 2·0.9^(n−1)/10.
  const double unit = std::numeric_limits<T>::epsilon() / 2;
  const double gap = 0.2 * std::pow(0.9, static_cast<double>(n - 1));
  const double tol = 50.0 * unit * 2.0 / gap * std::sqrt(static_cast<double>(n));
  for (index j = 0; j < n; ++j) EXPECT_NEAR(alignment(basis, u, j), 1.0, tol) << "column " << j;
  EXPECT_LE(testing::orthogonality_defect<T>(basis), 4.0 * static_cast<double>(n + 4) * unit);
}

TEST(InitialEigenbasis, DescendingEigenvectorsFloat) {
  for (index n : {1, 2, 17, 128}) check_initial<float>(n, 31 + static_cast<std::uint32_t>(n));
}
TEST(InitialEigenbasis, DescendingEigenvectorsDouble) {
  for (index n : {1, 2, 17, 128}) check_initial<double>(n, 41 + static_cast<std::uint32_t>(n));
}

// The float solve overflows (eigenvalue 2c ≈ 6e38 > FLT_MAX) and is retried in double; the
// eigenvectors themselves are representable: [1,1]/√2 (largest) then [1,−1]/√2.
TEST(InitialEigenbasis, FloatOverflowIsRetriedInDouble) {
  Matrix<float> f(2, 2);
  fill(f.view(), 3.0e38F);
  Matrix<float> basis(2, 2);
  const Status status = initial_eigenbasis<float>(f, basis);
  ASSERT_TRUE(status.ok()) << status.message();
  const float h = static_cast<float>(std::sqrt(0.5));
  EXPECT_NEAR(std::abs(basis(0, 0)), h, 1e-6);
  EXPECT_NEAR(basis(0, 0), basis(1, 0), 1e-6);
  EXPECT_NEAR(basis(0, 1), -basis(1, 1), 1e-6);
  // eigh cannot return that eigenvalue in float: it must say so instead of writing Inf.
  std::vector<float> values(2);
  EXPECT_EQ(eigh<float>(f, values, basis).code(), StatusCode::non_finite_output);
}

TEST(InitialEigenbasis, NonFiniteStatisticsAreReported) {
  Matrix<double> f = Matrix<double>::identity(3);
  f(0, 2) = std::numeric_limits<double>::quiet_NaN();
  Matrix<double> basis(3, 3);
  EXPECT_EQ(initial_eigenbasis<double>(f, basis).code(), StatusCode::non_finite_input);
}

// Iterated warm refreshes are subspace iteration: column j converges to the j-th eigenvector
// at rate λ_{j+1}/λ_j per step (0.7 here, so 60 steps leave 0.7^60 ≈ 5e-10), from a start
// whose columns are scrambled — the descending sort must restore the order.
template <Real T>
void check_converges(Orthogonalization method) {
  SCOPED_TRACE(std::string(method == Orthogonalization::householder ? "householder" : "cholesky") +
               (std::is_same_v<T, float> ? " float" : " double"));
  const index n = 24;
  const Dense u = testing::random_orthogonal(n, 51);
  std::vector<double> d(static_cast<std::size_t>(n));
  for (index i = 0; i < n; ++i) d[static_cast<std::size_t>(i)] = std::pow(0.7, static_cast<double>(i));
  const Matrix<T> f = testing::to_matrix<T>(testing::from_eigen(u, d));
  // Start: the true basis with columns shuffled, rotated away by a random orthogonal mix.
  std::vector<index> shuffle(static_cast<std::size_t>(n));
  std::iota(shuffle.begin(), shuffle.end(), index{0});
  std::shuffle(shuffle.begin(), shuffle.end(), std::mt19937(52));
  const Dense mix = testing::random_orthogonal(n, 53);
  Dense start(n, n);
  for (index i = 0; i < n; ++i)
    for (index k = 0; k < n; ++k)
      start(i, k) = 0.8 * u(i, shuffle[static_cast<std::size_t>(k)]) + 0.2 * mix(i, k);
  Matrix<T> basis(n, n);
  ASSERT_TRUE(orthonormalize<T>(testing::to_matrix<T>(start), Orthogonalization::householder, basis).ok());

  std::vector<index> order(static_cast<std::size_t>(n));
  std::vector<T> estimates(static_cast<std::size_t>(n));
  Matrix<T> next(n, n);
  for (int step = 0; step < 60; ++step) {
    ASSERT_TRUE(refresh_eigenbasis<T>(f, basis, EigenvalueOrder::descending, method, next, order, estimates).ok());
    for (index k = 1; k < n; ++k) EXPECT_GE(estimates[static_cast<std::size_t>(k - 1)], estimates[static_cast<std::size_t>(k)]);
    std::swap(basis, next);
  }
  // Once converged, the estimates are the eigenvalues (Rayleigh quotients, error ∝ angle²).
  const double unit = std::numeric_limits<T>::epsilon() / 2;
  for (index j = 0; j < n; ++j) {
    // Float: the eigenvector of λ_j can be resolved to about u‖F‖/gap_j with gap_j = 0.3 λ_j.
    const double vector_tol = std::max(1e-8, 50.0 * unit / (0.3 * d[static_cast<std::size_t>(j)]));
    EXPECT_NEAR(alignment(basis, u, j), 1.0, vector_tol) << "column " << j;
    EXPECT_NEAR(estimates[static_cast<std::size_t>(j)], d[static_cast<std::size_t>(j)], 20.0 * unit) << j;
  }
  EXPECT_LE(testing::orthogonality_defect<T>(basis), 3.0 * static_cast<double>(n + 4) * unit);
}

TEST(RefreshEigenbasis, ConvergesToEigenbasisHouseholderFloat) { check_converges<float>(Orthogonalization::householder); }
TEST(RefreshEigenbasis, ConvergesToEigenbasisHouseholderDouble) { check_converges<double>(Orthogonalization::householder); }
TEST(RefreshEigenbasis, ConvergesToEigenbasisCholeskyFloat) {
  check_converges<float>(Orthogonalization::shifted_cholesky_qr);
}
TEST(RefreshEigenbasis, ConvergesToEigenbasisCholeskyDouble) {
  check_converges<double>(Orthogonalization::shifted_cholesky_qr);
}

// One refresh from a scrambled exact basis: `order` sorts the estimates, which are diag(BᵀFB).
TEST(RefreshEigenbasis, DescendingOrderPermutesByEstimatedEigenvalue) {
  const index n = 10;
  const Dense u = testing::random_orthogonal(n, 61);
  std::vector<double> d(static_cast<std::size_t>(n));
  for (index i = 0; i < n; ++i) d[static_cast<std::size_t>(i)] = 10.0 - static_cast<double>(i);
  const Matrix<double> f = testing::to_matrix<double>(testing::from_eigen(u, d));
  const std::vector<index> scramble = {3, 7, 0, 9, 1, 5, 2, 8, 6, 4};
  Matrix<double> basis(n, n);
  for (index i = 0; i < n; ++i)
    for (index k = 0; k < n; ++k) basis(i, k) = u(i, scramble[static_cast<std::size_t>(k)]);
  std::vector<index> order(static_cast<std::size_t>(n));
  std::vector<double> estimates(static_cast<std::size_t>(n));
  Matrix<double> next(n, n);
  ASSERT_TRUE(refresh_eigenbasis<double>(f, basis, EigenvalueOrder::descending, Orthogonalization::shifted_cholesky_qr,
                                         next, order, estimates)
                  .ok());
  for (index k = 0; k < n; ++k) {
    // New column k is old column order[k], which holds eigenvector k (eigenvalue 10 − k).
    EXPECT_EQ(scramble[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])], k);
    EXPECT_NEAR(estimates[static_cast<std::size_t>(k)], d[static_cast<std::size_t>(k)], 1e-12);
    EXPECT_NEAR(alignment(next, u, k), 1.0, 1e-12);
  }
}

// `keep` (KL-Shampoo): identity order, estimates = diag(BᵀFB) in the old order, new basis =
// orth(F·B) column for column, pointing the same way as F·B's columns.
TEST(RefreshEigenbasis, KeepOrderGivesIdentityPermutation) {
  const index n = 12;
  const Dense u = testing::random_orthogonal(n, 71);
  const Dense f_dense = testing::from_eigen(u, testing::log_spectrum(n, 3.0, 0.1));
  const Matrix<double> f = testing::to_matrix<double>(f_dense);
  const Dense b_dense = testing::random_orthogonal(n, 72);
  const Matrix<double> basis = testing::to_matrix<double>(b_dense);
  std::vector<index> order(static_cast<std::size_t>(n), -1);
  std::vector<double> estimates(static_cast<std::size_t>(n));
  Matrix<double> next(n, n);
  for (Orthogonalization method : {Orthogonalization::householder, Orthogonalization::shifted_cholesky_qr}) {
    ASSERT_TRUE(refresh_eigenbasis<double>(f, basis, EigenvalueOrder::keep, method, next, order, estimates).ok());
    const Dense fb = testing::multiply(f_dense, b_dense);
    const Dense btfb = testing::multiply(testing::transpose(b_dense), fb);
    for (index k = 0; k < n; ++k) {
      EXPECT_EQ(order[static_cast<std::size_t>(k)], k);
      EXPECT_NEAR(estimates[static_cast<std::size_t>(k)], btfb(k, k), 1e-13);
      double projection = 0.0;
      for (index i = 0; i < n; ++i) projection += next(i, k) * fb(i, k);
      EXPECT_GT(projection, 0.0);
    }
    // Same space, triangular: (F·B) = Q·R with R = Qᵀ(F·B) upper triangular.
    const Dense r = testing::multiply(testing::transpose(testing::to_dense<double>(next)), fb);
    for (index i = 0; i < n; ++i)
      for (index j = 0; j < i; ++j) EXPECT_NEAR(r(i, j), 0.0, 1e-13);
  }
}

TEST(RefreshEigenbasis, InPlaceUpdateMatchesSeparateOutput) {
  const index n = 16;
  const Matrix<float> f = testing::to_matrix<float>(testing::from_eigen(testing::random_orthogonal(n, 81), testing::log_spectrum(n, 1, 1e-3)));
  Matrix<float> basis = testing::to_matrix<float>(testing::random_orthogonal(n, 82));
  std::vector<index> order(static_cast<std::size_t>(n));
  Matrix<float> separate(n, n);
  ASSERT_TRUE(refresh_eigenbasis<float>(f, basis, EigenvalueOrder::descending, Orthogonalization::shifted_cholesky_qr,
                                        separate, order, {})
                  .ok());
  ASSERT_TRUE(refresh_eigenbasis<float>(f, basis, EigenvalueOrder::descending, Orthogonalization::shifted_cholesky_qr,
                                        basis, order, {})
                  .ok());
  for (index i = 0; i < n; ++i)
    for (index k = 0; k < n; ++k) EXPECT_EQ(basis(i, k), separate(i, k));
}

TEST(RefreshEigenbasis, RejectsNonFiniteAndMismatchedInput) {
  Matrix<float> f = Matrix<float>::identity(4);
  Matrix<float> basis = Matrix<float>::identity(4);
  Matrix<float> next(4, 4);
  fill(next.view(), 7.0F);
  std::vector<index> order(4);
  f(1, 2) = std::numeric_limits<float>::infinity();
  EXPECT_EQ(refresh_eigenbasis<float>(f, basis, EigenvalueOrder::descending, Orthogonalization::householder, next,
                                      order, {})
                .code(),
            StatusCode::non_finite_input);
  for (float v : next.values()) EXPECT_EQ(v, 7.0F);
  f(1, 2) = 0.0F;
  std::vector<index> short_order(3);
  EXPECT_EQ(refresh_eigenbasis<float>(f, basis, EigenvalueOrder::descending, Orthogonalization::householder, next,
                                      short_order, {})
                .code(),
            StatusCode::invalid_argument);
}

}  // namespace
}  // namespace asteria::linalg
