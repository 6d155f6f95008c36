#pragma once
// Thin, typed wrappers over CBLAS (OpenBLAS) for row-major views.
#include "core/linalg/matrix.hpp"

namespace asteria::linalg {

enum class Op { none, transpose };

// c = alpha * op(a) * op(b) + beta * c
template <Real T>
void gemm(T alpha, ConstMatrixView<T> a, Op op_a, ConstMatrixView<T> b, Op op_b, T beta, MatrixView<T> c);

// Symmetric rank-k update with both triangles written:
//   op = none:      c = alpha * a * aᵀ + beta * c   (c is a.rows() x a.rows())
//   op = transpose: c = alpha * aᵀ * a + beta * c   (c is a.cols() x a.cols())
template <Real T>
void syrk(T alpha, ConstMatrixView<T> a, Op op, T beta, MatrixView<T> c);

// Mirrors the upper triangle of a square matrix into the lower one.
template <Real T>
void symmetrize_from_upper(MatrixView<T> c);

// Frobenius norm (accumulated in double).
template <Real T>
double frobenius_norm(ConstMatrixView<T> a);

// True when every element is finite.
template <Real T>
bool all_finite(ConstMatrixView<T> a);

}  // namespace asteria::linalg
