// .npy files: any bytes read or are rejected with an InputError, and an array that reads holds
// as many values as its shape says and encodes (encode_npy) to bytes that read back to it.
#include <cstring>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/common/error.hpp"
#include "core/io/npy.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

// Bitwise, so that NaN payloads compare too.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace asteria;
  io::NpyArray array;
  try {
    array = io::parse_npy(fuzz::as_bytes(data, size), "fuzz.npy");
  } catch (const InputError&) {
    return 0;
  }
  std::size_t count = 1;
  for (io::index d : array.shape) count *= static_cast<std::size_t>(d);
  fuzz::require(count == array.size(), "the value count matches the shape");

  const std::string bytes = std::visit(
      [&](const auto& values) { return io::encode_npy(std::span<const io::index>(array.shape), std::span(values)); },
      array.values);
  const io::NpyArray again = io::parse_npy(std::as_bytes(std::span(bytes)), "fuzz.npy");
  fuzz::require(again.shape == array.shape && again.dtype() == array.dtype(), "shape and dtype round-trip");
  const bool same = std::visit(
      [&](const auto& values) {
        using Vector = std::decay_t<decltype(values)>;
        return same_bits(values, std::get<Vector>(again.values));
      },
      array.values);
  fuzz::require(same, "values round-trip bitwise");
  return 0;
}
