#pragma once
// Byte-level tokenization: every byte is one token (vocabulary 256), so any text, in any
// encoding, round-trips exactly and no vocabulary file is needed.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace asteria::data {

using TokenId = std::int32_t;
inline constexpr int kByteVocabulary = 256;

std::vector<TokenId> encode(std::string_view text);
// Throws InputError("tokens", ...) for an id outside [0, 256).
std::string decode(std::span<const TokenId> tokens);

}  // namespace asteria::data
