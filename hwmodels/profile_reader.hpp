#pragma once
// Reads one mapping of a profile document, field by field, as schema::describe asks, and checks
// each value; every failure is an InputError naming the source and the dotted field path.
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/common/error.hpp"

#include "hwmodels/profile.hpp"
#include "hwmodels/profile_schema.hpp"

namespace asteria::hw::schema {

class Reader {
 public:
  Reader(YAML::Node node, std::string path, const std::string& source);

  void text(std::string_view key, std::string& out);
  void flag(std::string_view key, bool& out);
  // Absent: `out` = fallback.
  void optional_flag(std::string_view key, bool& out, bool fallback);
  void quantity(std::string_view key, Quantity& out, Measure measure);
  // Absent: `out` keeps the value it has (the field's default).
  void optional_quantity(std::string_view key, Quantity& out, Measure measure);
  void optional_integer(std::string_view key, int& out, int fallback);
  // Optional "gpu" or "cpu"; absent: gpu.
  void device_kind(std::string_view key, DeviceKind& out);

  template <class DescribeFields>
  void section(std::string_view key, DescribeFields&& describe_fields) {
    read_section(required(key, "a mapping"), key, describe_fields);
  }

  // A section a profile may leave out: its fields then keep their defaults.
  template <class DescribeFields>
  void optional_section(std::string_view key, DescribeFields&& describe_fields) {
    known_keys_.emplace_back(key);
    const YAML::Node& self = node_;
    const YAML::Node node = self[std::string(key)];
    if (node.IsDefined()) read_section(node, key, describe_fields);
  }

  // A mapping of one quantity per size class, or (as older profiles write it) one quantity that
  // then holds for every class, its source saying so.
  template <class DescribeFields>
  void size_classes(std::string_view key, GemmEfficiency& out, DescribeFields&& describe_fields) {
    std::string names;
    for (std::string_view name : GemmEfficiency::kNames) names += (names.empty() ? "" : ", ") + std::string(name);
    const YAML::Node node = required(key, "a mapping of the size classes " + names + " (or one quantity for all)");
    if (node.IsMap() && static_cast<const YAML::Node&>(node)["value"].IsDefined()) {
      Quantity every_class;
      read_quantity(node, field(key), every_class, Measure::fraction);
      every_class.source = "one figure for every size class: " + every_class.source;
      out = every_class;
      return;
    }
    read_section(node, key, describe_fields);
  }

  // Typo protection: every key of the mapping must be one the schema asked for, once.
  void reject_unknown_keys() const;

 private:
  std::string field(std::string_view key) const;
  InputError error(std::string_view key, const std::string& expectation) const;
  YAML::Node required(std::string_view key, const std::string& what);
  void read_quantity(const YAML::Node& node, const std::string& name, Quantity& out, Measure measure) const;

  template <class DescribeFields>
  void read_section(const YAML::Node& node, std::string_view key, DescribeFields& describe_fields) {
    if (!node.IsMap()) throw error(key, "expected a mapping of fields");
    Reader fields(node, field(key), source_);
    describe_fields(fields);
    fields.reject_unknown_keys();
  }

  YAML::Node node_;
  std::string path_;
  const std::string& source_;
  std::vector<std::string> known_keys_;
};

}  // namespace asteria::hw::schema
