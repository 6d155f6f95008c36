#include "core/run/option_values.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/common/error.hpp"

namespace asteria::run {

namespace {

struct Unit {
  std::string_view suffix;
  double bytes;
};
// Longest suffixes first, so "MiB" is not read as "B".
constexpr std::array kUnits = {Unit{"KiB", 1024.0},   Unit{"MiB", 1048576.0}, Unit{"GiB", 1073741824.0},
                               Unit{"TiB", 1099511627776.0}, Unit{"KB", 1e3}, Unit{"MB", 1e6},
                               Unit{"GB", 1e9},        Unit{"TB", 1e12},       Unit{"B", 1.0}};

}  // namespace

std::size_t parse_size(std::string_view text, const std::string& option) {
  const std::string expected = "expected a size such as 4096, 2e9, 512MiB or 1.5GB, found '" + std::string(text) + "'";
  double scale = 1.0;
  std::string_view number = text;
  for (const Unit& unit : kUnits)
    if (number.size() > unit.suffix.size() && number.ends_with(unit.suffix)) {
      number.remove_suffix(unit.suffix.size());
      scale = unit.bytes;
      break;
    }
  double value = 0.0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || end != number.data() + number.size() || !(value >= 0.0) || !std::isfinite(value))
    throw InputError(option, "size", expected);
  const double bytes = std::round(value * scale);
  if (bytes > static_cast<double>(std::numeric_limits<std::int64_t>::max()))
    throw InputError(option, "size", "too large: '" + std::string(text) + "'");
  return static_cast<std::size_t>(bytes);
}

std::vector<std::pair<linalg::index, linalg::index>> parse_shapes(std::string_view text, const std::string& option) {
  std::vector<std::pair<linalg::index, linalg::index>> shapes;
  auto parse_dim = [&](std::string_view part, std::string_view item) {
    linalg::index value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size() || value < 1)
      throw InputError(option, "shape", "expected ROWSxCOLS with integers >= 1, found '" + std::string(item) + "'");
    return value;
  };
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const std::size_t x = item.find('x');
    if (x == std::string_view::npos)
      throw InputError(option, "shape", "expected ROWSxCOLS, found '" + std::string(item) + "'");
    shapes.emplace_back(parse_dim(item.substr(0, x), item), parse_dim(item.substr(x + 1), item));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) throw InputError(option, "shape", "expected a shape after the last ','");
  }
  if (shapes.empty()) throw InputError(option, "shape", "expected at least one ROWSxCOLS");
  return shapes;
}

std::uint64_t parse_seed(std::string_view text, const std::string& option) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw InputError("command line", option,
                     "a whole number in [0, 18446744073709551615], found '" + std::string(text) + "'");
  return value;
}

}  // namespace asteria::run
