#include "core/linalg/blas.hpp"

#include <cblas.h>

#include <cmath>
#include <stdexcept>

namespace asteria::linalg {
namespace {

CBLAS_TRANSPOSE to_cblas(Op op) { return op == Op::none ? CblasNoTrans : CblasTrans; }
index rows_of(ConstMatrixView<float> a, Op op) { return op == Op::none ? a.rows() : a.cols(); }
index rows_of(ConstMatrixView<double> a, Op op) { return op == Op::none ? a.rows() : a.cols(); }
template <class V>
index cols_of(V a, Op op) { return op == Op::none ? a.cols() : a.rows(); }

template <Real T>
void check_gemm_shapes(ConstMatrixView<T> a, Op op_a, ConstMatrixView<T> b, Op op_b, MatrixView<T> c) {
  if (rows_of(a, op_a) != c.rows() || cols_of(b, op_b) != c.cols() || cols_of(a, op_a) != rows_of(b, op_b))
    throw std::invalid_argument("gemm: inconsistent shapes");
}

}  // namespace

template <>
void gemm<float>(float alpha, ConstMatrixView<float> a, Op op_a, ConstMatrixView<float> b, Op op_b, float beta,
                 MatrixView<float> c) {
  check_gemm_shapes(a, op_a, b, op_b, c);
  if (c.empty()) return;
  const auto k = static_cast<int>(cols_of(a, op_a));
  cblas_sgemm(CblasRowMajor, to_cblas(op_a), to_cblas(op_b), static_cast<int>(c.rows()), static_cast<int>(c.cols()),
              k, alpha, a.data(), static_cast<int>(a.stride()), b.data(), static_cast<int>(b.stride()), beta,
              c.data(), static_cast<int>(c.stride()));
}

template <>
void gemm<double>(double alpha, ConstMatrixView<double> a, Op op_a, ConstMatrixView<double> b, Op op_b,
                  double beta, MatrixView<double> c) {
  check_gemm_shapes(a, op_a, b, op_b, c);
  if (c.empty()) return;
  const auto k = static_cast<int>(cols_of(a, op_a));
  cblas_dgemm(CblasRowMajor, to_cblas(op_a), to_cblas(op_b), static_cast<int>(c.rows()), static_cast<int>(c.cols()),
              k, alpha, a.data(), static_cast<int>(a.stride()), b.data(), static_cast<int>(b.stride()), beta,
              c.data(), static_cast<int>(c.stride()));
}

template <Real T>
void symmetrize_from_upper(MatrixView<T> c) {
  for (index i = 1; i < c.rows(); ++i)
    for (index j = 0; j < i; ++j) c(i, j) = c(j, i);
}

template <>
void syrk<float>(float alpha, ConstMatrixView<float> a, Op op, float beta, MatrixView<float> c) {
  const index n = op == Op::none ? a.rows() : a.cols();
  const index k = op == Op::none ? a.cols() : a.rows();
  if (c.rows() != n || c.cols() != n) throw std::invalid_argument("syrk: inconsistent shapes");
  if (n == 0) return;
  cblas_ssyrk(CblasRowMajor, CblasUpper, to_cblas(op), static_cast<int>(n), static_cast<int>(k), alpha, a.data(),
              static_cast<int>(a.stride()), beta, c.data(), static_cast<int>(c.stride()));
  symmetrize_from_upper(c);
}

template <>
void syrk<double>(double alpha, ConstMatrixView<double> a, Op op, double beta, MatrixView<double> c) {
  const index n = op == Op::none ? a.rows() : a.cols();
  const index k = op == Op::none ? a.cols() : a.rows();
  if (c.rows() != n || c.cols() != n) throw std::invalid_argument("syrk: inconsistent shapes");
  if (n == 0) return;
  cblas_dsyrk(CblasRowMajor, CblasUpper, to_cblas(op), static_cast<int>(n), static_cast<int>(k), alpha, a.data(),
              static_cast<int>(a.stride()), beta, c.data(), static_cast<int>(c.stride()));
  symmetrize_from_upper(c);
}

template <Real T>
double frobenius_norm(ConstMatrixView<T> a) {
  double sum = 0.0;
  for (index i = 0; i < a.rows(); ++i)
    for (T x : a.row(i)) sum += static_cast<double>(x) * static_cast<double>(x);
  return std::sqrt(sum);
}

template <Real T>
bool all_finite(ConstMatrixView<T> a) {
  for (index i = 0; i < a.rows(); ++i)
    for (T x : a.row(i))
      if (!std::isfinite(x)) return false;
  return true;
}

template void symmetrize_from_upper<float>(MatrixView<float>);
template void symmetrize_from_upper<double>(MatrixView<double>);
template double frobenius_norm<float>(ConstMatrixView<float>);
template double frobenius_norm<double>(ConstMatrixView<double>);
template bool all_finite<float>(ConstMatrixView<float>);
template bool all_finite<double>(ConstMatrixView<double>);

}  // namespace asteria::linalg
