// Inverse p-th roots: ‖X^(−p) − (A + εI)‖_F / ‖A + εI‖_F over sizes, roots, conditioning and
// both methods, checked against independent float64 references (linalg_reference.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/linalg/inverse_root.hpp"
#include "tests/linalg/linalg_reference.hpp"

namespace asteria::linalg {
namespace {

using testing::Dense;

enum class Conditioning { well, ill, rank_deficient };
enum class Method { eigen, newton };

const char* name(Conditioning c) {
  return c == Conditioning::well ? "well" : c == Conditioning::ill ? "ill" : "rank_deficient";
}

// Spectra (scaled by 3.7 so nothing is accidentally 1):
//   well: κ = 10;  ill: κ = 1e6;  rank_deficient: half log-spaced in [1e-3, 1], half exactly 0.
std::vector<double> spectrum(Conditioning c, index n) {
  std::vector<double> d = testing::log_spectrum(n, 3.7, c == Conditioning::well ? 0.37 : c == Conditioning::ill ? 3.7e-6 : 3.7e-3);
  if (c == Conditioning::rank_deficient)
    for (index i = (n + 1) / 2; i < n; ++i) d[static_cast<std::size_t>(i)] = 0.0;
  return d;
}

// ε well above the rounding noise of the stored matrix (u‖A‖) for the rank-deficient case, so
// that A + εI is a meaningful, representable target; tiny elsewhere, as optimizers use it.
template <Real T>
double epsilon_for(Conditioning c) {
  if (c == Conditioning::rank_deficient) return std::is_same_v<T, float> ? 1e-4 : 1e-9;
  return 1e-12;
}

template <Real T>
bool finite(const Matrix<T>& m) {
  for (T v : m.values())
    if (!std::isfinite(v)) return false;
  return true;
}

template <Real T>
Status run(Method method, ConstMatrixView<T> a, int p, double eps, MatrixView<T> x) {
  return method == Method::eigen ? inverse_root_eigen<T>(a, p, eps, x) : inverse_root_newton<T>(a, p, eps, {}, x);
}

// Tolerance, relative to what is achievable at all: `floor` is the residual of the exact root
// (known from the construction) merely rounded to T. When κ^(1/p)·u is not small, rounding X
// to T alone perturbs X's smallest eigenvalue (λ_max^(−1/p)) by about u·‖X‖ = u·λ_min^(−1/p)
// and the p-th power amplifies it, so no method can beat `floor`. The eigen method's X carries
// a few roundings of that size (eigenvectors, the SYRK sum): within 30× floor (seen: ≤ 15×).
// Newton accumulates 10–40 products, each adding one: within 100× (seen: ≤ 50×). The additive
// terms: the backward error of a stable eigensolver/GEMM chain, ~√n·u per entry, and for
// Newton its stopping rule — X^(−p) = (A+εI)M⁻¹ exactly (the iteration keeps M = X^p(A+εI)),
// so the residual is ‖M⁻¹ − I‖ ≲ √n·max|M − I| ≤ √n·1e-6.
template <Real T>
double tolerance(Method method, double floor, index n) {
  const double u = std::numeric_limits<T>::epsilon() / 2;
  const double root_n = std::sqrt(static_cast<double>(n));
  if (method == Method::eigen) return 30.0 * floor + 50.0 * root_n * u;
  return 100.0 * floor + 50.0 * root_n * u + 4.0 * root_n * CoupledNewtonOptions{}.tolerance;
}

template <Real T>
void check_root(Method method, index n, int p, Conditioning c, std::uint32_t seed) {
  SCOPED_TRACE(std::string(method == Method::eigen ? "eigen" : "newton") + " n=" + std::to_string(n) +
               " p=" + std::to_string(p) + " " + name(c) + (std::is_same_v<T, float> ? " float" : " double"));
  const Dense u = testing::random_orthogonal(n, seed);
  const std::vector<double> d = spectrum(c, n);
  const Matrix<T> a = testing::to_matrix<T>(testing::from_eigen(u, d));
  const double eps = epsilon_for<T>(c);
  Matrix<T> x(n, n);
  const Status status = run<T>(method, a, p, eps, x);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(finite(x));

  Dense b = testing::to_dense<T>(a);  // the target is what the method saw: A rounded to T, + εI
  for (index i = 0; i < n; ++i) b(i, i) += eps;
  std::vector<double> root(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) root[i] = std::pow(d[i] + eps, -1.0 / p);
  const Matrix<T> rounded_exact = testing::to_matrix<T>(testing::from_eigen(u, root));
  const int probes = n > 256 ? 24 : 0;  // exact norm up to n = 256, an estimate beyond
  const double floor = testing::inverse_power_residual(testing::to_dense<T>(rounded_exact), p, b, probes);
  const double residual = testing::inverse_power_residual(testing::to_dense<T>(x), p, b, probes);
  EXPECT_LE(residual, tolerance<T>(method, floor, n)) << "floor " << floor;
  // The library's own residual must agree with the independent one where it is not rounding
  // noise of the checks themselves (both recompute X^(−p) from X, each with its own rounding).
  if (probes == 0 && c == Conditioning::well) {
    EXPECT_NEAR(inverse_root_residual<T>(a, x, p, eps), residual, 0.05 * residual + 1e-12);
  }
}

template <Real T>
void check_grid(Method method) {
  std::uint32_t seed = 11;
  for (index n : {1, 2, 17, 128})
    for (int p : {1, 2, 4})
      for (Conditioning c : {Conditioning::well, Conditioning::ill, Conditioning::rank_deficient})
        check_root<T>(method, n, p, c, seed++);
}

TEST(InverseRootEigen, FloatAcrossSizesRootsAndConditioning) { check_grid<float>(Method::eigen); }
TEST(InverseRootEigen, DoubleAcrossSizesRootsAndConditioning) { check_grid<double>(Method::eigen); }
TEST(InverseRootNewton, FloatAcrossSizesRootsAndConditioning) { check_grid<float>(Method::newton); }
TEST(InverseRootNewton, DoubleAcrossSizesRootsAndConditioning) { check_grid<double>(Method::newton); }

// n = 1024: the sizes Shampoo blocks have. Kept to three cases (the references are O(n³) loops).
TEST(InverseRootEigen, FloatLargeIllConditionedFourthRoot) { check_root<float>(Method::eigen, 1024, 4, Conditioning::ill, 5); }
TEST(InverseRootEigen, DoubleLargeRankDeficientSquareRoot) {
  check_root<double>(Method::eigen, 1024, 2, Conditioning::rank_deficient, 6);
}
TEST(InverseRootNewton, FloatLargeWellConditionedSquareRoot) { check_root<float>(Method::newton, 1024, 2, Conditioning::well, 7); }

// Indefinite input: λ(A + εI) = {3.5·…, −0.5} → every eigenvalue shifted by ε − λ_min = 1.
TEST(InverseRootEigen, ShiftsSpectrumWhenSmallestEigenvalueIsBelowEpsilon) {
  const index n = 4;
  const Dense u = testing::random_orthogonal(n, 3);
  const std::vector<double> d = {2.0, 1.0, 0.25, -1.0};
  const double eps = 0.5;
  const Matrix<double> a = testing::to_matrix<double>(testing::from_eigen(u, d));
  Matrix<double> x(n, n);
  ASSERT_TRUE(inverse_root_eigen<double>(a, 2.0, eps, x).ok());
  std::vector<double> shifted(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) shifted[i] = std::pow(d[i] + eps + (eps - (-1.0 + eps)), -0.5);
  const Dense expected = testing::from_eigen(u, shifted);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) EXPECT_NEAR(x(i, j), expected(i, j), 1e-13);
}

// Non-integer p is allowed by the eigen method: X = (A + εI)^(−1/2.5).
TEST(InverseRootEigen, NonIntegerRoot) {
  const index n = 9;
  const Dense u = testing::random_orthogonal(n, 4);
  const std::vector<double> d = testing::log_spectrum(n, 5.0, 0.5);
  const Matrix<double> a = testing::to_matrix<double>(testing::from_eigen(u, d));
  Matrix<double> x(n, n);
  ASSERT_TRUE(inverse_root_eigen<double>(a, 2.5, 0.0, x).ok());
  std::vector<double> root(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) root[i] = std::pow(d[i], -1.0 / 2.5);
  const Dense expected = testing::from_eigen(u, root);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) EXPECT_NEAR(x(i, j), expected(i, j), 1e-13);
}

// The residual is exact on a known perturbation: X = s·(A+εI)^(−1/p) gives X^(−p) = s^(−p)(A+εI).
TEST(InverseRootResidual, MeasuresAKnownRelativeError) {
  const index n = 12;
  const Dense u = testing::random_orthogonal(n, 8);
  const std::vector<double> d = testing::log_spectrum(n, 2.0, 0.01);
  const Matrix<double> a = testing::to_matrix<double>(testing::from_eigen(u, d));
  for (int p : {1, 2, 4}) {
    std::vector<double> root(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) root[i] = 1.01 * std::pow(d[i] + 0.1, -1.0 / p);
    const Matrix<double> x = testing::to_matrix<double>(testing::from_eigen(u, root));
    EXPECT_NEAR(inverse_root_residual<double>(a, x, p, 0.1), 1.0 - std::pow(1.01, -p), 1e-12);
  }
}

template <Real T>
void check_rejects_non_finite(T bad) {
  const index n = 5;
  Matrix<T> a = testing::to_matrix<T>(testing::from_eigen(testing::random_orthogonal(n, 9), testing::log_spectrum(n, 2, 1)));
  a(2, 3) = bad;
  Matrix<T> x(n, n);
  fill(x.view(), T(7));
  EXPECT_EQ(inverse_root_eigen<T>(a, 2.0, 1e-6, x).code(), StatusCode::non_finite_input);
  EXPECT_EQ(inverse_root_newton<T>(a, 2, 1e-6, {}, x).code(), StatusCode::non_finite_input);
  for (T v : x.values()) EXPECT_EQ(v, T(7));  // output untouched
  EXPECT_EQ(inverse_root_residual<T>(a, x, 2.0, 1e-6), std::numeric_limits<double>::infinity());
}

TEST(InverseRoot, NonFiniteInputIsReportedAndOutputUntouched) {
  check_rejects_non_finite<float>(std::numeric_limits<float>::quiet_NaN());
  check_rejects_non_finite<float>(std::numeric_limits<float>::infinity());
  check_rejects_non_finite<double>(-std::numeric_limits<double>::infinity());
}

TEST(InverseRoot, SingularWithoutEpsilonFailsCleanly) {
  Matrix<double> zero(3, 3);
  Matrix<double> x(3, 3);
  fill(x.view(), 7.0);
  EXPECT_FALSE(inverse_root_eigen<double>(zero, 2.0, 0.0, x).ok());
  EXPECT_FALSE(inverse_root_newton<double>(zero, 2, 0.0, {}, x).ok());
  for (double v : x.values()) EXPECT_EQ(v, 7.0);
}

TEST(InverseRoot, RejectsInvalidArguments) {
  Matrix<float> a = Matrix<float>::identity(3);
  Matrix<float> x(3, 3);
  Matrix<float> wrong(3, 2);
  EXPECT_EQ(inverse_root_eigen<float>(a, 0.0, 0.0, x).code(), StatusCode::invalid_argument);
  EXPECT_EQ(inverse_root_eigen<float>(a, 2.0, -1.0, x).code(), StatusCode::invalid_argument);
  EXPECT_EQ(inverse_root_eigen<float>(a, 2.0, 0.0, wrong).code(), StatusCode::invalid_argument);
  EXPECT_EQ(inverse_root_newton<float>(a, 0, 0.0, {}, x).code(), StatusCode::invalid_argument);
  EXPECT_EQ(inverse_root_newton<float>(wrong, 2, 0.0, {}, x).code(), StatusCode::invalid_argument);
  Matrix<float> empty;
  EXPECT_TRUE(inverse_root_eigen<float>(empty, 2.0, 0.0, empty).ok());
  EXPECT_TRUE(inverse_root_newton<float>(empty, 2, 0.0, {}, empty).ok());
}

TEST(InverseRootNewton, ReportsNoConvergenceAndLeavesOutputUntouched) {
  const index n = 16;
  const Matrix<double> a = testing::to_matrix<double>(
      testing::from_eigen(testing::random_orthogonal(n, 10), testing::log_spectrum(n, 1.0, 1e-6)));
  Matrix<double> x(n, n);
  fill(x.view(), 7.0);
  NewtonReport report;
  const Status status = inverse_root_newton<double>(a, 4, 0.0, {.max_iterations = 3, .tolerance = 1e-6}, x, report);
  EXPECT_EQ(status.code(), StatusCode::no_convergence);
  EXPECT_EQ(report.iterations, 3);
  EXPECT_GT(report.error, 1e-6);
  for (double v : x.values()) EXPECT_EQ(v, 7.0);
}

// An indefinite matrix drives coupled Newton away from I (an eigenvalue of M below 0 grows
// without bound): the method must say so and write nothing.
TEST(InverseRootNewton, IndefiniteInputFailsWithoutNonFiniteOutput) {
  const index n = 6;
  const Matrix<float> a = testing::to_matrix<float>(
      testing::from_eigen(testing::random_orthogonal(n, 12), {1.0, 0.8, 0.5, 0.3, 0.2, -0.4}));
  Matrix<float> x(n, n);
  fill(x.view(), 7.0F);
  EXPECT_FALSE(inverse_root_newton<float>(a, 2, 0.0, {}, x).ok());
  for (float v : x.values()) EXPECT_EQ(v, 7.0F);
}

// A float matrix whose eigenvalue (2c ≈ 6e38) exceeds float range: ssyevd's result overflows,
// the solve is retried in double, and the root — all of whose entries are representable — is
// returned. Exact answer: A = c·11ᵀ has eigenpairs (2c, [1,1]/√2) and (0, [1,−1]/√2); with
// ε = 1 and p = 4, X = ½[[1,−1],[−1,1]] + ½(2c+1)^(−1/4)[[1,1],[1,1]].
TEST(InverseRootEigen, FloatSolveOverflowIsRetriedInDouble) {
  const float c = 3.0e38F;
  Matrix<float> a(2, 2);
  fill(a.view(), c);
  Matrix<float> x(2, 2);
  const Status status = inverse_root_eigen<float>(a, 4.0, 1.0, x);
  ASSERT_TRUE(status.ok()) << status.message();
  const double small = 0.5 * std::pow(2.0 * static_cast<double>(c) + 1.0, -0.25);
  EXPECT_NEAR(x(0, 0), 0.5 + small, 1e-7);
  EXPECT_NEAR(x(0, 1), -0.5 + small, 1e-7);
  EXPECT_NEAR(x(1, 0), -0.5 + small, 1e-7);
  EXPECT_NEAR(x(1, 1), 0.5 + small, 1e-7);
}

// Outputs stay finite even where the float root is not representable (ε tiny, p = 1): either
// a finite root or a failure status with the output untouched.
TEST(InverseRootEigen, ExtremeEpsilonNeverYieldsNonFiniteOutput) {
  const index n = 8;
  const Matrix<float> a = testing::to_matrix<float>(
      testing::from_eigen(testing::random_orthogonal(n, 13), {1, 1, 1, 1, 0, 0, 0, 0}));
  for (double eps : {1e-30, 1e-45, 0.0}) {
    Matrix<float> x(n, n);
    fill(x.view(), 7.0F);
    const Status status = inverse_root_eigen<float>(a, 1.0, eps, x);
    EXPECT_TRUE(finite(x)) << eps << " " << status.message();
  }
}

}  // namespace
}  // namespace asteria::linalg
