// The state codecs against exact (float64) arithmetic: bf16 rounds to nearest even within half a
// unit in the last place; every block map stays within its documented bound on values spread
// over many magnitudes; sizes are as documented; non-finite values are refused.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/quant/bf16.hpp"
#include "core/quant/block_codec.hpp"

namespace asteria::quant {
namespace {

// Values over ten orders of magnitude, both signs, with exact zeros and a few block maxima.
std::vector<float> spread_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> exponent(-10.0, 2.0), unit(0.0, 1.0);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double magnitude = std::pow(10.0, exponent(rng));
    v[i] = static_cast<float>(unit(rng) < 0.5 ? -magnitude : magnitude);
    if (i % 97 == 0) v[i] = 0.0f;
  }
  return v;
}

TEST(Bf16, RoundsToNearestEvenWithinHalfAnUlp) {
  for (const float x : spread_values(100000, 1)) {
    const double back = from_bf16(to_bf16(x));
    EXPECT_LE(std::abs(back - x), std::ldexp(std::abs(double(x)), -8)) << x;  // half an ulp of 8 significant bits
  }
  // Exactly representable values come back unchanged; a tie goes to the even mantissa.
  EXPECT_EQ(from_bf16(to_bf16(1.5f)), 1.5f);
  EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80u);  // 1 + 2^-8: tie, to even (1)
  EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82u);  // 1 + 3·2^-8: tie, to even (up)
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(from_bf16(to_bf16(-std::numeric_limits<float>::infinity())), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(from_bf16(to_bf16(std::numeric_limits<float>::max())), std::numeric_limits<float>::infinity())
      << "past bf16's largest finite value, rounding overflows to infinity";
}

TEST(BlockCodec, EveryMapStaysWithinItsBound) {
  const std::vector<float> spread = spread_values(20000, 2);
  std::vector<float> magnitudes(spread.size());
  for (std::size_t i = 0; i < spread.size(); ++i) magnitudes[i] = std::abs(spread[i]);
  for (const CodeMap map : {CodeMap::linear8, CodeMap::dynamic8, CodeMap::udynamic8, CodeMap::linear4}) {
    const std::vector<float>& values = map == CodeMap::udynamic8 ? magnitudes : spread;
    for (const std::size_t block : {std::size_t{1}, std::size_t{64}, std::size_t{256}, std::size_t{1000}}) {
      SCOPED_TRACE(std::string(to_string(map)) + ", blocks of " + std::to_string(block));
      QuantizedBlocks q;
      ASSERT_TRUE(quantize(values, map, block, q).ok());
      EXPECT_EQ(q.bytes(), quantized_bytes(map, values.size(), block));
      std::vector<float> back(values.size());
      dequantize(q, back);
      double worst = 0.0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        // The block's scale, in double: the reference.
        const std::size_t first = i / block * block;
        double scale = 0.0;
        for (std::size_t k = first; k < std::min(values.size(), first + block); ++k)
          scale = std::max(scale, std::abs(double(values[k])));
        const double error = std::abs(double(back[i]) - values[i]);
        ASSERT_LE(error, error_bound(map, scale, values[i])) << "value " << i << ": " << values[i];
        worst = std::max(worst, error / error_bound(map, scale, values[i]));
        if (values[i] == 0.0f) {
          EXPECT_EQ(back[i], 0.0f);
        }
        if (std::abs(double(values[i])) == scale) {
          EXPECT_NEAR(back[i], values[i], 1e-6 * scale) << "a block's largest value is a level";
        }
      }
      // Blocks of one value are exact (the value is its block's scale); larger ones come near
      // the bound: it is not loose by orders of magnitude.
      if (block > 1) {
        EXPECT_GT(worst, 0.25);
      } else {
        EXPECT_EQ(worst, 0.0);
      }
    }
  }
}

TEST(BlockCodec, DynamicKeepsSmallValuesThatLinearFlushes) {
  // One large value and a thousand small ones in a block: linear8 rounds the small ones to 0,
  // dynamic8 keeps them within 4.5%, udynamic8 within 3.4% and down to 2^-24 of the largest
  // (second moments, squares, span twice the decades of first moments within a block).
  std::vector<float> v(1001, 3e-3f);
  v[0] = 1.0f;
  v[1] = 1e-7f;
  QuantizedBlocks lin, dyn, udyn;
  ASSERT_TRUE(quantize(v, CodeMap::linear8, 1024, lin).ok());
  ASSERT_TRUE(quantize(v, CodeMap::dynamic8, 1024, dyn).ok());
  ASSERT_TRUE(quantize(v, CodeMap::udynamic8, 1024, udyn).ok());
  std::vector<float> a(v.size()), b(v.size()), c(v.size());
  dequantize(lin, a);
  dequantize(dyn, b);
  dequantize(udyn, c);
  EXPECT_EQ(a[2], 0.0f);
  EXPECT_NEAR(b[2], 3e-3, 0.045 * 3e-3);
  EXPECT_NEAR(c[2], 3e-3, 0.034 * 3e-3);
  EXPECT_NEAR(c[1], 1e-7, 0.034 * 1e-7) << "2^-24 is 6e-8: still resolved";
  EXPECT_LE(b[1], 1e-7f + std::exp2(-17.0)) << "below dynamic8's 2^-16: rounded to 0 or its smallest level";
}

TEST(BlockCodec, SizesAreTheCodesAndOneScaleABlock) {
  EXPECT_EQ(quantized_bytes(CodeMap::linear8, 1000, 256), 1000u + 4 * 4);
  EXPECT_EQ(quantized_bytes(CodeMap::dynamic8, 256, 256), 256u + 4);
  EXPECT_EQ(quantized_bytes(CodeMap::udynamic8, 256, 256), 256u + 4);
  EXPECT_EQ(quantized_bytes(CodeMap::linear4, 1001, 64), 501u + 16 * 4);
  // Against fp32's 4 bytes a value: 8-bit at blocks of 256 is 3.94x smaller, 4-bit 7.76x.
  const double fp32 = 4.0 * (1 << 20);
  EXPECT_NEAR(fp32 / double(quantized_bytes(CodeMap::linear8, 1 << 20, 256)), 3.94, 0.01);
  EXPECT_NEAR(fp32 / double(quantized_bytes(CodeMap::linear4, 1 << 20, 256)), 7.76, 0.01);
}

TEST(BlockCodec, NonFiniteValuesAreRefusedNamingTheirIndex) {
  std::vector<float> v(10, 1.0f);
  v[7] = std::numeric_limits<float>::infinity();
  QuantizedBlocks q;
  const Status s = quantize(v, CodeMap::linear8, 4, q);
  EXPECT_EQ(s.code(), StatusCode::non_finite_input);
  EXPECT_NE(s.reason().find("value 7"), std::string::npos) << s.reason();
  v[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(quantize(v, CodeMap::dynamic8, 4, q).code(), StatusCode::non_finite_input);
  EXPECT_EQ(quantize(v, CodeMap::linear4, 0, q).code(), StatusCode::invalid_argument);
  std::vector<float> signed_values{1.0f, -0.5f};
  const Status negative = quantize(signed_values, CodeMap::udynamic8, 4, q);
  EXPECT_EQ(negative.code(), StatusCode::invalid_argument);
  EXPECT_NE(negative.reason().find("value 1 is negative"), std::string::npos) << negative.reason();
}

}  // namespace
}  // namespace asteria::quant
