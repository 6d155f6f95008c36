#include "hwmodels/profile_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "core/common/error.hpp"
#include "core/common/utf8.hpp"
#include "hwmodels/units.hpp"

namespace asteria::hw::schema {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string expected_quantity(Measure measure) {
  std::string what = std::string(to_string(unit_class_of(measure)));
  switch (measure) {
    case Measure::fraction: what = "a fraction in (0, 1]"; break;
    case Measure::count: what = "a whole number >= 1"; break;
    case Measure::count_or_zero: what = "a whole number >= 0"; break;
    case Measure::slowdown: what = "a slowdown >= 0"; break;
    default: break;
  }
  return "a mapping {value: <" + what + ">, kind: peak|measured|derived, source: \"...\"}";
}

// Physically plausible values: outside these a figure is a typo (a unit or an exponent off), not
// hardware, and would make a simulation run for ages or report nonsense. Wide on purpose, about
// 100x beyond today's parts either way (the shipped and calibrated profiles span 1e10 to 3e13 B,
// 1e9 to 4e12 B/s, 1e10 to 1e15 FLOP/s, 0 to 2 ms, c = 8e-13 to 6e-10 s):
//   bytes        [1 MB, 1 PB]: a GPU, a host memory or an NVMe tier of one unit;
//   bandwidth    [1 MB/s, 100 TB/s]: HBM3e peaks near 8 TB/s, NVLink 5 at 1.8 TB/s per GPU;
//   flop_rate    [1 MFLOP/s, 100 PFLOP/s]: the largest accelerators peak at a few PFLOP/s dense;
//   latency      [0, 1 s]: a launch, a hop or an NVMe access taking a second is a stall;
//   coefficient  [1e-16 s, 1e-6 s] of c·n³ (an eigh or a QR, ~10 n³ flops): 1e-6 s is an
//                n = 1000 eigh taking 1000 s (10 MFLOP/s), 1e-16 s one at ~100 PFLOP/s.
struct Plausible {
  double low = 0.0;
  double high = 0.0;
};

std::optional<Plausible> plausible_range(Measure measure) {
  switch (measure) {
    case Measure::bytes: return Plausible{1e6, 1e15};
    case Measure::bandwidth: return Plausible{1e6, 1e14};
    case Measure::flop_rate: return Plausible{1e6, 1e17};
    case Measure::latency: return Plausible{0.0, 1.0};
    case Measure::coefficient: return Plausible{1e-16, 1e-6};
    default: return std::nullopt;
  }
}

// "a bandwidth in [1 MB/s, 100 TB/s] (beyond is a typo, not hardware)" when `value` (> 0, or
// >= 0 for a latency) lies outside the plausible range of its measure; empty otherwise.
std::string implausible(double value, Measure measure) {
  const std::optional<Plausible> range = plausible_range(measure);
  if (!range || (value >= range->low && value <= range->high)) return "";
  const UnitClass unit_class = unit_class_of(measure);
  return std::string(to_string(unit_class)) + " in [" +
         format_amount(range->low, unit_class, preferred_unit(measure)) + ", " +
         format_amount(range->high, unit_class, preferred_unit(measure)) + "] (beyond is a typo, not hardware)";
}

// The range a measure allows; empty when `value` is in it.
std::string range_violation(double value, Measure measure) {
  const bool whole = std::floor(value) == value && value <= std::numeric_limits<int>::max();
  switch (measure) {
    case Measure::bytes:
    case Measure::bandwidth:
    case Measure::flop_rate:
    case Measure::coefficient:
      // "a positive" + the class name without its article ("a bandwidth" -> "bandwidth").
      return value > 0.0 ? implausible(value, measure)
                         : "a positive " + std::string(to_string(unit_class_of(measure)).substr(2));
    case Measure::latency: return value >= 0.0 ? implausible(value, measure) : "a time >= 0";
    case Measure::fraction: return value > 0.0 && value <= 1.0 ? "" : "a fraction in (0, 1]";
    case Measure::count: return whole && value >= 1.0 ? "" : "a whole number >= 1";
    case Measure::count_or_zero: return whole && value >= 0.0 ? "" : "a whole number >= 0";
    // Beyond 10 (a core 11x slower beside busy ones) is a typo, not a machine.
    case Measure::slowdown: return value >= 0.0 && value <= 10.0 ? "" : "a slowdown in [0, 10]";
    // A part drawing past 100 kW is a typo (a whole DGX H100 draws 10.2 kW at most).
    case Measure::power: return value >= 0.0 && value <= 1e5 ? "" : "a power in [0 W, 100 kW]";
  }
  return "";
}

Provenance parse_kind(const std::string& kind, const std::string& source, const std::string& field) {
  if (kind == "peak") return Provenance::peak;
  if (kind == "measured") return Provenance::measured;
  if (kind == "derived") return Provenance::derived;
  throw InputError(source, field, "expected one of peak, measured, derived; found '" + kind + "'");
}

}  // namespace

Reader::Reader(YAML::Node node, std::string path, const std::string& source)
    : node_(std::move(node)), path_(std::move(path)), source_(source) {}

std::string Reader::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

InputError Reader::error(std::string_view key, const std::string& expectation) const {
  return InputError(source_, field(key), expectation);
}

YAML::Node Reader::required(std::string_view key, const std::string& what) {
  known_keys_.emplace_back(key);
  const YAML::Node& self = node_;  // const lookup never inserts
  YAML::Node node = self[std::string(key)];
  if (!node.IsDefined()) throw error(key, "missing; expected " + what);
  return node;
}

void Reader::text(std::string_view key, std::string& out) {
  const YAML::Node node = required(key, "a non-empty string");
  out = node.IsScalar() ? trimmed(node.Scalar()) : std::string();
  if (out.empty()) throw error(key, "expected a non-empty string");
  if (const auto at = utf8_error_at(out))
    throw error(key, "expected UTF-8 text, found an invalid byte sequence at byte " + std::to_string(*at + 1));
}

void Reader::flag(std::string_view key, bool& out) {
  const YAML::Node node = required(key, "true or false");
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, out)) {
    throw error(key, "expected true or false");
  }
}

void Reader::optional_flag(std::string_view key, bool& out, bool fallback) {
  known_keys_.emplace_back(key);
  const YAML::Node& self = node_;
  if (!self[std::string(key)].IsDefined()) {
    out = fallback;
    return;
  }
  flag(key, out);
}

void Reader::quantity(std::string_view key, Quantity& out, Measure measure) {
  read_quantity(required(key, expected_quantity(measure)), field(key), out, measure);
}

void Reader::optional_quantity(std::string_view key, Quantity& out, Measure measure) {
  known_keys_.emplace_back(key);
  const YAML::Node& self = node_;
  const YAML::Node node = self[std::string(key)];
  if (node.IsDefined()) read_quantity(node, field(key), out, measure);
}

void Reader::read_quantity(const YAML::Node& node, const std::string& name, Quantity& out, Measure measure) const {
  if (!node.IsMap()) throw InputError(source_, name, "expected " + expected_quantity(measure));
  Reader fields(node, name, source_);
  std::string value_text;
  std::string kind_text;
  fields.text("value", value_text);
  fields.text("kind", kind_text);
  fields.text("source", out.source);
  fields.reject_unknown_keys();
  out.value = parse_amount(value_text, unit_class_of(measure), source_, name);
  if (const std::string range = range_violation(out.value, measure); !range.empty()) {
    throw InputError(source_, name, "expected " + range + ", found '" + value_text + "'");
  }
  out.provenance = parse_kind(kind_text, source_, name + ".kind");
}

void Reader::device_kind(std::string_view key, DeviceKind& out) {
  known_keys_.emplace_back(key);
  const YAML::Node& self = node_;
  const YAML::Node node = self[std::string(key)];
  if (!node.IsDefined()) {
    out = DeviceKind::gpu;
    return;
  }
  const std::string text = node.IsScalar() ? trimmed(node.Scalar()) : std::string("(not a word)");
  if (text == "gpu") out = DeviceKind::gpu;
  else if (text == "cpu") out = DeviceKind::cpu;
  else throw error(key, "expected gpu or cpu, found '" + text + "'");
}

void Reader::optional_integer(std::string_view key, int& out, int fallback) {
  const YAML::Node& self = node_;
  known_keys_.emplace_back(key);
  const YAML::Node node = self[std::string(key)];
  if (!node.IsDefined()) {
    out = fallback;
    return;
  }
  const std::string text = node.IsScalar() ? node.Scalar() : std::string();
  const double value = parse_amount(text, UnitClass::dimensionless, source_, field(key));
  if (const std::string range = range_violation(value, Measure::count); !range.empty()) {
    throw error(key, "expected " + range + ", found '" + text + "'");
  }
  out = static_cast<int>(value);
}

void Reader::reject_unknown_keys() const {
  std::set<std::string> seen;
  for (const auto& entry : node_) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string("?");
    if (std::find(known_keys_.begin(), known_keys_.end(), key) == known_keys_.end()) {
      std::string expected;
      for (const std::string& known : known_keys_) expected += (expected.empty() ? "" : ", ") + known;
      throw error(key, "unknown key; expected one of " + expected);
    }
    if (!seen.insert(key).second) throw error(key, "appears twice; expected each key once");
  }
}

}  // namespace asteria::hw::schema
