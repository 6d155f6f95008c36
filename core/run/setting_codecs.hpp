#pragma once
// The codecs of the run settings' value types (setting.hpp): integers and numbers with their
// ranges, names of enumerations, sizes, seeds, paths, step ranges and stragglers.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/error.hpp"

#include "core/run/setting.hpp"

namespace asteria::run::codec {

// A whole number >= minimum.
Codec<int> integer(int minimum);
Codec<std::int64_t> long_integer(std::int64_t minimum);
Codec<std::optional<int>> optional_integer(int minimum);
// Any finite number (the optimizer's own checks bound hyperparameters).
Codec<double> number();
// A finite number > 0, or >= 0.
Codec<double> positive_number();
Codec<double> non_negative_number();
Codec<std::optional<double>> optional_positive_number();
Codec<std::optional<double>> optional_non_negative_number();
Codec<std::optional<std::int64_t>> optional_long_integer(std::int64_t minimum);
// A number in [0, 1).
Codec<double> fraction_below_one();
// true | false.
Codec<bool> boolean();
// Two words for a bool: `yes` reads true, `no` false.
Codec<bool> either(std::string yes, std::string no);
// A name of an enumeration, read and written by its own functions.
template <class E>
Codec<E> name(std::function<E(const std::string& text, const std::string& option)> parse,
              std::function<std::string_view(E)> format) {
  return {std::move(parse), [format = std::move(format)](const E& e) { return std::optional<std::string>(format(e)); }};
}
// One of a few words, each standing for a value: "expected eigen or coupled-newton, found 'x'".
template <class E>
Codec<E> words(std::vector<std::pair<std::string, E>> table) {
  return {[table](const std::string& text, const std::string& option) {
            std::string known;
            for (std::size_t i = 0; i < table.size(); ++i) {
              if (table[i].first == text) return table[i].second;
              known += (i == 0 ? "" : i + 1 == table.size() ? " or " : ", ") + table[i].first;
            }
            throw InputError("command line", option, "expected " + known + ", found '" + text + "'");
          },
          [table](const E& value) {
            for (const auto& [word, e] : table)
              if (e == value) return std::optional<std::string>(word);
            return std::optional<std::string>();
          }};
}
// An enumeration's values by their own names (the to_string of its namespace): words() of
// {to_string(v), v}.
template <class E>
Codec<E> named(std::initializer_list<E> values) {
  std::vector<std::pair<std::string, E>> table;
  for (E value : values) table.emplace_back(std::string(to_string(value)), value);
  return words<E>(std::move(table));
}
// Bytes >= minimum: "512MiB", "1.5GB", "4096"; written exactly ("8GiB", "1000000").
Codec<std::size_t> size(std::size_t minimum = 1);
// A seed: a whole number in [0, 2^64).
Codec<std::uint64_t> seed();
Codec<std::optional<std::string>> text();
Codec<std::optional<std::filesystem::path>> path();
// FIRST:LAST, steps >= 1 with FIRST <= LAST.
Codec<std::optional<std::pair<std::int64_t, std::int64_t>>> step_range();
// ROWSxCOLS,ROWSxCOLS,... (integers >= 1); an empty list writes nothing.
Codec<std::vector<std::pair<std::int64_t, std::int64_t>>> shapes();
// RANK:FACTOR, a rank >= 0 and a factor in [1, 1000]; rank -1 (none) writes nothing.
Codec<Straggler> straggler();

// "FIRST:LAST" (1-based steps, FIRST <= LAST); InputError naming `option` otherwise.
std::pair<std::int64_t, std::int64_t> parse_step_range(const std::string& text, const std::string& option);

}  // namespace asteria::run::codec
