#include "core/quant/block_codec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace asteria::quant {

namespace {

constexpr int kLinear8Levels = 127;
constexpr int kLinear4Levels = 7;

// A geometric map: `levels` magnitudes from 2^-octaves to 1 relative to the scale, and 0.
struct Geometric {
  int levels;
  double octaves;
};
constexpr Geometric kSigned{127, 16.0};    // dynamic8: the sign takes a bit
constexpr Geometric kUnsigned{255, 24.0};  // udynamic8

Geometric geometric(CodeMap map) { return map == CodeMap::udynamic8 ? kUnsigned : kSigned; }

// The map's magnitudes relative to the scale, ascending: 0, then 2^-octaves .. 1.
const std::vector<double>& magnitudes(CodeMap map) {
  static const auto table = [](Geometric g) {
    std::vector<double> t(static_cast<std::size_t>(g.levels) + 1, 0.0);
    for (int m = 1; m <= g.levels; ++m)
      t[static_cast<std::size_t>(m)] = std::exp2(-g.octaves * static_cast<double>(g.levels - m) / (g.levels - 1));
    return t;
  };
  static const std::vector<double> signed_table = table(kSigned), unsigned_table = table(kUnsigned);
  return map == CodeMap::udynamic8 ? unsigned_table : signed_table;
}

// The nearest magnitude's index for r in [0, 1].
int nearest_magnitude(CodeMap map, double r) {
  const std::vector<double>& t = magnitudes(map);
  const auto above = std::lower_bound(t.begin(), t.end(), r);
  if (above == t.end()) return static_cast<int>(t.size()) - 1;
  if (above == t.begin()) return 0;
  const auto below = above - 1;
  return static_cast<int>((r - *below <= *above - r ? below : above) - t.begin());
}

std::uint8_t encode(CodeMap map, double r) {  // r = x / scale in [-1, 1]
  switch (map) {
    case CodeMap::linear8:
      return static_cast<std::uint8_t>(static_cast<int>(std::lround(r * kLinear8Levels)) + kLinear8Levels);
    case CodeMap::linear4:
      return static_cast<std::uint8_t>(static_cast<int>(std::lround(r * kLinear4Levels)) + kLinear4Levels + 1);
    case CodeMap::dynamic8: {
      const int m = nearest_magnitude(map, std::abs(r));
      return static_cast<std::uint8_t>((r < 0.0 && m > 0 ? 0x80 : 0) | m);
    }
    case CodeMap::udynamic8: return static_cast<std::uint8_t>(nearest_magnitude(map, r));
  }
  return 0;
}

float decode(CodeMap map, std::uint8_t code, float scale) {
  switch (map) {
    case CodeMap::linear8:
      return static_cast<float>((static_cast<int>(code) - kLinear8Levels) / double(kLinear8Levels) * scale);
    case CodeMap::linear4:
      return static_cast<float>((static_cast<int>(code) - kLinear4Levels - 1) / double(kLinear4Levels) * scale);
    case CodeMap::dynamic8: {
      const double magnitude = magnitudes(map)[code & 0x7f] * scale;
      return static_cast<float>(code & 0x80 ? -magnitude : magnitude);
    }
    case CodeMap::udynamic8: return static_cast<float>(magnitudes(map)[code] * scale);
  }
  return 0.0f;
}

bool four_bit(CodeMap map) { return map == CodeMap::linear4; }

}  // namespace

std::string_view to_string(CodeMap map) noexcept {
  switch (map) {
    case CodeMap::linear8: return "linear8";
    case CodeMap::dynamic8: return "dynamic8";
    case CodeMap::udynamic8: return "udynamic8";
    case CodeMap::linear4: return "linear4";
  }
  return "?";
}

std::size_t quantized_bytes(CodeMap map, std::size_t count, std::size_t block) {
  if (block == 0) throw std::invalid_argument("quantized_bytes: a block of 0 values");
  const std::size_t codes = four_bit(map) ? (count + 1) / 2 : count;
  return codes + (count + block - 1) / block * sizeof(float);
}

Status quantize(std::span<const float> values, CodeMap map, std::size_t block, QuantizedBlocks& out) {
  if (block == 0) return {StatusCode::invalid_argument, "quantize: a block of 0 values"};
  out.map = map;
  out.count = values.size();
  out.block = block;
  out.scales.assign((values.size() + block - 1) / block, 0.0f);
  out.codes.assign(four_bit(map) ? (values.size() + 1) / 2 : values.size(), 0);
  for (std::size_t b = 0; b < out.scales.size(); ++b) {
    const std::size_t first = b * block, end = std::min(values.size(), first + block);
    float scale = 0.0f;
    for (std::size_t i = first; i < end; ++i) {
      if (!std::isfinite(values[i]))
        return {StatusCode::non_finite_input, "quantize: value " + std::to_string(i) + " is not finite"};
      if (map == CodeMap::udynamic8 && values[i] < 0.0f)
        return {StatusCode::invalid_argument,
                "quantize: value " + std::to_string(i) + " is negative, which udynamic8 cannot hold"};
      scale = std::max(scale, std::abs(values[i]));
    }
    out.scales[b] = scale;
    for (std::size_t i = first; i < end; ++i) {
      const std::uint8_t code = encode(map, scale > 0.0f ? static_cast<double>(values[i]) / scale : 0.0);
      if (four_bit(map)) out.codes[i / 2] |= static_cast<std::uint8_t>(i % 2 == 0 ? code : code << 4);
      else out.codes[i] = code;
    }
  }
  return Status::success();
}

void dequantize(const QuantizedBlocks& q, std::span<float> out) {
  if (out.size() != q.count) throw std::invalid_argument("dequantize: the output holds another number of values");
  for (std::size_t i = 0; i < q.count; ++i) {
    const std::uint8_t code = four_bit(q.map) ? static_cast<std::uint8_t>((q.codes[i / 2] >> (i % 2 * 4)) & 0x0f)
                                              : q.codes[i];
    out[i] = decode(q.map, code, q.scales[i / q.block]);
  }
}

double error_bound(CodeMap map, double scale, double x) noexcept {
  // Float rounding of the scale, the ratio and the decoded value: a few units in the last place.
  const double rounding = 4.0 * 0x1p-24 * (std::abs(x) + scale);
  switch (map) {
    case CodeMap::linear8: return scale / (2.0 * kLinear8Levels) + rounding;
    case CodeMap::linear4: return scale / (2.0 * kLinear4Levels) + rounding;
    case CodeMap::dynamic8:
    case CodeMap::udynamic8: {
      const Geometric g = geometric(map);
      const double rho = (std::exp2(g.octaves / (g.levels - 1)) - 1.0) / 2.0;
      return std::max(rho * std::abs(x), scale * std::exp2(-g.octaves - 1.0)) + rounding;
    }
  }
  return 0.0;
}

}  // namespace asteria::quant
