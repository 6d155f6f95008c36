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
  void quantity(std::string_view key, Quantity& out, Measure measure);
  void optional_integer(std::string_view key, int& out, int fallback);

  template <class DescribeFields>
  void section(std::string_view key, DescribeFields&& describe_fields) {
    const YAML::Node node = required(key, "a mapping");
    if (!node.IsMap()) throw error(key, "expected a mapping of fields");
    Reader fields(node, field(key), source_);
    describe_fields(fields);
    fields.reject_unknown_keys();
  }

  // Typo protection: every key of the mapping must be one the schema asked for, once.
  void reject_unknown_keys() const;

 private:
  std::string field(std::string_view key) const;
  InputError error(std::string_view key, const std::string& expectation) const;
  YAML::Node required(std::string_view key, const std::string& what);

  YAML::Node node_;
  std::string path_;
  const std::string& source_;
  std::vector<std::string> known_keys_;
};

}  // namespace asteria::hw::schema
