#include "core/platform/cost_text.hpp"

#include <charconv>
#include <cmath>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"

namespace asteria::platform {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

double parse_amount(std::string_view text, const std::string& source, const std::string& field) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) || value < 0.0)
    throw InputError(source, field, "a finite number >= 0, found \"" + std::string(text) + "\"");
  return value;
}

}  // namespace

WorkKind parse_work_kind(std::string_view text, const std::string& source, const std::string& field) {
  for (WorkKind kind : {WorkKind::gemm, WorkKind::eigh, WorkKind::qr, WorkKind::newton, WorkKind::elementwise,
                        WorkKind::other})
    if (to_string(kind) == text) return kind;
  throw InputError(source, field,
                   "a work kind (gemm, eigh, qr, newton, elementwise, other), found \"" + std::string(text) + "\"");
}

std::string to_text(const Cost& c) {
  std::string text = std::string(to_string(c.kind)) + '/' + exact_number(c.flops) + '/' + exact_number(c.bytes) + '/' +
                     std::to_string(c.dimension);
  if (c.reduced_precision) text += "/reduced";
  return text;
}

std::string to_text(const Costs& cost) {
  if (cost.empty()) return "-";
  std::string text;
  for (const Cost& piece : cost.pieces()) {
    if (!text.empty()) text += ';';
    text += to_text(piece);
  }
  return text;
}

Costs parse_costs(std::string_view text, const std::string& source, const std::string& field) {
  Costs cost;
  if (text == "-") return cost;
  for (std::string_view piece : split(text, ';')) {
    const std::vector<std::string_view> f = split(piece, '/');
    if (f.size() != 4 && !(f.size() == 5 && f[4] == "reduced"))
      throw InputError(source, field, "pieces as kind/flops/bytes/dimension[/reduced], found \"" + std::string(piece) + "\"");
    Cost c;
    c.kind = parse_work_kind(f[0], source, field);
    c.flops = parse_amount(f[1], source, field);
    c.bytes = parse_amount(f[2], source, field);
    const double dimension = parse_amount(f[3], source, field);
    if (dimension != std::floor(dimension))
      throw InputError(source, field, "an integer dimension, found \"" + std::string(f[3]) + "\"");
    // Past 2^63 the conversion below is undefined.
    if (dimension >= 0x1p63)
      throw InputError(source, field, "a dimension below 2^63, found \"" + std::string(f[3]) + "\"");
    c.dimension = static_cast<std::int64_t>(dimension);
    c.reduced_precision = f.size() == 5;
    cost.add(c);
  }
  return cost;
}

}  // namespace asteria::platform
