#pragma once
// NumPy .npy files (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
//
// Read: format versions 1.0, 2.0 and 3.0; dtypes float32 and float64 stored little-endian
// (descr '<f4', '<f8', or the native forms '=f4', '=f8' on this little-endian host); any number
// of dimensions, 0-d included. Arrays stored with fortran_order True are converted to C order,
// so values are always in C (row-major) order. Everything else is rejected with an InputError
// that names the file, the field (magic, version, header, descr, fortran_order, shape, data)
// and what was expected.
// Write: C order, version 1.0 unless the header needs more than 65535 bytes (then 2.0), header
// padded so the data starts on a 64-byte boundary, as numpy.save does; atomic (see
// atomic_file.hpp).
#include <bit>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/linalg/matrix.hpp"

namespace asteria::io {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

using linalg::index;
using linalg::Real;

enum class DType { float32, float64 };

const char* to_string(DType dtype) noexcept;  // "float32", "float64"
std::size_t item_size(DType dtype) noexcept;  // 4, 8

template <Real T>
constexpr DType dtype_of() noexcept {
  return sizeof(T) == 4 ? DType::float32 : DType::float64;
}

// One array: its shape and its values in C order, in the dtype of the file.
struct NpyArray {
  std::vector<index> shape;
  std::variant<std::vector<float>, std::vector<double>> values;

  DType dtype() const noexcept { return values.index() == 0 ? DType::float32 : DType::float64; }
  std::size_t size() const noexcept;  // number of elements
  // The values converted to T (a copy; float64 -> float32 rounds to nearest).
  template <Real T>
  std::vector<T> values_as() const;
};

// Reads a .npy file. Throws InputError naming the file for a missing or unreadable file and
// for every malformed or unsupported content.
NpyArray read_npy(const std::filesystem::path& file);

// Parses the bytes of a .npy file; `source` names it in error messages.
NpyArray parse_npy(std::span<const std::byte> bytes, const std::string& source);

// The bytes of a .npy file holding `values` (C order) with the given shape. Throws
// InputError when the number of values does not match the shape.
template <Real T>
std::string encode_npy(std::span<const index> shape, std::span<const T> values);

// Writes a .npy file atomically. Throws InputError naming the file on any failure.
template <Real T>
void write_npy(const std::filesystem::path& file, std::span<const index> shape, std::span<const T> values);

// Python's spelling of a shape tuple: "()", "(3,)", "(2, 3)".
std::string format_shape(std::span<const index> shape);

}  // namespace asteria::io
