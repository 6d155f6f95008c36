#include "hwmodels/profile_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/common/error.hpp"
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
    default: break;
  }
  return "a mapping {value: <" + what + ">, kind: peak|measured|derived, source: \"...\"}";
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
      return value > 0.0 ? "" : "a positive " + std::string(to_string(unit_class_of(measure)).substr(2));
    case Measure::latency: return value >= 0.0 ? "" : "a time >= 0";
    case Measure::fraction: return value > 0.0 && value <= 1.0 ? "" : "a fraction in (0, 1]";
    case Measure::count: return whole && value >= 1.0 ? "" : "a whole number >= 1";
    case Measure::count_or_zero: return whole && value >= 0.0 ? "" : "a whole number >= 0";
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
}

void Reader::flag(std::string_view key, bool& out) {
  const YAML::Node node = required(key, "true or false");
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, out)) {
    throw error(key, "expected true or false");
  }
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
