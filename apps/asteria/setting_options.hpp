#pragma once
// Command-line options from the settings list (core/run/run_schema.hpp): OptionsBuilder adds one
// option per setting a verb takes, with its help and default; OptionsReader reads the given ones
// back through the setting's codec, so every value is checked where it is read and a bad one is
// an error naming its option.
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "apps/asteria/options.hpp"
#include "core/run/setting.hpp"

namespace asteria::cli {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

class OptionsBuilder {
 public:
  // `verb`: only the settings it takes (none: all). `show_defaults`: the values described are
  // the defaults (false for hyperparameters, whose defaults follow the optimizer).
  // `keep`: which of them go into `out` (none given: all).
  OptionsBuilder(po::options_description& out, std::optional<run::RunVerb> verb, bool show_defaults,
                 std::function<bool(const run::Setting&)> keep = {})
      : out_(out), verb_(verb), show_defaults_(show_defaults), keep_(std::move(keep)) {}

  template <class T>
  void value(const run::Setting& s, T& value, const run::Codec<T>& codec) {
    if (!takes(s)) return;
    const std::string name(s.name);
    std::string help(s.help);
    auto* semantic = po::value<std::string>()->value_name(std::string(s.value_name));
    if (show_defaults_) {
      if (const std::optional<std::string> text = codec.format(value)) {
        // An optional setting keeps "not given" apart from its default: said, not stored.
        if constexpr (IsOptional<T>::value) help += " (default: " + *text + ")";
        else semantic->default_value(*text);
      }
    }
    out_.add_options()(name.c_str(), semantic, help.c_str());
  }

  void flag(const run::Setting& s, bool& /*value*/, bool /*when_given*/) {
    if (!takes(s)) return;
    const std::string name(s.name);
    out_.add_options()(name.c_str(), std::string(s.help).c_str());
  }

 private:
  bool takes(const run::Setting& s) const { return (!verb_ || s.taken_by(*verb_)) && (!keep_ || keep_(s)); }

  po::options_description& out_;
  std::optional<run::RunVerb> verb_;
  bool show_defaults_;
  std::function<bool(const run::Setting&)> keep_;
};

class OptionsReader {
 public:
  OptionsReader(const po::variables_map& values, std::optional<run::RunVerb> verb) : values_(values), verb_(verb) {}

  template <class T>
  void value(const run::Setting& s, T& value, const run::Codec<T>& codec) {
    const std::string name(s.name);
    if ((verb_ && !s.taken_by(*verb_)) || values_.count(name) == 0) return;
    value = codec.parse(values_[name].as<std::string>(), "--" + name);
  }

  void flag(const run::Setting& s, bool& value, bool when_given) {
    const std::string name(s.name);
    if ((verb_ && !s.taken_by(*verb_)) || values_.count(name) == 0) return;
    value = when_given;
  }

 private:
  const po::variables_map& values_;
  std::optional<run::RunVerb> verb_;
};

}  // namespace asteria::cli
