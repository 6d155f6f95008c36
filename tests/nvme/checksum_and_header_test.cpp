// The block file's checksum (XXH64) against the algorithm's published reference values, and the
// header's layout and self-check.
#include <gtest/gtest.h>

#include <cstring>
#include <string_view>

#include "core/real/nvme/block_header.hpp"
#include "core/io/xxhash64.hpp"
#include "tests/nvme/nvme_test_support.hpp"

namespace {

using asteria::real::BlockHeader;
using asteria::real::kBlockHeaderBytes;
using asteria::io::Xxh64;
using asteria::io::xxh64;

std::span<const std::byte> bytes_of(std::string_view text) { return std::as_bytes(std::span(text.data(), text.size())); }

TEST(Xxh64, MatchesPublishedReferenceValues) {
  EXPECT_EQ(xxh64(bytes_of("")), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(xxh64(bytes_of("a")), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(xxh64(bytes_of("abc")), 0x44BC2CF5AD770999ULL);
  // 39 bytes: one 32-byte stripe, then the 4-byte and 1-byte tails.
  EXPECT_EQ(xxh64(bytes_of("Nobody inspects the spammish repetition")), 0xFBCEA83C8A378BF1ULL);
  EXPECT_NE(xxh64(bytes_of("abc"), 1), xxh64(bytes_of("abc"), 0));
}

TEST(Xxh64, StreamingInAnyPiecesEqualsOneShot) {
  const auto data = asteria::testing::pattern(10'000, 3);
  const std::uint64_t whole = xxh64(data);
  for (std::size_t piece : {1U, 7U, 31U, 32U, 33U, 4096U, 9999U}) {
    Xxh64 hasher;
    for (std::size_t at = 0; at < data.size(); at += piece)
      hasher.update(std::span(data).subspan(at, std::min(piece, data.size() - at)));
    EXPECT_EQ(hasher.digest(), whole) << "pieces of " << piece;
  }
}

TEST(Xxh64, EverySingleBitFlipChangesTheDigest) {
  auto data = asteria::testing::pattern(257, 5);
  const std::uint64_t original = xxh64(data);
  for (std::size_t i = 0; i < data.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      data[i] ^= static_cast<std::byte>(1 << bit);
      ASSERT_NE(xxh64(data), original) << "byte " << i << " bit " << bit;
      data[i] ^= static_cast<std::byte>(1 << bit);
    }
}

TEST(BlockHeader, LayoutIsLittleEndianAtTheDocumentedOffsets) {
  std::vector<std::byte> block(kBlockHeaderBytes, std::byte{0x5A});
  const BlockHeader header{0x0102030405060708ULL, 123456789ULL, 0xA1B2C3D4E5F60718ULL};
  asteria::real::encode_header(header, std::span<std::byte, kBlockHeaderBytes>(block.data(), kBlockHeaderBytes));
  EXPECT_EQ(std::memcmp(block.data(), "ASTNVME1", 8), 0);
  EXPECT_EQ(asteria::testing::read_le64(block, 8) & 0xFFFFFFFFU, 1U);           // version
  EXPECT_EQ(asteria::testing::read_le64(block, 8) >> 32, kBlockHeaderBytes);    // payload offset
  EXPECT_EQ(asteria::testing::read_le64(block, 16), header.id);
  EXPECT_EQ(asteria::testing::read_le64(block, 24), header.payload_bytes);
  EXPECT_EQ(asteria::testing::read_le64(block, 32), header.payload_checksum);
  EXPECT_EQ(asteria::testing::read_le64(block, 40), xxh64(std::span(block).first(40)));
  for (std::size_t i = 48; i < block.size(); ++i) ASSERT_EQ(block[i], std::byte{0}) << "offset " << i;
}

TEST(BlockHeader, DecodesWhatWasEncodedAndRejectsAnyChangedByte) {
  std::vector<std::byte> block(kBlockHeaderBytes);
  const auto span = std::span<std::byte, kBlockHeaderBytes>(block.data(), kBlockHeaderBytes);
  const BlockHeader header{42, 1U << 20, 0x1234};
  asteria::real::encode_header(header, span);
  BlockHeader decoded;
  std::string problem;
  ASSERT_TRUE(asteria::real::decode_header(span, decoded, problem)) << problem;
  EXPECT_EQ(decoded.id, 42U);
  EXPECT_EQ(decoded.payload_bytes, 1U << 20);
  EXPECT_EQ(decoded.payload_checksum, 0x1234U);
  for (std::size_t i = 0; i < 48; ++i) {
    block[i] ^= std::byte{0x01};
    EXPECT_FALSE(asteria::real::decode_header(span, decoded, problem)) << "byte " << i;
    EXPECT_FALSE(problem.empty());
    block[i] ^= std::byte{0x01};
  }
  block[0] = std::byte{'X'};
  ASSERT_FALSE(asteria::real::decode_header(span, decoded, problem));
  EXPECT_NE(problem.find("magic"), std::string::npos) << problem;
}

}  // namespace
