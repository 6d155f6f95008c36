#include "core/problems/matrix_regression.hpp"

#include <cmath>
#include <numbers>
#include <random>
#include <string>

#include "core/common/error.hpp"
#include "core/linalg/blas.hpp"

namespace asteria::problems {
namespace {

using linalg::Matrix;
using linalg::Op;

// Standard normal samples from mt19937_64 (fully specified by the C++ standard) through
// Box-Muller, so the problem is the same with every standard library.
class NormalSource {
 public:
  explicit NormalSource(std::uint64_t seed) : engine_(seed) {}
  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = uniform_open();
    const double u2 = uniform_open();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    spare_ = radius * std::sin(2.0 * std::numbers::pi * u2);
    has_spare_ = true;
    return radius * std::cos(2.0 * std::numbers::pi * u2);
  }
  Matrix<double> matrix(index rows, index cols, double scale) {
    Matrix<double> m(rows, cols);
    for (double& v : m.values()) v = scale * next();
    return m;
  }

 private:
  double uniform_open() {  // in (0, 1)
    return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
  }
  std::mt19937_64 engine_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// rows × cols (rows >= cols) with orthonormal columns: Gram-Schmidt (applied twice, for
// orthogonality to working precision) on a Gaussian matrix.
Matrix<double> random_orthonormal(NormalSource& normal, index rows, index cols) {
  Matrix<double> q = normal.matrix(rows, cols, 1.0);
  for (index j = 0; j < cols; ++j) {
    for (int pass = 0; pass < 2; ++pass)
      for (index k = 0; k < j; ++k) {
        double dot = 0.0;
        for (index i = 0; i < rows; ++i) dot += q(i, k) * q(i, j);
        for (index i = 0; i < rows; ++i) q(i, j) -= dot * q(i, k);
      }
    double norm = 0.0;
    for (index i = 0; i < rows; ++i) norm += q(i, j) * q(i, j);
    norm = std::sqrt(norm);
    for (index i = 0; i < rows; ++i) q(i, j) /= norm;
  }
  return q;
}

// U diag(s) Vᵀ · scale with s_k = κ^(−k/(d−1)), d = number of columns of U and V.
Matrix<double> with_spectrum(const Matrix<double>& u, const Matrix<double>& v, double condition, double scale) {
  const index d = u.cols();
  Matrix<double> us(u.rows(), d);
  for (index k = 0; k < d; ++k) {
    const double s = d == 1 ? 1.0 : std::pow(condition, -static_cast<double>(k) / static_cast<double>(d - 1));
    for (index i = 0; i < u.rows(); ++i) us(i, k) = scale * s * u(i, k);
  }
  Matrix<double> out(u.rows(), v.rows());
  linalg::gemm<double>(1.0, us, Op::none, v, Op::transpose, 0.0, out);
  return out;
}

void validate(const MatrixRegressionSpec& s) {
  const std::string source = "comparison problem";
  auto require = [&](bool ok, const char* field, const std::string& expectation) {
    if (!ok) throw InputError(source, field, expectation);
  };
  require(s.rows >= 1 && s.cols >= 1, "shape", "expected rows >= 1 and cols >= 1");
  require(s.samples >= s.rows, "samples", "expected samples >= rows (" + std::to_string(s.rows) + ")");
  require(s.outputs >= s.cols, "outputs", "expected outputs >= cols (" + std::to_string(s.cols) + ")");
  require(std::isfinite(s.condition_x) && s.condition_x >= 1.0, "condition_x", "expected a finite value >= 1");
  require(std::isfinite(s.condition_z) && s.condition_z >= 1.0, "condition_z", "expected a finite value >= 1");
  require(std::isfinite(s.solution_scale) && s.solution_scale > 0.0, "solution_scale", "expected a finite value > 0");
  require(std::isfinite(s.noise_scale) && s.noise_scale >= 0.0, "noise_scale", "expected a finite value >= 0");
}

}  // namespace

MatrixRegression::MatrixRegression(const MatrixRegressionSpec& spec) : spec_(spec) {
  validate(spec_);
  const index m = spec_.rows, n = spec_.cols, big_n = spec_.samples, p = spec_.outputs;
  NormalSource normal(spec_.seed);
  const Matrix<double> ux = random_orthonormal(normal, big_n, m);
  const Matrix<double> vx = random_orthonormal(normal, m, m);
  const Matrix<double> uz = random_orthonormal(normal, n, n);
  const Matrix<double> vz = random_orthonormal(normal, p, n);
  x_ = with_spectrum(ux, vx, spec_.condition_x, std::sqrt(static_cast<double>(big_n)));
  z_ = with_spectrum(uz, vz, spec_.condition_z, 1.0);
  solution_ = normal.matrix(m, n, spec_.solution_scale);

  // Noise orthogonal to range(X): E = (I − U_x U_xᵀ) E₀, so Xᵀ E = 0 and W* is optimal.
  Matrix<double> noise = normal.matrix(big_n, p, spec_.noise_scale);
  Matrix<double> coefficients(m, p);
  linalg::gemm<double>(1.0, ux, Op::transpose, noise, Op::none, 0.0, coefficients);
  linalg::gemm<double>(-1.0, ux, Op::none, coefficients, Op::none, 1.0, noise);

  Matrix<double> xw(big_n, n);
  linalg::gemm<double>(1.0, x_, Op::none, solution_, Op::none, 0.0, xw);
  y_ = noise;
  linalg::gemm<double>(1.0, xw, Op::none, z_, Op::none, 1.0, y_);
  const double noise_norm = linalg::frobenius_norm<double>(noise);
  optimal_loss_ = 0.5 * noise_norm * noise_norm / static_cast<double>(big_n);
}

void MatrixRegression::residual(linalg::ConstMatrixView<double> w, Matrix<double>& xw, Matrix<double>& r) const {
  if (w.rows() != spec_.rows || w.cols() != spec_.cols)
    throw InputError("comparison problem", "weights",
                     "expected " + std::to_string(spec_.rows) + "x" + std::to_string(spec_.cols) + ", found " +
                         std::to_string(w.rows()) + "x" + std::to_string(w.cols()));
  xw = Matrix<double>(spec_.samples, spec_.cols);
  linalg::gemm<double>(1.0, x_, Op::none, w, Op::none, 0.0, xw);
  r = y_;
  linalg::gemm<double>(1.0, xw, Op::none, z_, Op::none, -1.0, r);
}

double MatrixRegression::loss(linalg::ConstMatrixView<double> w) const {
  Matrix<double> xw, r;
  residual(w, xw, r);
  const double norm = linalg::frobenius_norm<double>(r);
  return 0.5 * norm * norm / static_cast<double>(spec_.samples);
}

double MatrixRegression::loss_and_gradient(linalg::ConstMatrixView<double> w,
                                           linalg::MatrixView<double> gradient) const {
  if (gradient.rows() != spec_.rows || gradient.cols() != spec_.cols)
    throw InputError("comparison problem", "gradient", "expected a view of the shape of the weights");
  Matrix<double> xw, r;
  residual(w, xw, r);
  const double inv_n = 1.0 / static_cast<double>(spec_.samples);
  Matrix<double> xt_r(spec_.rows, spec_.outputs);
  linalg::gemm<double>(1.0, x_, Op::transpose, r, Op::none, 0.0, xt_r);
  linalg::gemm<double>(inv_n, xt_r, Op::none, z_, Op::transpose, 0.0, gradient);
  const double norm = linalg::frobenius_norm<double>(r);
  return 0.5 * norm * norm * inv_n;
}

}  // namespace asteria::problems
