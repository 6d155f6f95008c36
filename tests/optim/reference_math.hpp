#pragma once
// Plain float64 linear algebra for optimizer tests, written independently of core/linalg:
// a small dense matrix, products, and a cyclic Jacobi eigensolver for symmetric matrices.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace asteria::optim::reference {

struct Dense {
  int rows = 0;
  int cols = 0;
  std::vector<double> a;

  Dense() = default;
  Dense(int r, int c) : rows(r), cols(c), a(static_cast<std::size_t>(r * c), 0.0) {}
  static Dense identity(int n) {
    Dense m(n, n);
    for (int i = 0; i < n; ++i) m(i, i) = 1.0;
    return m;
  }
  double& operator()(int i, int j) { return a[static_cast<std::size_t>(i * cols + j)]; }
  double operator()(int i, int j) const { return a[static_cast<std::size_t>(i * cols + j)]; }
};

inline Dense multiply(const Dense& x, const Dense& y) {
  Dense z(x.rows, y.cols);
  for (int i = 0; i < x.rows; ++i)
    for (int k = 0; k < x.cols; ++k)
      for (int j = 0; j < y.cols; ++j) z(i, j) += x(i, k) * y(k, j);
  return z;
}

inline Dense transpose(const Dense& x) {
  Dense t(x.cols, x.rows);
  for (int i = 0; i < x.rows; ++i)
    for (int j = 0; j < x.cols; ++j) t(j, i) = x(i, j);
  return t;
}

inline double frobenius(const Dense& x) {
  double s = 0.0;
  for (double v : x.a) s += v * v;
  return std::sqrt(s);
}

// Eigenvalues `values` and eigenvectors (columns of `vectors`) of symmetric `s`, by cyclic
// Jacobi rotations until the off-diagonal mass is negligible.
inline void jacobi_eigen(Dense s, std::vector<double>& values, Dense& vectors) {
  const int n = s.rows;
  vectors = Dense::identity(n);
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0;
    double total = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        total += s(i, j) * s(i, j);
        if (i != j) off += s(i, j) * s(i, j);
      }
    if (off <= 1e-30 * total || off == 0.0) break;
    for (int p = 0; p < n - 1; ++p)
      for (int q = p + 1; q < n; ++q) {
        if (s(p, q) == 0.0) continue;
        const double theta = (s(q, q) - s(p, p)) / (2.0 * s(p, q));
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0);
        const double sn = t * c;
        for (int k = 0; k < n; ++k) {  // S ← S J
          const double skp = s(k, p);
          const double skq = s(k, q);
          s(k, p) = c * skp - sn * skq;
          s(k, q) = sn * skp + c * skq;
        }
        for (int k = 0; k < n; ++k) {  // S ← Jᵀ S
          const double spk = s(p, k);
          const double sqk = s(q, k);
          s(p, k) = c * spk - sn * sqk;
          s(q, k) = sn * spk + c * sqk;
        }
        for (int k = 0; k < n; ++k) {  // V ← V J
          const double vkp = vectors(k, p);
          const double vkq = vectors(k, q);
          vectors(k, p) = c * vkp - sn * vkq;
          vectors(k, q) = sn * vkp + c * vkq;
        }
      }
  }
  values.assign(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = s(i, i);
}

// (A + εI)^(−1/p) as ALGORITHMS.md: if the smallest eigenvalue of A + εI is below ε, all are
// shifted up by the difference.
inline Dense inverse_root(const Dense& a, double p, double eps) {
  const int n = a.rows;
  Dense b = a;
  for (int i = 0; i < n; ++i) b(i, i) += eps;
  std::vector<double> lambda;
  Dense q;
  jacobi_eigen(b, lambda, q);
  const double lmin = *std::min_element(lambda.begin(), lambda.end());
  if (lmin < eps)
    for (double& l : lambda) l += eps - lmin;
  Dense x(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) x(i, j) += q(i, k) * std::pow(lambda[static_cast<std::size_t>(k)], -1.0 / p) * q(j, k);
  return x;
}

inline std::vector<double> gaussian(std::size_t n, unsigned seed, double scale = 1.0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

// Values rounded to T and back, so a float run and its float64 reference see the same inputs.
template <class T>
std::vector<double> rounded_to(const std::vector<double>& v) {
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = static_cast<double>(static_cast<T>(v[i]));
  return r;
}

}  // namespace asteria::optim::reference
