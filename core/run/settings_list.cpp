#include "core/run/settings_list.hpp"

#include "core/run/run_schema.hpp"

namespace asteria::run {
namespace {

struct Collector {
  std::vector<Setting> settings;
  template <class T>
  void value(const Setting& s, T&, const Codec<T>&) {
    settings.push_back(s);
  }
  void flag(const Setting& s, bool&, bool) { settings.push_back(s); }
};

// Reads and writes back the text of one named setting.
struct Normalizer {
  std::string_view name;
  const std::string& text;
  std::optional<std::string> result;
  template <class T>
  void value(const Setting& s, T&, const Codec<T>& codec) {
    if (s.name == name) result = codec.format(codec.parse(text, "--" + std::string(s.name))).value_or(text);
  }
  void flag(const Setting& s, bool&, bool) {
    if (s.name != name) return;
    if (text != "true" && text != "false")
      throw InputError("command line", "--" + std::string(s.name), "expected true or false, found '" + text + "'");
    result = text;
  }
};

// Reads each value's own text back through its codec.
struct RangeCheck {
  template <class T>
  void value(const Setting& s, T& value, const Codec<T>& codec) {
    if (const std::optional<std::string> text = codec.format(value)) (void)codec.parse(*text, "--" + std::string(s.name));
  }
  void flag(const Setting&, bool&, bool) {}
};

}  // namespace

void check_ranges(const RunConfig& config) {
  RunConfig copy = config;  // the visitors take what they describe by reference
  RangeCheck check;
  describe_run(check, copy);
  describe(check, copy.hp);
}

std::optional<std::string> normalized_value(std::string_view name, const std::string& text) {
  RunConfig config;
  Normalizer n{name, text, std::nullopt};
  describe_run(n, config);
  describe(n, config.hp);
  return n.result;
}

std::vector<Setting> all_settings() {
  RunConfig config;
  Collector c;
  describe_run(c, config);
  describe(c, config.hp);
  return c.settings;
}

std::optional<Setting> find_setting(std::string_view name) {
  for (const Setting& s : all_settings())
    if (s.name == name) return s;
  return std::nullopt;
}

}  // namespace asteria::run
