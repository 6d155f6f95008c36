#include "core/model/rope.hpp"

#include <cassert>
#include <cmath>

namespace asteria::model {

using linalg::index;

template <linalg::Real T>
RotaryTable<T>::RotaryTable(index max_length, index head_dim, double base)
    : max_length_(max_length),
      half_(head_dim / 2),
      cos_(static_cast<std::size_t>(max_length * (head_dim / 2))),
      sin_(cos_.size()) {
  for (index p = 0; p < max_length_; ++p)
    for (index i = 0; i < half_; ++i) {
      const double frequency = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
      const double angle = static_cast<double>(p) * frequency;
      cos_[static_cast<std::size_t>(p * half_ + i)] = static_cast<T>(std::cos(angle));
      sin_[static_cast<std::size_t>(p * half_ + i)] = static_cast<T>(std::sin(angle));
    }
}

namespace {

// Turns each pair by +angle (direction 1) or −angle (direction −1).
template <linalg::Real T>
void rotate(linalg::MatrixView<T> x, index length, index heads, const RotaryTable<T>& table, T direction) {
  const index half = table.half();
  assert(x.cols() == heads * 2 * half && length <= table.max_length());
  for (index r = 0; r < x.rows(); ++r) {
    const index position = r % length;
    T* row = x.row(r).data();
    for (index h = 0; h < heads; ++h) {
      T* first = row + h * 2 * half;
      T* second = first + half;
      for (index i = 0; i < half; ++i) {
        const T c = table.cos(position, i);
        const T s = direction * table.sin(position, i);
        const T a = first[i];
        const T b = second[i];
        first[i] = a * c - b * s;
        second[i] = b * c + a * s;
      }
    }
  }
}

}  // namespace

template <linalg::Real T>
void rope_forward(linalg::MatrixView<T> x, index length, index heads, const RotaryTable<T>& table) {
  rotate(x, length, heads, table, T(1));
}

template <linalg::Real T>
void rope_backward(linalg::MatrixView<T> dx, index length, index heads, const RotaryTable<T>& table) {
  rotate(dx, length, heads, table, T(-1));
}

template class RotaryTable<float>;
template class RotaryTable<double>;
template void rope_forward<float>(linalg::MatrixView<float>, index, index, const RotaryTable<float>&);
template void rope_forward<double>(linalg::MatrixView<double>, index, index, const RotaryTable<double>&);
template void rope_backward<float>(linalg::MatrixView<float>, index, index, const RotaryTable<float>&);
template void rope_backward<double>(linalg::MatrixView<double>, index, index, const RotaryTable<double>&);

}  // namespace asteria::model
