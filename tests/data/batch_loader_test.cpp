// BatchLoader: windows of sequence_length + 1 bytes at seeded offsets, counter-based determinism,
// and in-order validation windows covering the stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/common/error.hpp"
#include "core/data/batch_loader.hpp"

namespace asteria::data {
namespace {

std::vector<std::uint8_t> random_stream(std::size_t size, unsigned seed) {
  std::mt19937 engine(seed);
  std::vector<std::uint8_t> stream(size);
  for (auto& byte : stream) byte = static_cast<std::uint8_t>(engine() & 0xFF);
  return stream;
}

// The offset of `window` in the stream, or -1 when it is not a substring.
long offset_of(const std::vector<std::uint8_t>& stream, const TokenId* window, std::size_t length) {
  std::vector<std::uint8_t> bytes(length);
  for (std::size_t t = 0; t < length; ++t) {
    if (window[t] < 0 || window[t] > 255) return -1;
    bytes[t] = static_cast<std::uint8_t>(window[t]);
  }
  const auto it = std::search(stream.begin(), stream.end(), bytes.begin(), bytes.end());
  return it == stream.end() ? -1 : static_cast<long>(it - stream.begin());
}

TEST(BatchLoader, BatchesAreWindowsOfTheStream) {
  const auto stream = random_stream(5000, 1);
  BatchLoader loader(stream, 8, 32, 42);
  EXPECT_EQ(loader.batch(), 8);
  EXPECT_EQ(loader.sequence_length(), 32);
  std::vector<TokenId> out;
  for (int k = 0; k < 20; ++k) {
    loader.next(out);
    ASSERT_EQ(out.size(), 8u * 33u);
    for (std::size_t row = 0; row < 8; ++row) {
      const TokenId* window = out.data() + row * 33;
      // Inputs are window[0, 32), targets window[1, 33): the target of position t is the stream
      // byte right after the input at t, which holds when the whole window is a substring.
      const long offset = offset_of(stream, window, 33);
      ASSERT_GE(offset, 0) << "batch " << k << " row " << row;
      EXPECT_LE(offset, 5000 - 33);
    }
  }
  EXPECT_EQ(loader.batches_drawn(), 20u);
}

TEST(BatchLoader, OffsetsCoverTheWholeRangeEvenly) {
  // 20 bytes, windows of 5: starts 0..15. Distinct byte values make the offset readable.
  std::vector<std::uint8_t> stream(20);
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<std::uint8_t>(100 + i);
  BatchLoader loader(stream, 8, 4, 9);
  std::vector<int> counts(16, 0);
  std::vector<TokenId> out;
  for (int k = 0; k < 200; ++k) {
    loader.next(out);
    for (std::size_t row = 0; row < 8; ++row) {
      const int offset = out[row * 5] - 100;
      ASSERT_GE(offset, 0);
      ASSERT_LE(offset, 15);
      for (int t = 1; t < 5; ++t) ASSERT_EQ(out[row * 5 + static_cast<std::size_t>(t)], 100 + offset + t);
      ++counts[static_cast<std::size_t>(offset)];
    }
  }
  // 1600 draws over 16 offsets: 100 expected each, standard deviation about 10.
  for (int offset = 0; offset < 16; ++offset) {
    EXPECT_GT(counts[static_cast<std::size_t>(offset)], 50) << "offset " << offset;
    EXPECT_LT(counts[static_cast<std::size_t>(offset)], 150) << "offset " << offset;
  }
}

TEST(BatchLoader, TheKthBatchDependsOnlyOnSeedAndK) {
  const auto stream = random_stream(3000, 2);
  BatchLoader a(stream, 4, 16, 5);
  BatchLoader b(stream, 4, 16, 5);
  std::vector<std::vector<TokenId>> batches(6);
  for (auto& batch : batches) a.next(batch);
  std::vector<TokenId> out;
  int in_order = 0;
  for (int k = 0; k < 6; ++k) {
    b.next_in_order(out, in_order);  // validation passes in between do not disturb training batches
    b.next(out);
    EXPECT_EQ(out, batches[static_cast<std::size_t>(k)]) << "batch " << k;
  }
  BatchLoader c(stream, 4, 16, 5);
  c.seek(4);
  c.next(out);
  EXPECT_EQ(out, batches[4]);
  c.seek(1);
  c.next(out);
  EXPECT_EQ(out, batches[1]);
  EXPECT_NE(batches[0], batches[1]);

  BatchLoader other_seed(stream, 4, 16, 6);
  other_seed.next(out);
  EXPECT_NE(out, batches[0]);
}

TEST(BatchLoader, RejectsShortStreamsAndEmptyShapes) {
  const std::vector<std::uint8_t> stream(10, 7);
  EXPECT_THROW(BatchLoader(stream, 1, 10, 1), InputError);  // needs 11 bytes
  EXPECT_NO_THROW(BatchLoader(stream, 1, 9, 1));
  EXPECT_THROW(BatchLoader(stream, 0, 4, 1), InputError);
  EXPECT_THROW(BatchLoader(stream, 2, 0, 1), InputError);
  EXPECT_THROW(BatchLoader(std::span<const std::uint8_t>(), 1, 1, 1), InputError);
  // The only window of a stream of exactly sequence_length + 1 bytes.
  BatchLoader exact(stream, 3, 9, 1);
  std::vector<TokenId> out;
  exact.next(out);
  EXPECT_EQ(out, std::vector<TokenId>(30, 7));
}

TEST(BatchLoader, InOrderWindowsCoverTheStreamOnce) {
  // 23 bytes, sequence_length 4: windows start at 0, 4, 8, 12, 16 (16 + 5 <= 23; 20 + 5 > 23).
  std::vector<std::uint8_t> stream(23);
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<std::uint8_t>(i);
  BatchLoader loader(stream, 2, 4, 1);
  std::vector<TokenId> out;
  int sequences = -1;
  std::vector<int> starts;
  std::vector<int> target_uses(23, 0);
  const auto collect = [&] {
    EXPECT_EQ(out.size(), static_cast<std::size_t>(sequences) * 5u);
    for (int s = 0; s < sequences; ++s) {
      const TokenId* window = out.data() + s * 5;
      starts.push_back(window[0]);
      for (int t = 0; t < 5; ++t) EXPECT_EQ(window[t], window[0] + t);
      for (int t = 1; t < 5; ++t) ++target_uses[static_cast<std::size_t>(window[t])];
    }
  };
  EXPECT_TRUE(loader.next_in_order(out, sequences));
  EXPECT_EQ(sequences, 2);
  collect();
  EXPECT_TRUE(loader.next_in_order(out, sequences));
  EXPECT_EQ(sequences, 2);
  collect();
  EXPECT_FALSE(loader.next_in_order(out, sequences));
  EXPECT_EQ(sequences, 1);
  collect();
  EXPECT_EQ(starts, (std::vector<int>{0, 4, 8, 12, 16}));
  // Bytes 1..20 are each predicted once; 0 is never a target, 21 and 22 are in no full window.
  for (int i = 0; i < 23; ++i) EXPECT_EQ(target_uses[static_cast<std::size_t>(i)], (i >= 1 && i <= 20) ? 1 : 0) << i;

  EXPECT_FALSE(loader.next_in_order(out, sequences));
  EXPECT_EQ(sequences, 0);
  EXPECT_TRUE(out.empty());
  loader.rewind_in_order();
  EXPECT_TRUE(loader.next_in_order(out, sequences));
  EXPECT_EQ(out[0], 0);
}

TEST(BatchLoader, InOrderEndsWithAnEmptyCallWhenBatchesDivideTheWindows) {
  // 17 bytes, sequence_length 4: windows at 0, 4, 8, 12 (12 + 5 = 17), two batches of two.
  const std::vector<std::uint8_t> stream(17, 1);
  BatchLoader loader(stream, 2, 4, 1);
  std::vector<TokenId> out;
  int sequences = 0;
  EXPECT_TRUE(loader.next_in_order(out, sequences));
  EXPECT_TRUE(loader.next_in_order(out, sequences));
  EXPECT_EQ(sequences, 2);
  EXPECT_FALSE(loader.next_in_order(out, sequences));
  EXPECT_EQ(sequences, 0);
}

}  // namespace
}  // namespace asteria::data
