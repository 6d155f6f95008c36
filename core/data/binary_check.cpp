#include "core/data/binary_check.hpp"

#include "core/common/utf8.hpp"

namespace asteria::data {
namespace {

bool suspicious_control(unsigned char byte) noexcept {
  if (byte == 0x7F) return true;  // DEL
  if (byte >= 0x20) return false;
  // Tab, newline, vertical tab, form feed, carriage return; escape starts terminal colours in logs.
  return byte != '\t' && byte != '\n' && byte != 0x0B && byte != 0x0C && byte != '\r' && byte != 0x1B;
}

// Bytes of the UTF-8 sequence a lead byte starts (0: not a lead byte).
std::size_t sequence_length(unsigned char lead) noexcept {
  if (lead < 0xC2 || lead > 0xF4) return 0;
  return lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

}  // namespace

bool looks_binary(std::string_view head) noexcept {
  std::size_t suspicious = 0;
  std::size_t i = 0;
  while (i < head.size()) {
    const auto byte = static_cast<unsigned char>(head[i]);
    if (byte < 0x80) {
      if (suspicious_control(byte)) ++suspicious;
      ++i;
      continue;
    }
    const std::size_t length = sequence_length(byte);
    if (length != 0 && i + length > head.size()) break;  // cut by the end of the head
    if (length != 0 && !utf8_error_at(head.substr(i, length))) {
      i += length;
      continue;
    }
    ++suspicious;
    ++i;
  }
  return static_cast<double>(suspicious) > kMaxSuspiciousShare * static_cast<double>(head.size());
}

}  // namespace asteria::data
