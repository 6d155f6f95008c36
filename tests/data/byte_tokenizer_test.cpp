// Byte-level tokenization: one token per byte, exact round trips for any bytes, and a clear
// InputError for ids outside the vocabulary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/data/byte_tokenizer.hpp"

namespace asteria::data {
namespace {

TEST(ByteTokenizer, EveryByteIsItsOwnToken) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::vector<TokenId> tokens = encode(all);
  ASSERT_EQ(tokens.size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(tokens[static_cast<std::size_t>(b)], b);
}

TEST(ByteTokenizer, RoundTripsArbitraryBytesIncludingInvalidUtf8) {
  // NUL, 0xFF, a lone continuation byte, a truncated 3-byte sequence, an overlong '/', UTF-8 text.
  const std::string text = std::string("a\0b", 3) + "\xFF\x80" + "\xE2\x82" + "\xC0\xAF" + "z\xC3\xA9\n";
  const std::vector<TokenId> tokens = encode(text);
  ASSERT_EQ(tokens.size(), text.size());
  EXPECT_EQ(tokens[1], 0);
  EXPECT_EQ(tokens[3], 255);
  EXPECT_EQ(tokens[4], 128);
  EXPECT_EQ(decode(tokens), text);
  EXPECT_EQ(decode(encode("")), "");
}

TEST(ByteTokenizer, DecodeRejectsIdsOutsideTheVocabulary) {
  const std::vector<TokenId> too_big = {65, 256};
  try {
    decode(too_big);
    FAIL() << "256 was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "tokens");
    EXPECT_EQ(error.field(), "token 1");
    EXPECT_NE(std::string(error.what()).find("256"), std::string::npos) << error.what();
  }
  const std::vector<TokenId> negative = {-1};
  EXPECT_THROW(decode(negative), InputError);
  const std::vector<TokenId> edges = {0, 255};
  EXPECT_EQ(decode(edges), std::string("\0\xFF", 2));
}

}  // namespace
}  // namespace asteria::data
