#include "core/linalg/eigen.hpp"

#include <lapacke.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/linalg/blas.hpp"

namespace asteria::linalg {
namespace {

// LAPACK works column-major. A symmetric matrix is its own transpose, so its row-major
// storage is already a valid column-major input; results come back transposed.
lapack_int syevd(std::vector<float>& a, std::vector<float>& w, lapack_int n) {
  return LAPACKE_ssyevd(LAPACK_COL_MAJOR, 'V', 'U', n, a.data(), n, w.data());
}
lapack_int syevd(std::vector<double>& a, std::vector<double>& w, lapack_int n) {
  return LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', n, a.data(), n, w.data());
}

template <Real T>
bool finite(const std::vector<T>& v) {
  for (T x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// Solves in precision S; on success, the column-major eigenvectors are in `vectors`.
template <Real S, Real T>
lapack_int solve_in(ConstMatrixView<T> a, std::vector<S>& values, std::vector<S>& vectors) {
  const index n = a.rows();
  vectors.resize(static_cast<std::size_t>(n * n));
  values.resize(static_cast<std::size_t>(n));
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) vectors[static_cast<std::size_t>(i * n + j)] = static_cast<S>(a(i, j));
  return syevd(vectors, values, static_cast<lapack_int>(n));
}

template <Real S, Real T>
void store(const std::vector<S>& values, const std::vector<S>& vectors, std::span<T> eigenvalues,
           MatrixView<T> eigenvectors) {
  const index n = eigenvectors.rows();
  for (index j = 0; j < n; ++j) eigenvalues[static_cast<std::size_t>(j)] = static_cast<T>(values[static_cast<std::size_t>(j)]);
  // Column-major element (i, j) sits at j * n + i.
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i) eigenvectors(i, j) = static_cast<T>(vectors[static_cast<std::size_t>(j * n + i)]);
}

lapack_int geqrf(lapack_int m, lapack_int n, float* a, float* tau) {
  return LAPACKE_sgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau);
}
lapack_int geqrf(lapack_int m, lapack_int n, double* a, double* tau) {
  return LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau);
}
lapack_int orgqr(lapack_int m, lapack_int n, float* a, const float* tau) {
  return LAPACKE_sorgqr(LAPACK_COL_MAJOR, m, n, n, a, m, tau);
}
lapack_int orgqr(lapack_int m, lapack_int n, double* a, const double* tau) {
  return LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, n, n, a, m, tau);
}

}  // namespace

template <Real T>
Status eigh(ConstMatrixView<T> a, std::span<T> eigenvalues, MatrixView<T> eigenvectors) {
  const index n = a.rows();
  if (a.cols() != n || eigenvectors.rows() != n || eigenvectors.cols() != n ||
      static_cast<index>(eigenvalues.size()) != n)
    return {StatusCode::invalid_argument, "eigh: expected a square matrix and outputs of matching size"};
  if (!all_finite(a)) return {StatusCode::non_finite_input, "eigh: input holds NaN or Inf"};
  if (n == 0) return Status::success();

  std::vector<T> values;
  std::vector<T> vectors;
  lapack_int info = solve_in<T>(a, values, vectors);
  if (info == 0 && finite(values) && finite(vectors)) {
    store(values, vectors, eigenvalues, eigenvectors);
    return Status::success();
  }
  if constexpr (std::is_same_v<T, float>) {
    std::vector<double> values64;
    std::vector<double> vectors64;
    info = solve_in<double>(a, values64, vectors64);
    if (info == 0 && finite(values64) && finite(vectors64)) {
      store(values64, vectors64, eigenvalues, eigenvectors);
      return Status::success();
    }
  }
  if (info > 0) return {StatusCode::no_convergence, "eigh: syevd failed to converge (info " + std::to_string(info) + ")"};
  if (info < 0) return {StatusCode::invalid_argument, "eigh: syevd rejected argument " + std::to_string(-info)};
  return {StatusCode::non_finite_output, "eigh: syevd produced non-finite values"};
}

template <Real T>
Status householder_qr(ConstMatrixView<T> a, MatrixView<T> q) {
  const index m = a.rows();
  const index n = a.cols();
  if (m < n || q.rows() != m || q.cols() != n)
    return {StatusCode::invalid_argument, "householder_qr: expected m >= n and q of shape m x n"};
  if (!all_finite(a)) return {StatusCode::non_finite_input, "householder_qr: input holds NaN or Inf"};
  if (n == 0) return Status::success();
  std::vector<T> work(static_cast<std::size_t>(m * n));  // column-major copy of a
  for (index i = 0; i < m; ++i)
    for (index j = 0; j < n; ++j) work[static_cast<std::size_t>(j * m + i)] = a(i, j);
  std::vector<T> tau(static_cast<std::size_t>(n));
  auto lm = static_cast<lapack_int>(m);
  auto ln = static_cast<lapack_int>(n);
  if (lapack_int info = geqrf(lm, ln, work.data(), tau.data()); info != 0)
    return {StatusCode::invalid_argument, "householder_qr: geqrf info " + std::to_string(info)};
  if (lapack_int info = orgqr(lm, ln, work.data(), tau.data()); info != 0)
    return {StatusCode::invalid_argument, "householder_qr: orgqr info " + std::to_string(info)};
  for (index i = 0; i < m; ++i)
    for (index j = 0; j < n; ++j) q(i, j) = work[static_cast<std::size_t>(j * m + i)];
  if (!all_finite(ConstMatrixView<T>(q))) return {StatusCode::non_finite_output, "householder_qr: non-finite result"};
  return Status::success();
}

template Status eigh<float>(ConstMatrixView<float>, std::span<float>, MatrixView<float>);
template Status eigh<double>(ConstMatrixView<double>, std::span<double>, MatrixView<double>);
template Status householder_qr<float>(ConstMatrixView<float>, MatrixView<float>);
template Status householder_qr<double>(ConstMatrixView<double>, MatrixView<double>);

}  // namespace asteria::linalg
