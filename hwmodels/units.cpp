#include "hwmodels/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>

#include "core/common/error.hpp"

namespace asteria::hw {
namespace {

struct Unit {
  std::string_view symbol;
  UnitClass unit_class;
  double scale;          // SI per unit, or units per SI when `divides`
  bool divides = false;  // "5 us" = 5 / 1e6 s: one correctly rounded step, equal to 5e-6
  double to_si(double number) const { return divides ? number / scale : number * scale; }
  double from_si(double amount) const { return divides ? amount * scale : amount / scale; }
  double si_size() const { return divides ? 1.0 / scale : scale; }
};

constexpr double kKi = 1024.0;
constexpr std::array kUnits{
    Unit{"B", UnitClass::bytes, 1.0},
    Unit{"KB", UnitClass::bytes, 1e3},
    Unit{"MB", UnitClass::bytes, 1e6},
    Unit{"GB", UnitClass::bytes, 1e9},
    Unit{"TB", UnitClass::bytes, 1e12},
    Unit{"KiB", UnitClass::bytes, kKi},
    Unit{"MiB", UnitClass::bytes, kKi * kKi},
    Unit{"GiB", UnitClass::bytes, kKi * kKi * kKi},
    Unit{"TiB", UnitClass::bytes, kKi * kKi * kKi * kKi},
    Unit{"B/s", UnitClass::bandwidth, 1.0},
    Unit{"KB/s", UnitClass::bandwidth, 1e3},
    Unit{"MB/s", UnitClass::bandwidth, 1e6},
    Unit{"GB/s", UnitClass::bandwidth, 1e9},
    Unit{"TB/s", UnitClass::bandwidth, 1e12},
    Unit{"MiB/s", UnitClass::bandwidth, kKi * kKi},
    Unit{"GiB/s", UnitClass::bandwidth, kKi * kKi * kKi},
    // Network rates are quoted in bits.
    Unit{"Mb/s", UnitClass::bandwidth, 1e6 / 8},
    Unit{"Gb/s", UnitClass::bandwidth, 1e9 / 8},
    Unit{"FLOP/s", UnitClass::flop_rate, 1.0},
    Unit{"MFLOP/s", UnitClass::flop_rate, 1e6},
    Unit{"GFLOP/s", UnitClass::flop_rate, 1e9},
    Unit{"TFLOP/s", UnitClass::flop_rate, 1e12},
    Unit{"PFLOP/s", UnitClass::flop_rate, 1e15},
    Unit{"s", UnitClass::time, 1.0},
    Unit{"ms", UnitClass::time, 1e3, true},
    Unit{"us", UnitClass::time, 1e6, true},
    Unit{"ns", UnitClass::time, 1e9, true},
    Unit{"W", UnitClass::power, 1.0},
    Unit{"kW", UnitClass::power, 1e3},
    Unit{"mW", UnitClass::power, 1e3, true},
};

const Unit* find_unit(std::string_view symbol) {
  for (const Unit& unit : kUnits) {
    if (unit.symbol == symbol) return &unit;
  }
  return nullptr;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string expected_form(UnitClass unit_class) {
  if (unit_class == UnitClass::dimensionless) return "a plain number";
  return std::string(to_string(unit_class)) + " as '<number> <unit>' with unit one of " +
         unit_symbols(unit_class);
}

std::string shortest(double value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

// The amount as `symbol` writes it, when that reads back exactly.
std::optional<std::string> exact_text(double amount, const Unit& unit) {
  std::string text = shortest(unit.from_si(amount));
  if (unit.unit_class != UnitClass::dimensionless) {
    text.push_back(' ');
    text.append(unit.symbol);
  }
  try {
    if (parse_amount(text, unit.unit_class, {}, {}) == amount) return text;
  } catch (const InputError&) {
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(UnitClass unit_class) noexcept {
  switch (unit_class) {
    case UnitClass::bytes: return "a size in bytes";
    case UnitClass::bandwidth: return "a bandwidth";
    case UnitClass::flop_rate: return "a FLOP rate";
    case UnitClass::time: return "a time";
    case UnitClass::power: return "a power";
    case UnitClass::dimensionless: return "a plain number";
  }
  return "an amount";
}

std::string unit_symbols(UnitClass unit_class) {
  std::string symbols;
  for (const Unit& unit : kUnits) {
    if (unit.unit_class != unit_class) continue;
    if (!symbols.empty()) symbols += ", ";
    symbols += unit.symbol;
  }
  return symbols;
}

double parse_amount(std::string_view text, UnitClass expected, const std::string& source,
                    const std::string& field) {
  const std::string_view trimmed = trim(text);
  double number = 0.0;
  const auto [end, status] =
      std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), number);
  if (status != std::errc{} || !std::isfinite(number)) {
    throw InputError(source, field, "expected " + expected_form(expected) + ", found " + quoted(text));
  }
  const std::string_view symbol = trim(trimmed.substr(static_cast<std::size_t>(end - trimmed.data())));
  if (expected == UnitClass::dimensionless) {
    if (!symbol.empty()) {
      throw InputError(source, field,
                       "expected a plain number without unit, found " + quoted(text));
    }
    return number;
  }
  if (symbol.empty()) {
    throw InputError(source, field,
                     "expected " + expected_form(expected) + ", found " + quoted(text) + " without a unit");
  }
  const Unit* unit = find_unit(symbol);
  if (unit == nullptr) {
    throw InputError(source, field,
                     "unknown unit " + quoted(symbol) + "; expected " + expected_form(expected));
  }
  if (unit->unit_class != expected) {
    throw InputError(source, field,
                     "expected " + expected_form(expected) + ", found " + quoted(text) + " (" +
                         std::string(to_string(unit->unit_class)) + ")");
  }
  return unit->to_si(number);
}

std::string format_amount(double amount, UnitClass unit_class, std::string_view unit) {
  if (unit_class == UnitClass::dimensionless) return shortest(amount);
  if (!unit.empty()) {
    const Unit* forced = find_unit(unit);
    if (forced != nullptr && forced->unit_class == unit_class) {
      if (auto text = exact_text(amount, *forced)) return *text;
    }
  }
  // The shortest exact text among the units not larger than the amount, the larger unit on a
  // tie ("55.43 GB/s", not "55430 MB/s"); the SI unit always reads back exactly.
  std::string best;
  double best_size = 0.0;
  for (const Unit& candidate : kUnits) {
    if (candidate.unit_class != unit_class) continue;
    // Bits per second are read (NIC datasheets) but never written: bytes read more plainly.
    if (candidate.symbol.ends_with("b/s")) continue;
    const double size = candidate.si_size();
    if (size != 1.0 && std::fabs(amount) < size) continue;
    const auto text = exact_text(amount, candidate);
    if (!text) continue;
    if (best.empty() || text->size() < best.size() || (text->size() == best.size() && size > best_size)) {
      best = *text;
      best_size = size;
    }
  }
  return best;
}

}  // namespace asteria::hw
