#pragma once
// Independent float64 references for the linalg tests: plain loops only, no BLAS/LAPACK and
// nothing from the code under test. Test matrices are built from a known eigendecomposition
// A = U diag(λ) Uᵀ, so exact answers are known without running an eigensolver.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "core/linalg/matrix.hpp"

namespace asteria::linalg::testing {

// Row-major dense double matrix for references.
struct Dense {
  index n_rows = 0;
  index n_cols = 0;
  std::vector<double> v;
  Dense() = default;
  Dense(index rows, index cols) : n_rows(rows), n_cols(cols), v(static_cast<std::size_t>(rows * cols), 0.0) {}
  double& operator()(index i, index j) { return v[static_cast<std::size_t>(i * n_cols + j)]; }
  double operator()(index i, index j) const { return v[static_cast<std::size_t>(i * n_cols + j)]; }
};

// c = a · b (i-k-j order so the inner loop streams rows).
inline Dense multiply(const Dense& a, const Dense& b) {
  Dense c(a.n_rows, b.n_cols);
  for (index i = 0; i < a.n_rows; ++i)
    for (index k = 0; k < a.n_cols; ++k) {
      const double aik = a(i, k);
      if (aik == 0.0) continue;
      const double* brow = &b.v[static_cast<std::size_t>(k * b.n_cols)];
      double* crow = &c.v[static_cast<std::size_t>(i * c.n_cols)];
      for (index j = 0; j < b.n_cols; ++j) crow[j] += aik * brow[j];
    }
  return c;
}

inline Dense transpose(const Dense& a) {
  Dense t(a.n_cols, a.n_rows);
  for (index i = 0; i < a.n_rows; ++i)
    for (index j = 0; j < a.n_cols; ++j) t(j, i) = a(i, j);
  return t;
}

// A dense orthogonal matrix in O(n²): the orthonormal DCT-II matrix with randomly permuted rows
// and random column signs (every entry nonzero, exactly orthogonal up to rounding).
inline Dense random_orthogonal(index n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<index> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), index{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  std::bernoulli_distribution coin(0.5);
  std::vector<double> sign(static_cast<std::size_t>(n));
  for (double& s : sign) s = coin(rng) ? 1.0 : -1.0;
  const double pi = std::acos(-1.0);
  Dense u(n, n);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) {
      const double c = j == 0 ? std::sqrt(1.0 / static_cast<double>(n)) : std::sqrt(2.0 / static_cast<double>(n));
      const auto row = static_cast<double>(perm[static_cast<std::size_t>(i)]);
      u(i, j) = sign[static_cast<std::size_t>(j)] * c * std::cos(pi * (2.0 * row + 1.0) * static_cast<double>(j) / (2.0 * static_cast<double>(n)));
    }
  return u;
}

// U diag(d) Uᵀ.
inline Dense from_eigen(const Dense& u, const std::vector<double>& d) {
  Dense scaled = u;
  for (index i = 0; i < u.n_rows; ++i)
    for (index j = 0; j < u.n_cols; ++j) scaled(i, j) *= d[static_cast<std::size_t>(j)];
  return multiply(scaled, transpose(u));
}

// n values from hi down to lo, evenly spaced in log scale.
inline std::vector<double> log_spectrum(index n, double hi, double lo) {
  std::vector<double> d(static_cast<std::size_t>(n));
  for (index i = 0; i < n; ++i) {
    const double t = n == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(n - 1);
    d[static_cast<std::size_t>(i)] = hi * std::pow(lo / hi, t);
  }
  return d;
}

template <Real T>
Matrix<T> to_matrix(const Dense& a) {
  Matrix<T> m(a.n_rows, a.n_cols);
  for (index i = 0; i < a.n_rows; ++i)
    for (index j = 0; j < a.n_cols; ++j) m(i, j) = static_cast<T>(a(i, j));
  return m;
}

template <Real T>
Dense to_dense(ConstMatrixView<T> a) {
  Dense d(a.rows(), a.cols());
  for (index i = 0; i < a.rows(); ++i)
    for (index j = 0; j < a.cols(); ++j) d(i, j) = static_cast<double>(a(i, j));
  return d;
}

inline double frobenius(const Dense& a) {
  double s = 0.0;
  for (double x : a.v) s += x * x;
  return std::sqrt(s);
}

// Lower Cholesky factor of symmetric a; empty when a is not numerically positive definite.
inline Dense cholesky(const Dense& a) {
  const index n = a.n_rows;
  Dense l(n, n);
  for (index j = 0; j < n; ++j) {
    double d = a(j, j);
    for (index k = 0; k < j; ++k) d -= l(j, k) * l(j, k);
    if (!(d > 0.0)) return {};
    l(j, j) = std::sqrt(d);
    for (index i = j + 1; i < n; ++i) {
      double s = a(i, j);
      for (index k = 0; k < j; ++k) s -= l(i, k) * l(j, k);
      l(i, j) = s / l(j, j);
    }
  }
  return l;
}

// x <- (L Lᵀ)⁻¹ x.
inline void cholesky_solve(const Dense& l, std::vector<double>& x) {
  const index n = l.n_rows;
  for (index i = 0; i < n; ++i) {
    double s = x[static_cast<std::size_t>(i)];
    for (index k = 0; k < i; ++k) s -= l(i, k) * x[static_cast<std::size_t>(k)];
    x[static_cast<std::size_t>(i)] = s / l(i, i);
  }
  for (index i = n - 1; i >= 0; --i) {
    double s = x[static_cast<std::size_t>(i)];
    for (index k = i + 1; k < n; ++k) s -= l(k, i) * x[static_cast<std::size_t>(k)];
    x[static_cast<std::size_t>(i)] = s / l(i, i);
  }
}

// ‖X^(−p) − B‖_F / ‖B‖_F for SPD X and integer p, applying X^(−p) by p Cholesky solves.
// probes = 0: exact, column by column (unit vectors). probes > 0: unbiased estimate of the
// squared norm from that many Gaussian vectors (E‖E v‖² = ‖E‖_F²), for large n.
// +inf when X is not positive definite.
inline double inverse_power_residual(const Dense& x, int p, const Dense& b, int probes = 0, std::uint32_t seed = 1) {
  const index n = x.n_rows;
  const Dense l = cholesky(x);
  if (l.n_rows != n) return INFINITY;
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  const int count = probes == 0 ? static_cast<int>(n) : probes;
  double sum = 0.0;
  std::vector<double> v(static_cast<std::size_t>(n));
  std::vector<double> y(static_cast<std::size_t>(n));
  for (int t = 0; t < count; ++t) {
    for (index i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = probes == 0 ? (i == t ? 1.0 : 0.0) : normal(rng);
    y = v;
    for (int k = 0; k < p; ++k) cholesky_solve(l, y);
    for (index i = 0; i < n; ++i) {
      double bv = 0.0;
      for (index j = 0; j < n; ++j) bv += b(i, j) * v[static_cast<std::size_t>(j)];
      const double r = y[static_cast<std::size_t>(i)] - bv;
      sum += r * r;
    }
  }
  if (probes > 0) sum /= probes;
  return std::sqrt(sum) / frobenius(b);
}

// ‖QᵀQ − I‖_F in double.
template <Real T>
double orthogonality_defect(ConstMatrixView<T> q) {
  const Dense d = to_dense(q);
  const Dense g = multiply(transpose(d), d);
  double s = 0.0;
  for (index i = 0; i < g.n_rows; ++i)
    for (index j = 0; j < g.n_cols; ++j) {
      const double e = g(i, j) - (i == j ? 1.0 : 0.0);
      s += e * e;
    }
  return std::sqrt(s);
}

}  // namespace asteria::linalg::testing
