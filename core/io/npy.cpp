#include "core/io/npy.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "core/common/error.hpp"
#include "core/io/atomic_file.hpp"
#include "core/io/npy_header.hpp"

namespace asteria::io {
namespace {

constexpr std::array<unsigned char, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kAlignment = 64;  // numpy.save aligns the data start to 64 bytes

std::uint32_t little_endian(std::span<const std::byte> bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) value = (value << 8) | std::to_integer<std::uint32_t>(bytes[i]);
  return value;
}

DType parse_descr(const std::string& descr, const std::string& source) {
  const std::string expected = "(expected little-endian float32 '<f4' or float64 '<f8')";
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=') && descr[1] == 'f') {
    if (descr[2] == '4') return DType::float32;
    if (descr[2] == '8') return DType::float64;
  }
  if (descr.size() == 3 && descr[0] == '>' && descr[1] == 'f' && (descr[2] == '4' || descr[2] == '8'))
    throw InputError(source, "descr",
                     "big-endian dtype '" + descr + "' is not supported " + expected +
                         "; convert with array.astype('<f" + descr[2] + "')");
  throw InputError(source, "descr", "unsupported dtype '" + descr + "' " + expected);
}

// Number of elements, or an InputError when the byte count would overflow.
std::size_t element_count(const std::vector<index>& shape, std::size_t item, const std::string& source) {
  std::size_t count = 1;
  const std::size_t limit = std::numeric_limits<std::size_t>::max() / 2 / item;
  for (index d : shape) {
    const auto dim = static_cast<std::size_t>(d);
    if (dim != 0 && count > limit / dim)
      throw InputError(source, "shape", "expected an array that fits in memory, found shape " + format_shape(shape));
    count *= dim;
  }
  return count;
}

// Reorders values stored in Fortran (column-major) order into C (row-major) order.
template <Real T>
std::vector<T> fortran_to_c(const std::vector<T>& f, const std::vector<index>& shape) {
  const std::size_t rank = shape.size();
  if (rank <= 1 || f.empty()) return f;
  std::vector<std::size_t> f_stride(rank, 1);
  for (std::size_t d = 1; d < rank; ++d) f_stride[d] = f_stride[d - 1] * static_cast<std::size_t>(shape[d - 1]);
  std::vector<T> c(f.size());
  std::vector<index> at(rank, 0);  // multi-index of c[i], last dimension fastest
  std::size_t offset = 0;          // its position in f
  for (std::size_t i = 0; i < c.size(); ++i) {
    c[i] = f[offset];
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < shape[d]) {
        offset += f_stride[d];
        break;
      }
      offset -= f_stride[d] * static_cast<std::size_t>(shape[d] - 1);
      at[d] = 0;
    }
  }
  return c;
}

template <Real T>
std::vector<T> decode_values(std::span<const std::byte> data, std::size_t count) {
  std::vector<T> values(count);
  if (count != 0) std::memcpy(values.data(), data.data(), count * sizeof(T));
  return values;
}

}  // namespace

const char* to_string(DType dtype) noexcept { return dtype == DType::float32 ? "float32" : "float64"; }
std::size_t item_size(DType dtype) noexcept { return dtype == DType::float32 ? 4 : 8; }

std::size_t NpyArray::size() const noexcept {
  return std::visit([](const auto& v) { return v.size(); }, values);
}

template <Real T>
std::vector<T> NpyArray::values_as() const {
  return std::visit([](const auto& v) { return std::vector<T>(v.begin(), v.end()); }, values);
}
template std::vector<float> NpyArray::values_as<float>() const;
template std::vector<double> NpyArray::values_as<double>() const;

std::string format_shape(std::span<const index> shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

NpyArray parse_npy(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() < kMagic.size() ||
      std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0)
    throw InputError(source, "magic", "expected a NumPy .npy file starting with \"\\x93NUMPY\"");
  if (bytes.size() < 8) throw InputError(source, "version", "expected 2 version bytes after the magic; file ends");
  const auto major = std::to_integer<int>(bytes[6]);
  const auto minor = std::to_integer<int>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw InputError(source, "version",
                     "expected format version 1.0, 2.0 or 3.0, found " + std::to_string(major) + "." +
                         std::to_string(minor));
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix = 8 + length_bytes;
  if (bytes.size() < prefix)
    throw InputError(source, "header_len", "expected a " + std::to_string(length_bytes) + "-byte header length; file ends");
  const std::size_t header_len = little_endian(bytes.subspan(8, length_bytes));
  if (bytes.size() - prefix < header_len)
    throw InputError(source, "header",
                     "truncated: expected " + std::to_string(header_len) + " header bytes, found " +
                         std::to_string(bytes.size() - prefix));
  // Version 3.0 headers are UTF-8; the keys and values accepted here are plain ASCII either way.
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);
  const NpyHeader header = parse_npy_header(text, source);
  const DType dtype = parse_descr(header.descr, source);

  const std::size_t count = element_count(header.shape, item_size(dtype), source);
  const std::size_t expected = count * item_size(dtype);
  const std::span<const std::byte> data = bytes.subspan(prefix + header_len);
  const std::string what = " for shape " + format_shape(header.shape) + " of '" + header.descr + "'";
  if (data.size() < expected)
    throw InputError(source, "data",
                     "truncated: expected " + std::to_string(expected) + " bytes" + what + ", found " +
                         std::to_string(data.size()));
  if (data.size() > expected)
    throw InputError(source, "data",
                     "trailing garbage: expected " + std::to_string(expected) + " bytes" + what + ", found " +
                         std::to_string(data.size()) + " (" + std::to_string(data.size() - expected) +
                         " extra bytes after the array)");

  NpyArray array;
  array.shape = header.shape;
  if (dtype == DType::float32) {
    auto v = decode_values<float>(data, count);
    array.values = header.fortran_order ? fortran_to_c(v, header.shape) : std::move(v);
  } else {
    auto v = decode_values<double>(data, count);
    array.values = header.fortran_order ? fortran_to_c(v, header.shape) : std::move(v);
  }
  return array;
}

NpyArray read_npy(const std::filesystem::path& file) {
  const std::string source = file.string();
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) throw InputError(source, "file", "expected an existing .npy file, not found");
  if (!std::filesystem::is_regular_file(status))
    throw InputError(source, "file", "expected a regular .npy file, found a directory or special file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(source, "file", "expected a readable file, could not open it");
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(source, "file", "expected a readable file, reading failed");
  return parse_npy(std::as_bytes(std::span<const char>(raw)), source);
}

namespace {

// Magic, version, header length and padded header of a .npy file for `values_count` values of T.
template <Real T>
std::string npy_prefix(std::span<const index> shape, std::size_t values_count, const std::string& source) {
  const std::vector<index> dims(shape.begin(), shape.end());
  for (index d : dims)
    if (d < 0) throw InputError(source, "shape", "expected non-negative dimensions, found " + format_shape(dims));
  const std::size_t count = element_count(dims, sizeof(T), source);
  if (count != values_count)
    throw InputError(source, "data",
                     "expected " + std::to_string(count) + " values for shape " + format_shape(dims) + ", found " +
                         std::to_string(values_count));
  std::string header = format_npy_header(sizeof(T) == 4 ? "<f4" : "<f8", dims);
  // Pad with spaces and end with '\n' so that the data starts on a 64-byte boundary.
  const std::size_t prefix_v1 = 10;
  const bool needs_v2 = prefix_v1 + header.size() + kAlignment > std::numeric_limits<std::uint16_t>::max();
  const std::size_t prefix = needs_v2 ? 12 : prefix_v1;
  const std::size_t unpadded = prefix + header.size() + 1;
  header.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  header += '\n';

  std::string out(reinterpret_cast<const char*>(kMagic.data()), kMagic.size());
  out += static_cast<char>(needs_v2 ? 2 : 1);
  out += '\0';
  const std::size_t length = header.size();
  for (std::size_t i = 0; i < (needs_v2 ? 4U : 2U); ++i) out += static_cast<char>((length >> (8 * i)) & 0xFF);
  return out + header;
}

}  // namespace

template <Real T>
std::string encode_npy(std::span<const index> shape, std::span<const T> values) {
  std::string out = npy_prefix<T>(shape, values.size(), "npy");
  out.append(reinterpret_cast<const char*>(values.data()), values.size_bytes());
  return out;
}

template <Real T>
void write_npy(const std::filesystem::path& file, std::span<const index> shape, std::span<const T> values) {
  const std::string prefix = npy_prefix<T>(shape, values.size(), file.string());
  const std::array<std::span<const std::byte>, 2> pieces = {std::as_bytes(std::span<const char>(prefix)),
                                                            std::as_bytes(values)};
  write_file_atomically(file, pieces);
}

template std::string encode_npy<float>(std::span<const index>, std::span<const float>);
template std::string encode_npy<double>(std::span<const index>, std::span<const double>);
template void write_npy<float>(const std::filesystem::path&, std::span<const index>, std::span<const float>);
template void write_npy<double>(const std::filesystem::path&, std::span<const index>, std::span<const double>);

}  // namespace asteria::io
