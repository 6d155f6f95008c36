#pragma once
// Dense row-major matrices: a non-owning view (any stride, so a block of a larger tensor
// needs no copy) and an owning Matrix. Element (i, j) lives at data[i * stride + j],
// the same layout as a C-contiguous NumPy array.
#include <algorithm>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

namespace asteria::linalg {

using index = std::ptrdiff_t;

template <class T>
concept Real = std::same_as<T, float> || std::same_as<T, double>;

template <class T>
class MatrixView {
 public:
  using value_type = std::remove_const_t<T>;

  MatrixView() = default;
  MatrixView(T* data, index rows, index cols) : MatrixView(data, rows, cols, cols) {}
  MatrixView(T* data, index rows, index cols, index stride)
      : data_(data), rows_(rows), cols_(cols), stride_(stride) {
    assert(rows >= 0 && cols >= 0 && stride >= cols);
  }
  // A view of mutable data converts to a view of const data.
  template <class U>
    requires(std::is_const_v<T> && std::same_as<const U, T>)
  MatrixView(MatrixView<U> other)  // NOLINT(google-explicit-constructor)
      : MatrixView(other.data(), other.rows(), other.cols(), other.stride()) {}

  T* data() const noexcept { return data_; }
  index rows() const noexcept { return rows_; }
  index cols() const noexcept { return cols_; }
  index stride() const noexcept { return stride_; }
  index size() const noexcept { return rows_ * cols_; }
  bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }
  bool contiguous() const noexcept { return stride_ == cols_ || rows_ <= 1; }

  T& operator()(index i, index j) const noexcept {
    assert(i >= 0 && i < rows_ && j >= 0 && j < cols_);
    return data_[i * stride_ + j];
  }
  std::span<T> row(index i) const noexcept { return {data_ + i * stride_, static_cast<std::size_t>(cols_)}; }

  // Sub-block [r0, r0 + m) x [c0, c0 + n), sharing storage.
  MatrixView block(index r0, index c0, index m, index n) const noexcept {
    assert(r0 >= 0 && c0 >= 0 && r0 + m <= rows_ && c0 + n <= cols_);
    return {data_ + r0 * stride_ + c0, m, n, stride_};
  }

 private:
  T* data_ = nullptr;
  index rows_ = 0;
  index cols_ = 0;
  index stride_ = 0;
};

template <class T>
using ConstMatrixView = MatrixView<const T>;

// Owning, contiguous, zero-initialised.
template <Real T>
class Matrix {
 public:
  Matrix() = default;
  Matrix(index rows, index cols) : rows_(rows), cols_(cols), values_(static_cast<std::size_t>(rows * cols)) {}
  explicit Matrix(ConstMatrixView<T> source) : Matrix(source.rows(), source.cols()) {
    for (index i = 0; i < rows_; ++i) std::ranges::copy(source.row(i), values_.begin() + i * cols_);
  }
  static Matrix identity(index n) {
    Matrix m(n, n);
    for (index i = 0; i < n; ++i) m(i, i) = T(1);
    return m;
  }

  // Becomes a copy of `source`, keeping its storage when the sizes match (a reused buffer
  // costs no allocation and no page faults).
  void assign(ConstMatrixView<T> source) {
    resize(source.rows(), source.cols());
    for (index i = 0; i < rows_; ++i) std::ranges::copy(source.row(i), values_.begin() + i * cols_);
  }
  // New shape; values are unspecified unless the shape was already this one (then kept).
  void resize(index rows, index cols) {
    rows_ = rows;
    cols_ = cols;
    values_.resize(static_cast<std::size_t>(rows * cols));
  }

  index rows() const noexcept { return rows_; }
  index cols() const noexcept { return cols_; }
  index size() const noexcept { return rows_ * cols_; }
  T* data() noexcept { return values_.data(); }
  const T* data() const noexcept { return values_.data(); }
  std::span<T> values() noexcept { return values_; }
  std::span<const T> values() const noexcept { return values_; }

  T& operator()(index i, index j) noexcept { return values_[static_cast<std::size_t>(i * cols_ + j)]; }
  const T& operator()(index i, index j) const noexcept { return values_[static_cast<std::size_t>(i * cols_ + j)]; }

  MatrixView<T> view() noexcept { return {values_.data(), rows_, cols_}; }
  ConstMatrixView<T> view() const noexcept { return {values_.data(), rows_, cols_}; }
  operator MatrixView<T>() noexcept { return view(); }             // NOLINT(google-explicit-constructor)
  operator ConstMatrixView<T>() const noexcept { return view(); }  // NOLINT(google-explicit-constructor)

 private:
  index rows_ = 0;
  index cols_ = 0;
  std::vector<T> values_;
};

// Element-wise helpers that respect strides.
template <class T, class U>
void copy(ConstMatrixView<T> from, MatrixView<U> to) {
  assert(from.rows() == to.rows() && from.cols() == to.cols());
  for (index i = 0; i < from.rows(); ++i) std::ranges::copy(from.row(i), to.row(i).begin());
}

template <class T>
void fill(MatrixView<T> m, std::remove_const_t<T> value) {
  for (index i = 0; i < m.rows(); ++i) std::ranges::fill(m.row(i), value);
}

}  // namespace asteria::linalg
