#include <algorithm>
#include <string>

#include <yaml-cpp/yaml.h>

#include "hwmodels/profile_loader.hpp"
#include "hwmodels/profile_schema.hpp"
#include "hwmodels/units.hpp"

namespace asteria::hw {
namespace {

// Emits the fields schema::describe names, in its order.
class Writer {
 public:
  explicit Writer(YAML::Emitter& out) : out_(out) {}

  void text(std::string_view key, std::string& value) {
    out_ << YAML::Key << std::string(key) << YAML::Value;
    if (value.find('\n') != std::string::npos) out_ << YAML::Literal;
    out_ << value;
  }
  void flag(std::string_view key, bool& value) {
    out_ << YAML::Key << std::string(key) << YAML::Value << value;
  }
  // Written even when it holds the default, so a written profile says what it assumes.
  void optional_flag(std::string_view key, bool& value, bool /*fallback*/) { flag(key, value); }
  void quantity(std::string_view key, Quantity& q, schema::Measure measure) {
    out_ << YAML::Key << std::string(key) << YAML::Value << YAML::BeginMap;
    out_ << YAML::Key << "value" << YAML::Value
         << format_amount(q.value, schema::unit_class_of(measure), schema::preferred_unit(measure));
    out_ << YAML::Key << "kind" << YAML::Value << std::string(to_string(q.provenance));
    out_ << YAML::Key << "source" << YAML::Value << q.source;
    out_ << YAML::EndMap;
  }
  // Written even when it holds the default, so a written profile says what it assumes.
  void optional_quantity(std::string_view key, Quantity& q, schema::Measure measure) { quantity(key, q, measure); }
  void device_kind(std::string_view key, DeviceKind& kind) {
    out_ << YAML::Key << std::string(key) << YAML::Value << std::string(to_string(kind));
  }
  template <class DescribeFields>
  void size_classes(std::string_view key, GemmEfficiency&, DescribeFields&& describe_fields) {
    section(key, describe_fields);
  }
  void optional_integer(std::string_view key, int& value, int fallback) {
    if (value != fallback) out_ << YAML::Key << std::string(key) << YAML::Value << value;
  }
  // Written even when it holds the defaults, so a written profile says what it assumes.
  template <class DescribeFields>
  void optional_section(std::string_view key, DescribeFields&& describe_fields) {
    section(key, describe_fields);
  }
  template <class DescribeFields>
  void section(std::string_view key, DescribeFields&& describe_fields) {
    out_ << YAML::Key << std::string(key) << YAML::Value << YAML::BeginMap;
    describe_fields(*this);
    out_ << YAML::EndMap;
  }

 private:
  YAML::Emitter& out_;
};

}  // namespace

std::string profile_to_yaml(const HardwareProfile& profile) {
  HardwareProfile copy = profile;  // describe() visits mutable fields
  YAML::Emitter out;
  out << YAML::BeginMap;
  Writer writer(out);
  schema::describe(writer, copy);
  out << YAML::EndMap;

  std::string origin = profile.origin;
  std::replace(origin.begin(), origin.end(), '\n', ' ');
  std::string text = "# Hardware profile (format: hwmodels/README.md)\n";
  if (!origin.empty()) text += "# origin: " + origin + "\n";
  return text + out.c_str() + "\n";
}

}  // namespace asteria::hw
