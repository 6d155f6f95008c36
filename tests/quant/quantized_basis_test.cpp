// A quantized eigenbasis made orthogonal again: Björck's iteration in float agrees with the same
// iteration in double, restores orthogonality to float precision after 8- and 4-bit codes, and
// stays close to the basis that was stored.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/orthogonality.hpp"
#include "core/quant/quantized_basis.hpp"

namespace asteria::quant {
namespace {

using linalg::index;
using linalg::Matrix;

// A random orthogonal n x n matrix (Q of a Gaussian matrix's QR).
Matrix<float> random_orthogonal(index n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Matrix<float> a(n, n), q(n, n);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) a(i, j) = normal(rng);
  EXPECT_TRUE(linalg::orthonormalize<float>(a.view(), linalg::Orthogonalization::householder, q.view()).ok());
  return q;
}

double relative_difference(linalg::ConstMatrixView<float> a, linalg::ConstMatrixView<float> b) {
  double diff = 0.0, norm = 0.0;
  for (index i = 0; i < a.rows(); ++i)
    for (index j = 0; j < a.cols(); ++j) {
      diff += std::pow(double(a(i, j)) - b(i, j), 2);
      norm += std::pow(double(b(i, j)), 2);
    }
  return std::sqrt(diff / norm);
}

TEST(QuantizedBasis, BjorckInFloatFollowsTheDoubleIteration) {
  const Matrix<float> q = random_orthogonal(96, 3);
  Matrix<float> f(q.view());
  Matrix<double> d(96, 96);
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> noise(-0.005, 0.005);
  for (index i = 0; i < 96; ++i)
    for (index j = 0; j < 96; ++j) {
      f(i, j) = static_cast<float>(q(i, j) + noise(rng));
      d(i, j) = f(i, j);
    }
  const double float_error = bjorck_orthonormalize<float>(f.view());
  const double double_error = bjorck_orthonormalize<double>(d.view());
  EXPECT_LT(double_error, orthogonality_tolerance<double>(96));
  EXPECT_LT(float_error, orthogonality_tolerance<float>(96));
  double worst = 0.0;
  for (index i = 0; i < 96; ++i)
    for (index j = 0; j < 96; ++j) worst = std::max(worst, std::abs(f(i, j) - d(i, j)));
  EXPECT_LT(worst, 1e-5) << "float's Björck is the double iteration's up to float rounding";
}

TEST(QuantizedBasis, DecodedBasesAreOrthogonalAndNearTheStoredOne) {
  for (const index n : {index{64}, index{512}}) {
    const Matrix<float> q = random_orthogonal(n, 5);
    for (const CodeMap map : {CodeMap::linear8, CodeMap::linear4}) {
      SCOPED_TRACE(std::string(to_string(map)) + ", n = " + std::to_string(n));
      QuantizedMatrix stored;
      ASSERT_TRUE(quantize_matrix(q.view(), map, 64, stored).ok());
      EXPECT_EQ(stored.bytes(), quantized_bytes(map, static_cast<std::size_t>(n * n), 64));
      Matrix<float> raw(n, n), fixed(n, n);
      dequantize_matrix(stored, raw.view());
      const double raw_error = linalg::orthogonality_error<float>(raw.view());
      const double fixed_error = dequantize_orthogonal(stored, fixed.view());
      EXPECT_LT(fixed_error, orthogonality_tolerance<float>(n)) << "orthogonal to float precision (raw: " << raw_error
                                                               << ")";
      EXPECT_LT(fixed_error, raw_error / 100.0);
      // Near the stored basis: within the codes' error (8-bit: ~0.5%, 4-bit: ~8% of the norm).
      EXPECT_LT(relative_difference(fixed.view(), q.view()), map == CodeMap::linear8 ? 0.01 : 0.12);
    }
  }
}

}  // namespace
}  // namespace asteria::quant
