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

}  // namespace

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
