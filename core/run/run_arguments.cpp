#include "core/run/run_arguments.hpp"

#include "core/run/run_schema.hpp"

namespace asteria::run {
namespace {

struct ArgumentWriter {
  RunVerb verb;
  std::vector<std::string> arguments;

  template <class T>
  void value(const Setting& s, T& value, const Codec<T>& codec) {
    if (!s.recorded || !s.taken_by(verb)) return;
    if (const std::optional<std::string> text = codec.format(value)) {
      arguments.push_back("--" + std::string(s.name));
      arguments.push_back(*text);
    }
  }
  void flag(const Setting& s, bool& value, bool when_given) {
    if (s.recorded && s.taken_by(verb) && value == when_given) arguments.push_back("--" + std::string(s.name));
  }
};

struct ValueWriter {
  RunVerb verb;
  bool planned_only = false;
  std::vector<std::pair<std::string, std::string>> values;

  template <class T>
  void value(const Setting& s, T& value, const Codec<T>& codec) {
    if (!s.taken_by(verb) || (planned_only && !s.planned)) return;
    if (const std::optional<std::string> text = codec.format(value)) values.emplace_back(std::string(s.name), *text);
  }
  void flag(const Setting& s, bool& value, bool when_given) {
    if (s.taken_by(verb) && (!planned_only || s.planned))
      values.emplace_back(std::string(s.name), value == when_given ? "true" : "false");
  }
};

}  // namespace

std::vector<std::pair<std::string, std::string>> setting_values(const RunConfig& config) {
  RunConfig copy = config;
  ValueWriter writer{config.verb, false, {}};
  describe_run(writer, copy);
  describe(writer, copy.hp);
  return writer.values;
}

std::vector<std::pair<std::string, std::string>> planned_values(const RunConfig& config) {
  RunConfig copy = config;
  ValueWriter writer{config.verb, true, {}};
  describe_run(writer, copy);
  describe(writer, copy.hp);
  return writer.values;
}

std::vector<std::string> recorded_arguments(const RunConfig& config) {
  RunConfig copy = config;  // the visitors take what they describe by reference
  ArgumentWriter writer{config.verb, {}};
  describe_run(writer, copy);
  describe(writer, copy.hp);
  return writer.arguments;
}

}  // namespace asteria::run
