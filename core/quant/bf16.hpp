#pragma once
// bfloat16: the upper 16 bits of an IEEE-754 float (8 exponent bits, 7 stored mantissa bits),
// what GPU tensor cores read and write. Conversion rounds to nearest, ties to even, so a value
// is off by at most 2^-8 of itself (half a unit in the last place of 8 significant bits) unless
// it overflows to infinity; NaN stays NaN (quiet), infinities stay infinite.
#include <cstdint>
#include <span>

namespace asteria::quant {

std::uint16_t to_bf16(float value) noexcept;
float from_bf16(std::uint16_t bits) noexcept;

// Elementwise over spans of equal size (std::invalid_argument otherwise).
void to_bf16(std::span<const float> values, std::span<std::uint16_t> out);
void from_bf16(std::span<const std::uint16_t> bits, std::span<float> out);

}  // namespace asteria::quant
