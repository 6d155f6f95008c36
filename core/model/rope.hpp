#pragma once
// Rotary position embedding (Su et al. 2021, arXiv 2104.09864) in the rotate-half form of
// GPT-NeoX and LLaMA: within each head of width h, element i pairs with element i + h/2, and the
// pair at position p turns by the angle p · base^(−2i/h), base 10000.
#include <vector>

#include "core/linalg/matrix.hpp"

namespace asteria::model {

inline constexpr double kRopeBase = 10000.0;

// cos and sin of every (position, pair) angle up to max_length positions. Angles are computed in
// double so that float and double models rotate by the same (rounded) amounts.
template <linalg::Real T>
class RotaryTable {
 public:
  RotaryTable() = default;
  RotaryTable(linalg::index max_length, linalg::index head_dim, double base = kRopeBase);

  linalg::index max_length() const noexcept { return max_length_; }
  linalg::index half() const noexcept { return half_; }
  T cos(linalg::index position, linalg::index pair) const noexcept { return cos_[position * half_ + pair]; }
  T sin(linalg::index position, linalg::index pair) const noexcept { return sin_[position * half_ + pair]; }

 private:
  linalg::index max_length_ = 0;
  linalg::index half_ = 0;
  std::vector<T> cos_;
  std::vector<T> sin_;
};

// x holds rows of `heads` heads side by side (width heads · head_dim); row t is at position
// t mod length (sequences of `length` rows one after the other). Rotates in place.
template <linalg::Real T>
void rope_forward(linalg::MatrixView<T> x, linalg::index length, linalg::index heads, const RotaryTable<T>& table);

// The gradient through a rotation is the opposite rotation: turns dx in place by −angle.
template <linalg::Real T>
void rope_backward(linalg::MatrixView<T> dx, linalg::index length, linalg::index heads, const RotaryTable<T>& table);

}  // namespace asteria::model
