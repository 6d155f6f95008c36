#pragma once
// Naive float64 linear algebra for the optimizer reference implementations in tests: plain
// loops, a cyclic Jacobi eigen solver and Gram–Schmidt QR. Deliberately independent of
// core/linalg (the code under test).
#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

namespace asteria::test {

struct Dense {
  int rows = 0;
  int cols = 0;
  std::vector<double> a;

  Dense() = default;
  Dense(int r, int c) : rows(r), cols(c), a(static_cast<std::size_t>(r * c), 0.0) {}
  double& operator()(int i, int j) { return a[static_cast<std::size_t>(i * cols + j)]; }
  double operator()(int i, int j) const { return a[static_cast<std::size_t>(i * cols + j)]; }
  static Dense identity(int n) {
    Dense d(n, n);
    for (int i = 0; i < n; ++i) d(i, i) = 1.0;
    return d;
  }
};

inline Dense transpose(const Dense& x) {
  Dense t(x.cols, x.rows);
  for (int i = 0; i < x.rows; ++i)
    for (int j = 0; j < x.cols; ++j) t(j, i) = x(i, j);
  return t;
}

inline Dense matmul(const Dense& x, const Dense& y) {
  assert(x.cols == y.rows);
  Dense z(x.rows, y.cols);
  for (int i = 0; i < x.rows; ++i)
    for (int k = 0; k < x.cols; ++k)
      for (int j = 0; j < y.cols; ++j) z(i, j) += x(i, k) * y(k, j);
  return z;
}

inline Dense scaled_sum(double a, const Dense& x, double b, const Dense& y) {
  Dense z(x.rows, x.cols);
  for (std::size_t i = 0; i < z.a.size(); ++i) z.a[i] = a * x.a[i] + b * y.a[i];
  return z;
}

inline Dense random_dense(int rows, int cols, std::mt19937& gen, double scale = 1.0) {
  std::normal_distribution<double> dist(0.0, scale);
  Dense d(rows, cols);
  for (double& x : d.a) x = dist(gen);
  return d;
}

struct Eigen {
  std::vector<double> values;  // descending
  Dense vectors;               // columns, same order
};

// Cyclic Jacobi rotations until the off-diagonal mass is negligible; sorted descending.
inline Eigen jacobi_eigen(Dense s) {
  const int n = s.rows;
  Dense v = Dense::identity(n);
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0, total = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        total += s(i, j) * s(i, j);
        if (i != j) off += s(i, j) * s(i, j);
      }
    if (off <= 1e-30 * total || off == 0.0) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        if (s(p, q) == 0.0) continue;
        const double theta = (s(q, q) - s(p, p)) / (2.0 * s(p, q));
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0);
        const double sn = t * c;
        for (int k = 0; k < n; ++k) {  // s ← s J (columns p, q)
          const double skp = s(k, p), skq = s(k, q);
          s(k, p) = c * skp - sn * skq;
          s(k, q) = sn * skp + c * skq;
        }
        for (int k = 0; k < n; ++k) {  // s ← Jᵀ s (rows p, q)
          const double spk = s(p, k), sqk = s(q, k);
          s(p, k) = c * spk - sn * sqk;
          s(q, k) = sn * spk + c * sqk;
        }
        for (int k = 0; k < n; ++k) {
          const double vkp = v(k, p), vkq = v(k, q);
          v(k, p) = c * vkp - sn * vkq;
          v(k, q) = sn * vkp + c * vkq;
        }
      }
  }
  std::vector<int> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](int x, int y) { return s(x, x) > s(y, y); });
  Eigen e{std::vector<double>(static_cast<std::size_t>(n)), Dense(n, n)};
  for (int k = 0; k < n; ++k) {
    e.values[static_cast<std::size_t>(k)] = s(idx[static_cast<std::size_t>(k)], idx[static_cast<std::size_t>(k)]);
    for (int i = 0; i < n; ++i) e.vectors(i, k) = v(i, idx[static_cast<std::size_t>(k)]);
  }
  return e;
}

// Q of a = QR for square, full-rank a: modified Gram–Schmidt, applied twice for orthogonality.
inline Dense gram_schmidt(const Dense& a) {
  const int n = a.rows, m = a.cols;
  Dense q = a;
  for (int k = 0; k < m; ++k)
    for (int pass = 0; pass < 2; ++pass) {
      for (int j = 0; j < k; ++j) {
        double dot = 0.0;
        for (int i = 0; i < n; ++i) dot += q(i, j) * q(i, k);
        for (int i = 0; i < n; ++i) q(i, k) -= dot * q(i, j);
      }
      double norm = 0.0;
      for (int i = 0; i < n; ++i) norm += q(i, k) * q(i, k);
      norm = std::sqrt(norm);
      for (int i = 0; i < n; ++i) q(i, k) /= norm;
    }
  return q;
}

// Smallest gap between consecutive values of a descending list, relative to the largest
// magnitude: eigenvectors (and sort orders) are only comparable when this is not tiny.
inline double min_relative_gap(const std::vector<double>& descending) {
  double scale = 0.0, gap = 1e300;
  for (double x : descending) scale = std::max(scale, std::abs(x));
  for (std::size_t i = 1; i < descending.size(); ++i) gap = std::min(gap, descending[i - 1] - descending[i]);
  return descending.size() < 2 ? 1.0 : gap / scale;
}

// A view of block (r0, c0, rows, cols) of a row-major tensor with `stride` columns.
inline Dense extract(const std::vector<double>& tensor, int stride, int r0, int c0, int rows, int cols) {
  Dense d(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) d(i, j) = tensor[static_cast<std::size_t>((r0 + i) * stride + c0 + j)];
  return d;
}

inline void insert(const Dense& d, std::vector<double>& tensor, int stride, int r0, int c0) {
  for (int i = 0; i < d.rows; ++i)
    for (int j = 0; j < d.cols; ++j) tensor[static_cast<std::size_t>((r0 + i) * stride + c0 + j)] = d(i, j);
}

}  // namespace asteria::test
