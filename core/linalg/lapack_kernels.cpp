#include "core/linalg/lapack_kernels.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <string>

namespace asteria::linalg::detail {
namespace {

lapack_int as_lapack(index v) { return static_cast<lapack_int>(v); }
blasint as_blas(index v) { return static_cast<blasint>(v); }

}  // namespace

int syevd(index n, float* a, index lda, float* w) {
  return LAPACKE_ssyevd(LAPACK_COL_MAJOR, 'V', 'L', as_lapack(n), a, as_lapack(lda), w);
}
int syevd(index n, double* a, index lda, double* w) {
  return LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', as_lapack(n), a, as_lapack(lda), w);
}

// The row-major upper triangle is LAPACK's column-major lower triangle: factor it as L Lᵀ,
// and L's column-major lower triangle reads row-major as R = Lᵀ.
int cholesky_upper(index n, float* g, index ldg) {
  return LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', as_lapack(n), g, as_lapack(ldg));
}
int cholesky_upper(index n, double* g, index ldg) {
  return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', as_lapack(n), g, as_lapack(ldg));
}

int geqrf(index m, index n, float* a, float* tau) {
  return LAPACKE_sgeqrf(LAPACK_COL_MAJOR, as_lapack(m), as_lapack(n), a, as_lapack(m), tau);
}
int geqrf(index m, index n, double* a, double* tau) {
  return LAPACKE_dgeqrf(LAPACK_COL_MAJOR, as_lapack(m), as_lapack(n), a, as_lapack(m), tau);
}
int orgqr(index m, index n, float* a, const float* tau) {
  return LAPACKE_sorgqr(LAPACK_COL_MAJOR, as_lapack(m), as_lapack(n), as_lapack(n), a, as_lapack(m), tau);
}
int orgqr(index m, index n, double* a, const double* tau) {
  return LAPACKE_dorgqr(LAPACK_COL_MAJOR, as_lapack(m), as_lapack(n), as_lapack(n), a, as_lapack(m), tau);
}

template <Real T>
Status householder_qr_in_place(MatrixView<T> q, bool fix_signs) {
  const index m = q.rows();
  const index n = q.cols();
  if (n == 0) return Status::success();
  // Column-major m x n buffer = row-major n x m view `columns` (row j is column j of q).
  std::vector<T> buffer(static_cast<std::size_t>(m * n));
  MatrixView<T> columns(buffer.data(), n, m);
  transpose_into(ConstMatrixView<T>(q), columns);
  std::vector<T> tau(static_cast<std::size_t>(n));
  if (int info = geqrf(m, n, buffer.data(), tau.data()); info != 0)
    return {StatusCode::invalid_argument, "householder QR: geqrf info " + std::to_string(info)};
  std::vector<T> sign(static_cast<std::size_t>(n), T(1));
  if (fix_signs)
    for (index k = 0; k < n; ++k) sign[static_cast<std::size_t>(k)] = columns(k, k) < T(0) ? T(-1) : T(1);
  if (int info = orgqr(m, n, buffer.data(), tau.data()); info != 0)
    return {StatusCode::invalid_argument, "householder QR: orgqr info " + std::to_string(info)};
  for (index k = 0; k < n; ++k)
    if (sign[static_cast<std::size_t>(k)] < T(0))
      for (T& v : columns.row(k)) v = -v;
  transpose_into(ConstMatrixView<T>(columns), q);
  return Status::success();
}

template <>
void gram_upper<float>(ConstMatrixView<float> a, MatrixView<float> c) {
  if (c.empty()) return;
  cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, as_blas(a.cols()), as_blas(a.rows()), 1.0F, a.data(),
              as_blas(a.stride()), 0.0F, c.data(), as_blas(c.stride()));
}
template <>
void gram_upper<double>(ConstMatrixView<double> a, MatrixView<double> c) {
  if (c.empty()) return;
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, as_blas(a.cols()), as_blas(a.rows()), 1.0, a.data(),
              as_blas(a.stride()), 0.0, c.data(), as_blas(c.stride()));
}

template <Real T>
void gram_full(ConstMatrixView<T> a, MatrixView<T> c) {
  gram_upper(a, c);
  mirror_upper(c);
}

template <>
void solve_right_upper<float>(ConstMatrixView<float> r, MatrixView<float> b) {
  if (b.empty()) return;
  cblas_strsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, as_blas(b.rows()),
              as_blas(b.cols()), 1.0F, r.data(), as_blas(r.stride()), b.data(), as_blas(b.stride()));
}
template <>
void solve_right_upper<double>(ConstMatrixView<double> r, MatrixView<double> b) {
  if (b.empty()) return;
  cblas_dtrsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, as_blas(b.rows()),
              as_blas(b.cols()), 1.0, r.data(), as_blas(r.stride()), b.data(), as_blas(b.stride()));
}

template <Real T>
void mirror_upper(MatrixView<T> c) {
  constexpr index tile = 32;
  const index n = c.rows();
  for (index i0 = 0; i0 < n; i0 += tile)
    for (index j0 = 0; j0 <= i0; j0 += tile) {
      const index i1 = std::min(i0 + tile, n);
      const index j1 = std::min(j0 + tile, n);
      for (index i = i0; i < i1; ++i)
        for (index j = j0; j < std::min(j1, i); ++j) c(i, j) = c(j, i);
    }
}

template <Real T>
void symmetrize(MatrixView<T> c) {
  constexpr index tile = 32;
  const index n = c.rows();
  for (index i0 = 0; i0 < n; i0 += tile)
    for (index j0 = 0; j0 <= i0; j0 += tile) {
      const index i1 = std::min(i0 + tile, n);
      const index j1 = std::min(j0 + tile, n);
      for (index i = i0; i < i1; ++i)
        for (index j = j0; j < std::min(j1, i); ++j) {
          const T mean = (c(i, j) + c(j, i)) / T(2);
          c(i, j) = mean;
          c(j, i) = mean;
        }
    }
}

namespace {

int getrf(index m, index n, float* a, index lda, lapack_int* pivots) {
  return LAPACKE_sgetrf(LAPACK_COL_MAJOR, as_lapack(m), as_lapack(n), a, as_lapack(lda), pivots);
}
int getrf(index m, index n, double* a, index lda, lapack_int* pivots) {
  return LAPACKE_dgetrf(LAPACK_COL_MAJOR, as_lapack(m), as_lapack(n), a, as_lapack(lda), pivots);
}
int lauum_lower(index n, float* a, index lda) {
  return LAPACKE_slauum(LAPACK_COL_MAJOR, 'L', as_lapack(n), a, as_lapack(lda));
}
int lauum_lower(index n, double* a, index lda) {
  return LAPACKE_dlauum(LAPACK_COL_MAJOR, 'L', as_lapack(n), a, as_lapack(lda));
}
void syrk_lower_trans(index n, index k, const float* a, index lda, float* c, index ldc) {
  cblas_ssyrk(CblasColMajor, CblasLower, CblasTrans, as_blas(n), as_blas(k), 1.0F, a, as_blas(lda), 0.0F, c,
              as_blas(ldc));
}
void syrk_lower_trans(index n, index k, const double* a, index lda, double* c, index ldc) {
  cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, as_blas(n), as_blas(k), 1.0, a, as_blas(lda), 0.0, c,
              as_blas(ldc));
}

}  // namespace

template <Real T>
int lu_row_pivoted(MatrixView<T> columns, std::span<index> rows) {
  const index n = columns.rows();
  const index m = columns.cols();
  std::vector<lapack_int> pivots(static_cast<std::size_t>(std::max<index>(n, 1)));
  const int info = n == 0 ? 0 : getrf(m, n, columns.data(), columns.stride(), pivots.data());
  for (index i = 0; i < m; ++i) rows[static_cast<std::size_t>(i)] = i;
  if (info < 0) return info;
  // getrf swapped row k with row pivots[k] - 1, k = 0, 1, ... in turn.
  for (index k = 0; k < n; ++k) {
    const auto swapped = static_cast<std::size_t>(pivots[static_cast<std::size_t>(k)] - 1);
    std::swap(rows[static_cast<std::size_t>(k)], rows[swapped]);
  }
  return info;
}

template <Real T>
void unit_lower_gram(MatrixView<T> columns) {
  const index n = columns.rows();
  const index m = columns.cols();
  if (n == 0) return;
  // Column-major A(i, j) is columns(j, i): the lower triangle of LᵀL that lauum writes is the
  // row-major upper triangle of columns' leading n x n block.
  for (index k = 0; k < n; ++k) columns(k, k) = T(1);
  std::vector<T> below;
  if (m > n) {  // L₂ᵀL₂ for the rows under the triangle, into a separate buffer (no aliasing)
    below.resize(static_cast<std::size_t>(n * n));
    syrk_lower_trans(n, m - n, columns.data() + n, columns.stride(), below.data(), n);
  }
  lauum_lower(n, columns.data(), columns.stride());
  if (m > n)
    for (index i = 0; i < n; ++i)
      for (index j = i; j < n; ++j) columns(i, j) += below[static_cast<std::size_t>(i * n + j)];
}

template <>
void symmetric_upper_matvec<float>(ConstMatrixView<float> a, std::span<const float> x, std::span<float> y) {
  cblas_ssymv(CblasRowMajor, CblasUpper, as_blas(a.rows()), 1.0F, a.data(), as_blas(a.stride()), x.data(), 1, 0.0F,
              y.data(), 1);
}
template <>
void symmetric_upper_matvec<double>(ConstMatrixView<double> a, std::span<const double> x, std::span<double> y) {
  cblas_dsymv(CblasRowMajor, CblasUpper, as_blas(a.rows()), 1.0, a.data(), as_blas(a.stride()), x.data(), 1, 0.0,
              y.data(), 1);
}

bool tridiagonal_eigenvalues(std::span<double> diagonal, std::span<double> off_diagonal) {
  if (diagonal.empty()) return true;
  return LAPACKE_dsterf(as_lapack(static_cast<index>(diagonal.size())), diagonal.data(), off_diagonal.data()) == 0;
}

template <Real S, Real T>
Status solve_symmetric(ConstMatrixView<T> a, double shift, SymmetricEigen<S>& result) {
  const index n = a.rows();
  result.n = n;
  result.values.assign(static_cast<std::size_t>(n), S(0));
  result.storage.resize(static_cast<std::size_t>(n * n));
  MatrixView<S> work = result.vectors();
  // Only the lower column-major (= upper row-major) triangle is read by LAPACK.
  for (index i = 0; i < n; ++i) {
    auto from = a.row(i);
    auto to = work.row(i);
    for (index j = i; j < n; ++j) to[static_cast<std::size_t>(j)] = static_cast<S>(from[static_cast<std::size_t>(j)]);
    to[static_cast<std::size_t>(i)] = static_cast<S>(static_cast<double>(from[static_cast<std::size_t>(i)]) + shift);
  }
  const int info = syevd(n, result.storage.data(), n, result.values.data());
  if (info > 0) return {StatusCode::no_convergence, "syevd failed to converge (info " + std::to_string(info) + ")"};
  if (info < 0) return {StatusCode::invalid_argument, "syevd rejected argument " + std::to_string(-info)};
  if (!all_finite(std::span<const S>(result.values)) || !all_finite(std::span<const S>(result.storage)))
    return {StatusCode::non_finite_output, "syevd produced non-finite values"};
  return Status::success();
}

template int lu_row_pivoted<float>(MatrixView<float>, std::span<index>);
template int lu_row_pivoted<double>(MatrixView<double>, std::span<index>);
template void unit_lower_gram<float>(MatrixView<float>);
template void unit_lower_gram<double>(MatrixView<double>);
template Status householder_qr_in_place<float>(MatrixView<float>, bool);
template Status householder_qr_in_place<double>(MatrixView<double>, bool);
template void gram_full<float>(ConstMatrixView<float>, MatrixView<float>);
template void gram_full<double>(ConstMatrixView<double>, MatrixView<double>);
template void symmetrize<float>(MatrixView<float>);
template void symmetrize<double>(MatrixView<double>);
template void mirror_upper<float>(MatrixView<float>);
template void mirror_upper<double>(MatrixView<double>);
template Status solve_symmetric<float, float>(ConstMatrixView<float>, double, SymmetricEigen<float>&);
template Status solve_symmetric<double, float>(ConstMatrixView<float>, double, SymmetricEigen<double>&);
template Status solve_symmetric<double, double>(ConstMatrixView<double>, double, SymmetricEigen<double>&);

}  // namespace asteria::linalg::detail
