#pragma once
// Block-wise quantization of optimizer state (the scheme of 8-bit optimizers): values in blocks of
// `block` consecutive elements, each block scaled by its largest magnitude (kept as a float), each
// value stored as a code of 8 or 4 bits. Per map, for a value x in a block of scale s:
//   linear8    127 evenly spaced levels each side of 0                |x − x̂| ≤ s / 254
//   dynamic8   a sign and 127 magnitudes spaced geometrically         |x − x̂| ≤ max(ρ·|x|, s·2^-17),
//              from 2^-16·s to s (and 0): signed values spanning       ρ = (2^(16/126) − 1) / 2 ≈ 4.5%
//              decades (first moments) keep their relative precision
//   udynamic8  255 magnitudes from 2^-24·s to s (and 0), for values    |x − x̂| ≤ max(ρ·|x|, s·2^-25),
//              that are never negative (second moments: squares         ρ = (2^(24/254) − 1) / 2 ≈ 3.4%
//              span twice the decades)
//   linear4    7 levels each side of 0, two codes a byte               |x − x̂| ≤ s / 14
// (error_bound() gives these, plus float rounding). A non-finite value is refused, never stored;
// so is a negative one in udynamic8.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"

namespace asteria::quant {

enum class CodeMap { linear8, dynamic8, udynamic8, linear4 };
std::string_view to_string(CodeMap map) noexcept;

struct QuantizedBlocks {
  CodeMap map = CodeMap::linear8;
  std::size_t count = 0;    // values
  std::size_t block = 256;  // values a scale
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;  // one a block: its largest magnitude
  std::size_t bytes() const noexcept { return codes.size() + scales.size() * sizeof(float); }
};

// Bytes `count` values take: the codes and one float a block of `block` (>= 1).
std::size_t quantized_bytes(CodeMap map, std::size_t count, std::size_t block);

// Encodes `values` in blocks of `block` (>= 1; invalid_argument otherwise). A NaN or infinity is
// refused (non_finite_input, naming its index), and a negative value in udynamic8
// (invalid_argument, naming it); `out` is then unspecified.
Status quantize(std::span<const float> values, CodeMap map, std::size_t block, QuantizedBlocks& out);
// Decodes every value into `out` (size q.count; std::invalid_argument otherwise).
void dequantize(const QuantizedBlocks& q, std::span<float> out);

// The largest |x − x̂| the map allows for `x` in a block of scale `scale` (the table above, with
// float rounding's share).
double error_bound(CodeMap map, double scale, double x) noexcept;

}  // namespace asteria::quant
