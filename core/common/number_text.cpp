#include "core/common/number_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <system_error>

namespace asteria {

std::string exact_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[64];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  if (error != std::errc{}) throw std::logic_error("exact_number: buffer too small");
  return std::string(text, end);
}

std::string significant(double value, int digits) {
  if (digits < 1 || digits > 17) throw std::invalid_argument("significant: digits must be in 1..17");
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // %g switches to scientific notation exactly when the integer part would need more digits than
  // asked for, so nothing is ever cut off; '#' keeps trailing zeros ("1.70": three digits).
  char text[64];
  std::snprintf(text, sizeof text, "%#.*g", digits, value);
  std::string out(text);
  if (!out.empty() && out.back() == '.') out.pop_back();  // "145." -> "145"
  return out;
}

}  // namespace asteria
