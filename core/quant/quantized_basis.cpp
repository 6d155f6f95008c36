#include "core/quant/quantized_basis.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/linalg/blas.hpp"
#include "core/linalg/orthogonality.hpp"

namespace asteria::quant {

using linalg::index;

Status quantize_matrix(linalg::ConstMatrixView<float> m, CodeMap map, std::size_t block, QuantizedMatrix& out) {
  std::vector<float> values;
  values.reserve(static_cast<std::size_t>(m.size()));
  for (index i = 0; i < m.rows(); ++i)
    for (const float v : m.row(i)) values.push_back(v);
  out.rows = m.rows();
  out.cols = m.cols();
  return quantize(values, map, block, out.values);
}

void dequantize_matrix(const QuantizedMatrix& q, linalg::MatrixView<float> out) {
  if (out.rows() != q.rows || out.cols() != q.cols)
    throw std::invalid_argument("dequantize_matrix: the output has another shape");
  std::vector<float> values(q.values.count);
  dequantize(q.values, values);
  for (index i = 0; i < q.rows; ++i)
    for (index j = 0; j < q.cols; ++j) out(i, j) = values[static_cast<std::size_t>(i * q.cols + j)];
}

template <linalg::Real T>
double orthogonality_tolerance(index n) {
  return 64.0 * std::numeric_limits<T>::epsilon() * std::sqrt(static_cast<double>(n));
}

template <linalg::Real T>
double bjorck_orthonormalize(linalg::MatrixView<T> q, int max_iterations) {
  const index n = q.cols();
  const double tolerance = orthogonality_tolerance<T>(n);
  linalg::Matrix<T> gram(n, n), next(q.rows(), n);
  for (int k = 0; k < max_iterations; ++k) {
    linalg::gemm<T>(T(1), q, linalg::Op::transpose, q, linalg::Op::none, T(0), gram.view());
    double off = 0.0;  // ‖QᵀQ − I‖_F² from the product the step needs anyway
    for (index i = 0; i < n; ++i)
      for (index j = 0; j < n; ++j) off += std::pow(double(gram(i, j)) - (i == j ? 1.0 : 0.0), 2);
    if (std::sqrt(off) <= tolerance) break;
    // Q ← Q (3I − QᵀQ) / 2
    for (index i = 0; i < n; ++i)
      for (index j = 0; j < n; ++j) gram(i, j) = (i == j ? T(1.5) : T(0)) - T(0.5) * gram(i, j);
    linalg::gemm<T>(T(1), q, linalg::Op::none, gram.view(), linalg::Op::none, T(0), next.view());
    for (index i = 0; i < q.rows(); ++i)
      for (index j = 0; j < n; ++j) q(i, j) = next(i, j);
  }
  return linalg::orthogonality_error<T>(q);
}

double dequantize_orthogonal(const QuantizedMatrix& q, linalg::MatrixView<float> out, int max_iterations) {
  dequantize_matrix(q, out);
  return bjorck_orthonormalize<float>(out, max_iterations);
}

template double orthogonality_tolerance<float>(index);
template double orthogonality_tolerance<double>(index);
template double bjorck_orthonormalize<float>(linalg::MatrixView<float>, int);
template double bjorck_orthonormalize<double>(linalg::MatrixView<double>, int);

}  // namespace asteria::quant
