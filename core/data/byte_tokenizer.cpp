#include "core/data/byte_tokenizer.hpp"

#include <cstddef>

#include "core/common/error.hpp"

namespace asteria::data {

std::vector<TokenId> encode(std::string_view text) {
  std::vector<TokenId> tokens;
  tokens.reserve(text.size());
  for (const char c : text) tokens.push_back(static_cast<TokenId>(static_cast<unsigned char>(c)));
  return tokens;
}

std::string decode(std::span<const TokenId> tokens) {
  std::string text;
  text.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const TokenId id = tokens[i];
    if (id < 0 || id >= kByteVocabulary) {
      throw InputError("tokens", "token " + std::to_string(i),
                       "expected an id in [0, " + std::to_string(kByteVocabulary) + "), found " +
                           std::to_string(id));
    }
    text.push_back(static_cast<char>(static_cast<unsigned char>(id)));
  }
  return text;
}

}  // namespace asteria::data
