#pragma once
// UTF-8 checks for text read from files: names and descriptions end up in JSON output, which
// nlohmann::json refuses to write unless it is valid UTF-8, and in YAML that yaml-cpp's emitter
// rewrites unless it is (so a profile would not read back as written).
#include <cstddef>
#include <optional>
#include <string_view>

namespace asteria {

// The offset of the first byte of `text` that does not start a well-formed UTF-8 sequence
// (Unicode table 3-7: no overlong forms, surrogates or code points past U+10FFFF) of a character
// for interchange (no noncharacter: U+FDD0..U+FDEF, U+xFFFE, U+xFFFF); nullopt when there is none.
inline std::optional<std::size_t> utf8_error_at(std::string_view text) noexcept {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    if (lead < 0xC2 || lead > 0xF4) return i;  // a continuation byte, an overlong lead, or past U+10FFFF
    const std::size_t length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    // The range of the second byte (later ones are 0x80..0xBF): it excludes overlong forms,
    // surrogates and code points past U+10FFFF.
    const unsigned char low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    const unsigned char high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    if (text.size() - i < length) return i;
    char32_t code = lead & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      if (byte < (k == 1 ? low : 0x80) || byte > (k == 1 ? high : 0xBF)) return i;
      code = (code << 6) | (byte & 0x3F);
    }
    if ((code >= 0xFDD0 && code <= 0xFDEF) || (code & 0xFFFE) == 0xFFFE) return i;
    i += length;
  }
  return std::nullopt;
}

}  // namespace asteria
