#pragma once
// An independent float64 Shampoo (DS semantics, ALGORITHMS.md) for tests: plain loops, its own
// blocking and a Jacobi-based inverse root. Shares no code with core/optim.
#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/optim/reference_math.hpp"

namespace asteria::optim::reference {

struct ShampooSettings {
  double lr = 1e-2;
  double beta1 = 0.9;
  double beta2 = 1.0;
  double eps = 1e-12;
  double weight_decay = 0.0;
  int frequency = 1;
  int start = 1;  // already resolved (DS's -1 means "= frequency")
  double exponent = 4.0;
  bool grafting = true;
  double graft_beta2 = 0.999;
  double graft_eps = 1e-10;
  // DS's Shampoo of a 1-D tensor: a 1 x n block keeps only the n x n factor of its one
  // dimension (the caller sets exponent 2, DS's −1/(2·1)); the rows side is not preconditioned.
  bool one_sided = false;
};

class ShampooBlockReference {
 public:
  ShampooBlockReference(int rows, int cols, const ShampooSettings& s)
      : s_(s), left_(rows, rows), right_(cols, cols), left_root_(Dense::identity(rows)),
        right_root_(Dense::identity(cols)), momentum_(rows, cols), second_(rows, cols) {}

  // One step on block weights w (rows x cols) with gradient g; returns whether roots were refreshed.
  bool step(Dense& w, const Dense& g) {
    ++k_;
    const double b2 = s_.beta2;
    const double weight = b2 == 1.0 ? 1.0 : 1.0 - b2;
    const Dense ggt = multiply(g, transpose(g));
    const Dense gtg = multiply(transpose(g), g);
    if (!s_.one_sided)
      for (std::size_t i = 0; i < left_.a.size(); ++i) left_.a[i] = b2 * left_.a[i] + weight * ggt.a[i];
    for (std::size_t i = 0; i < right_.a.size(); ++i) right_.a[i] = b2 * right_.a[i] + weight * gtg.a[i];

    const bool refresh = k_ == s_.start || (k_ > s_.start && k_ % s_.frequency == 0);
    if (refresh) {
      const double c = b2 < 1.0 ? 1.0 - std::pow(b2, k_) : 1.0;
      Dense l = left_;
      Dense r = right_;
      for (double& x : l.a) x /= c;
      for (double& x : r.a) x /= c;
      if (!s_.one_sided) left_root_ = inverse_root(l, s_.exponent, s_.eps);
      right_root_ = inverse_root(r, s_.exponent, s_.eps);
      have_root_ = true;
    }

    Dense filtered(g.rows, g.cols);
    Dense adam(g.rows, g.cols);
    const double bc1 = 1.0 - std::pow(s_.beta1, k_);
    const double gb2 = s_.graft_beta2;
    const double bc2 = gb2 < 1.0 ? 1.0 - std::pow(gb2, k_) : 1.0;
    for (std::size_t i = 0; i < g.a.size(); ++i) {
      momentum_.a[i] = s_.beta1 * momentum_.a[i] + (1.0 - s_.beta1) * g.a[i];
      filtered.a[i] = momentum_.a[i] / bc1;
      second_.a[i] = gb2 == 1.0 ? second_.a[i] + g.a[i] * g.a[i] : gb2 * second_.a[i] + (1.0 - gb2) * g.a[i] * g.a[i];
      adam.a[i] = filtered.a[i] / (std::sqrt(second_.a[i] / bc2) + s_.graft_eps);
    }
    Dense p;
    if (!have_root_ && s_.grafting) {
      p = adam;
    } else {
      p = multiply(multiply(left_root_, filtered), right_root_);
      if (s_.grafting) {
        const double scale = frobenius(adam) / (frobenius(p) + 1e-16);
        for (double& x : p.a) x *= scale;
      }
    }
    for (std::size_t i = 0; i < w.a.size(); ++i) w.a[i] -= s_.lr * (p.a[i] + s_.weight_decay * w.a[i]);
    return refresh;
  }

  const Dense& left() const { return left_; }
  const Dense& left_root() const { return left_root_; }
  const Dense& right_root() const { return right_root_; }

 private:
  ShampooSettings s_;
  int k_ = 0;
  bool have_root_ = false;
  Dense left_, right_, left_root_, right_root_, momentum_, second_;
};

// A rows x cols matrix cut into blocks of at most max_dim per side (full chunks first).
class ShampooTensorReference {
 public:
  ShampooTensorReference(int rows, int cols, int max_dim, const ShampooSettings& s) : rows_(rows), cols_(cols) {
    for (int r0 = 0; r0 < rows; r0 += max_dim)
      for (int c0 = 0; c0 < cols; c0 += max_dim) {
        const int m = std::min(max_dim, rows - r0);
        const int n = std::min(max_dim, cols - c0);
        regions_.push_back({r0, c0, m, n});
        blocks_.emplace_back(m, n, s);
      }
  }

  // w and g hold the matrix in row-major order. Returns the number of blocks refreshed.
  int step(std::vector<double>& w, const std::vector<double>& g) {
    int refreshed = 0;
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      const Region& r = regions_[b];
      Dense wb(r.rows, r.cols);
      Dense gb(r.rows, r.cols);
      for (int i = 0; i < r.rows; ++i)
        for (int j = 0; j < r.cols; ++j) {
          const auto at = static_cast<std::size_t>((r.row0 + i) * cols_ + r.col0 + j);
          wb(i, j) = w[at];
          gb(i, j) = g[at];
        }
      refreshed += blocks_[b].step(wb, gb) ? 1 : 0;
      for (int i = 0; i < r.rows; ++i)
        for (int j = 0; j < r.cols; ++j) w[static_cast<std::size_t>((r.row0 + i) * cols_ + r.col0 + j)] = wb(i, j);
    }
    return refreshed;
  }

  std::size_t block_count() const { return blocks_.size(); }
  const ShampooBlockReference& block(std::size_t b) const { return blocks_[b]; }

 private:
  struct Region {
    int row0, col0, rows, cols;
  };
  int rows_;
  int cols_;
  std::vector<Region> regions_;
  std::vector<ShampooBlockReference> blocks_;
};

}  // namespace asteria::optim::reference
