#pragma once
// An operand of a device operation as plain data: an address in some device's memory (which the
// host may be unable to read), a shape, a row stride and an element type. Typed code uses
// linalg::MatrixView; operations carry TensorRefs so that one record describes an operation on
// any backend (core/ops/operation.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/linalg/matrix.hpp"

namespace asteria::ops {

using linalg::index;
using linalg::Real;

enum class DType : std::uint8_t { f32, f64, i32 };

std::size_t element_bytes(DType dtype) noexcept;
std::string_view to_string(DType dtype) noexcept;

template <class T>
constexpr DType dtype_of() noexcept {
  using V = std::remove_const_t<T>;
  static_assert(std::is_same_v<V, float> || std::is_same_v<V, double> || std::is_same_v<V, std::int32_t>);
  if constexpr (std::is_same_v<V, float>) return DType::f32;
  else if constexpr (std::is_same_v<V, double>) return DType::f64;
  else return DType::i32;
}

struct TensorRef {
  void* data = nullptr;
  index rows = 0;
  index cols = 0;
  index stride = 0;  // elements between the starts of consecutive rows
  DType dtype = DType::f32;

  index size() const noexcept { return rows * cols; }
  bool empty() const noexcept { return rows == 0 || cols == 0; }
  bool contiguous() const noexcept { return stride == cols || rows <= 1; }
  // Bytes from the first element to one past the last (what a copy of the view touches).
  std::size_t span_bytes() const noexcept;
  // Whether the memory two views touch overlaps (by address range; exact for contiguous views).
  bool overlaps(const TensorRef& other) const noexcept;
};

// "3x4 f32" or "3x4 f32 (row stride 8)".
std::string describe(const TensorRef& tensor);

template <class T>
TensorRef ref(linalg::MatrixView<T> view) noexcept {
  // Operations never write through a view of const data: the access of each operand is checked
  // against its constness before an operation is built (Device::map and friends).
  return {const_cast<std::remove_const_t<T>*>(view.data()), view.rows(), view.cols(), view.stride(), dtype_of<T>()};
}

// The typed view of an operand whose dtype is T (checked by the caller).
template <class T>
linalg::MatrixView<T> view_of(const TensorRef& tensor) noexcept {
  return {static_cast<T*>(tensor.data), tensor.rows, tensor.cols, tensor.stride};
}

}  // namespace asteria::ops
