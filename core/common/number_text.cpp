#include "core/common/number_text.hpp"

#include <charconv>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  if (value == 0.0) return "0";
  // The exponent after rounding: 99999.4 at 3 digits is 1.00e+05.
  char text[64];
  std::snprintf(text, sizeof text, "%.*e", digits - 1, value);
  const int exponent = std::atoi(std::strchr(text, 'e') + 1);
  if (exponent < -4 || exponent >= std::max(digits, 5)) return text;
  std::snprintf(text, sizeof text, "%.*f", std::max(0, digits - 1 - exponent), value);
  return text;
}

}  // namespace asteria
