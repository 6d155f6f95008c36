#include "core/quant/bf16.hpp"

#include <bit>
#include <stdexcept>

namespace asteria::quant {

std::uint16_t to_bf16(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0)
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // NaN: keep the sign, stay quiet
  // Round to nearest even on the 16 bits dropped: add 0x7fff plus the kept part's lowest bit.
  const std::uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

float from_bf16(std::uint16_t bits) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

void to_bf16(std::span<const float> values, std::span<std::uint16_t> out) {
  if (values.size() != out.size()) throw std::invalid_argument("to_bf16: spans of different sizes");
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = to_bf16(values[i]);
}

void from_bf16(std::span<const std::uint16_t> bits, std::span<float> out) {
  if (bits.size() != out.size()) throw std::invalid_argument("from_bf16: spans of different sizes");
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = from_bf16(bits[i]);
}

}  // namespace asteria::quant
