#pragma once
// Internal building blocks shared by the eigen, inverse-root and eigenbasis kernels: typed
// LAPACK/BLAS calls on row-major storage, cache-blocked transposes, and a symmetric
// eigensolver that retries float problems in double. Not part of the public API.
//
// Layout trick used throughout: LAPACK is column-major, so a row-major m x n array with
// stride ld is, to LAPACK, the n x m matrix aᵀ with leading dimension ld. A symmetric matrix
// therefore needs no transposition on the way in, and eigenvectors come back as the rows of
// the row-major array (the array holds Qᵀ).
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::linalg::detail {

// --- LAPACK (column-major, as described above); return LAPACK's info. ---
int syevd(index n, float* a, index lda, float* w);
int syevd(index n, double* a, index lda, double* w);
// Cholesky of the symmetric matrix whose row-major upper triangle is given: on success the
// upper triangle holds R with G = Rᵀ R (the strict lower triangle is left untouched).
int cholesky_upper(index n, float* g, index ldg);
int cholesky_upper(index n, double* g, index ldg);
// Thin QR a = Q R by Householder reflections (geqrf + orgqr) of the row-major m x n matrix
// q (m >= n), replaced by Q in place. With fix_signs, column k is negated where R_kk < 0 so
// that diag(R) >= 0. (The row-major array is transposed into a column-major buffer first:
// LQ of the untransposed storage, gelqf + orglq, avoids the copies but runs ~1.5x slower.)
template <Real T>
Status householder_qr_in_place(MatrixView<T> q, bool fix_signs);

// --- BLAS on row-major views. ---
// Upper triangle of c = alpha * aᵀ a (c is a.cols() x a.cols()); the strict lower triangle is
// not written.
template <Real T>
void gram_upper(ConstMatrixView<T> a, MatrixView<T> c);
// Both triangles of c = aᵀ a, mirrored with a cache-blocked copy.
template <Real T>
void gram_full(ConstMatrixView<T> a, MatrixView<T> c);
// b <- b r⁻¹ with r upper triangular (row-major upper triangle of r), in place.
template <Real T>
void solve_right_upper(ConstMatrixView<T> r, MatrixView<T> b);

// --- LU-preconditioned Cholesky QR. ---
// Row-pivoted LU (getrf) of the m x n matrix A (m >= n) held column-major in `columns`, the
// row-major n x m view whose row j is column j of A: Π A = L U, L unit lower trapezoidal
// (strictly below the diagonal), U upper triangular (on and above it). `rows` (size m)
// receives Π: row k of L U is row rows[k] of A. Returns LAPACK's info (> 0 flags an exactly
// zero pivot; the factorization is complete all the same).
template <Real T>
int lu_row_pivoted(MatrixView<T> columns, std::span<index> rows);
// LᵀL (n x n) for the L of an lu_row_pivoted result, by lauum (n³/3 flops: half a SYRK) plus
// a SYRK for rows below n, written over columns' leading n x n block: its row-major upper
// triangle receives LᵀL (U's diagonal and L's leading triangle are overwritten).
template <Real T>
void unit_lower_gram(MatrixView<T> columns);
// y = a x for symmetric a given by its row-major upper triangle.
template <Real T>
void symmetric_upper_matvec(ConstMatrixView<T> a, std::span<const T> x, std::span<T> y);
// Eigenvalues of the symmetric tridiagonal matrix (diagonal, off_diagonal), ascending, in
// `diagonal` (sterf); `off_diagonal` (size n - 1) is destroyed. False when LAPACK fails.
bool tridiagonal_eigenvalues(std::span<double> diagonal, std::span<double> off_diagonal);

// Copies the upper triangle of a square matrix into its lower triangle, tile by tile.
template <Real T>
void mirror_upper(MatrixView<T> c);

// c <- (c + cᵀ)/2 for a square matrix, tile by tile.
template <Real T>
void symmetrize(MatrixView<T> c);

// to(i, j) = from(j, i), converting element type; tile by tile so both sides stay in cache.
template <class From, class To>
void transpose_into(ConstMatrixView<From> from, MatrixView<To> to) {
  constexpr index tile = 32;
  for (index i0 = 0; i0 < to.rows(); i0 += tile)
    for (index j0 = 0; j0 < to.cols(); j0 += tile) {
      const index i1 = std::min(i0 + tile, to.rows());
      const index j1 = std::min(j0 + tile, to.cols());
      for (index i = i0; i < i1; ++i)
        for (index j = j0; j < j1; ++j) to(i, j) = static_cast<To>(from(j, i));
    }
}

// --- Symmetric eigensolver. ---
// Eigenvalues ascending in `values`; `vectors` (row-major n x n) holds Qᵀ: row k is the unit
// eigenvector of values[k].
template <Real S>
struct SymmetricEigen {
  std::vector<S> values;
  std::vector<S> storage;
  index n = 0;

  MatrixView<S> vectors() noexcept { return {storage.data(), n, n}; }
  ConstMatrixView<S> vectors() const noexcept { return {storage.data(), n, n}; }
};

// Decomposes a + shift·I in precision S (a symmetric, finite; both triangles hold it).
// Fails when LAPACK does not converge or the output is not finite.
template <Real S, Real T>
Status solve_symmetric(ConstMatrixView<T> a, double shift, SymmetricEigen<S>& result);

// Decomposes a + shift·I in T and, for float input whose solve fails, again in double; calls
// finish(SymmetricEigen<S>&) with S the precision that succeeded and returns its Status.
template <Real T, class Finish>
Status solve_symmetric_with_retry(ConstMatrixView<T> a, double shift, Finish&& finish) {
  Status first;
  {
    SymmetricEigen<T> eig;
    first = solve_symmetric<T>(a, shift, eig);
    if (first.ok()) return finish(eig);
  }
  if constexpr (std::is_same_v<T, float>) {
    SymmetricEigen<double> eig;
    if (Status second = solve_symmetric<double>(a, shift, eig); !second.ok()) return second;
    return finish(eig);
  }
  return first;
}

// True when every element of the span is finite.
template <Real T>
bool all_finite(std::span<const T> values) {
  for (T x : values)
    if (!std::isfinite(x)) return false;
  return true;
}

// True when the memory of two views overlaps (conservative: compares address ranges).
template <class A, class B>
bool overlaps(MatrixView<A> a, MatrixView<B> b) {
  if (a.empty() || b.empty()) return false;
  const auto* a0 = reinterpret_cast<const std::byte*>(a.data());
  const auto* a1 = reinterpret_cast<const std::byte*>(a.data() + (a.rows() - 1) * a.stride() + a.cols());
  const auto* b0 = reinterpret_cast<const std::byte*>(b.data());
  const auto* b1 = reinterpret_cast<const std::byte*>(b.data() + (b.rows() - 1) * b.stride() + b.cols());
  const std::less<const std::byte*> before;
  return before(a0, b1) && before(b0, a1);
}

}  // namespace asteria::linalg::detail
