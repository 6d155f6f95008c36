#include "core/run/setting_codecs.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/run/option_values.hpp"

namespace asteria::run::codec {
namespace {

constexpr const char* kSource = "command line";

template <class Int>
Int whole(const std::string& text, const std::string& option, Int minimum) {
  Int value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < minimum)
    throw InputError(kSource, option,
                     "expected an integer >= " + std::to_string(minimum) + ", found '" + text + "'");
  return value;
}

double finite(const std::string& text, const std::string& option) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
    throw InputError(kSource, option, "expected a finite number, found '" + text + "'");
  return value;
}

std::string size_text(std::size_t bytes) {
  if (bytes != 0 && bytes % (std::size_t{1} << 30) == 0) return std::to_string(bytes >> 30) + "GiB";
  if (bytes != 0 && bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes != 0 && bytes % (std::size_t{1} << 10) == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes);
}

}  // namespace

Codec<int> integer(int minimum) {
  return {[minimum](const std::string& t, const std::string& o) { return whole<int>(t, o, minimum); },
          [](const int& v) { return std::optional<std::string>(std::to_string(v)); }};
}

Codec<std::int64_t> long_integer(std::int64_t minimum) {
  return {[minimum](const std::string& t, const std::string& o) { return whole<std::int64_t>(t, o, minimum); },
          [](const std::int64_t& v) { return std::optional<std::string>(std::to_string(v)); }};
}

Codec<std::optional<int>> optional_integer(int minimum) {
  return {[minimum](const std::string& t, const std::string& o) { return std::optional<int>(whole<int>(t, o, minimum)); },
          [](const std::optional<int>& v) { return v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt; }};
}

Codec<double> number() {
  return {finite, [](const double& v) { return std::optional<std::string>(exact_number(v)); }};
}

namespace {
// A finite number with a lower bound (> bound when strict, else >=).
double bounded(const std::string& t, const std::string& o, double bound, bool strict) {
  const double v = finite(t, o);
  if (strict ? !(v > bound) : !(v >= bound))
    throw InputError(kSource, o, std::string("expected a number ") + (strict ? "> " : ">= ") + exact_number(bound) +
                                     ", found '" + t + "'");
  return v;
}
std::optional<std::string> number_text(const double& v) { return exact_number(v); }
std::optional<std::string> optional_number_text(const std::optional<double>& v) {
  return v ? std::optional<std::string>(exact_number(*v)) : std::nullopt;
}
}  // namespace

Codec<double> positive_number() {
  return {[](const std::string& t, const std::string& o) { return bounded(t, o, 0.0, true); }, number_text};
}

Codec<double> non_negative_number() {
  return {[](const std::string& t, const std::string& o) { return bounded(t, o, 0.0, false); }, number_text};
}

Codec<std::optional<double>> optional_positive_number() {
  return {[](const std::string& t, const std::string& o) { return std::optional<double>(bounded(t, o, 0.0, true)); },
          optional_number_text};
}

Codec<std::optional<double>> optional_non_negative_number() {
  return {[](const std::string& t, const std::string& o) { return std::optional<double>(bounded(t, o, 0.0, false)); },
          optional_number_text};
}

Codec<std::optional<std::int64_t>> optional_long_integer(std::int64_t minimum) {
  return {[minimum](const std::string& t, const std::string& o) {
            return std::optional<std::int64_t>(whole<std::int64_t>(t, o, minimum));
          },
          [](const std::optional<std::int64_t>& v) {
            return v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt;
          }};
}

Codec<std::vector<std::pair<std::int64_t, std::int64_t>>> shapes() {
  using Shapes = std::vector<std::pair<std::int64_t, std::int64_t>>;
  return {[](const std::string& t, const std::string& o) {
            try {
              Shapes out;
              for (const auto& [rows, cols] : parse_shapes(t, o)) out.emplace_back(rows, cols);
              return out;
            } catch (const InputError& e) {
              throw InputError(kSource, o, e.expectation());
            }
          },
          [](const Shapes& v) {
            if (v.empty()) return std::optional<std::string>();
            std::string text;
            for (const auto& [rows, cols] : v) {
              if (!text.empty()) text += ',';
              text += std::to_string(rows);
              text += 'x';
              text += std::to_string(cols);
            }
            return std::optional<std::string>(text);
          }};
}

Codec<double> fraction_below_one() {
  return {[](const std::string& t, const std::string& o) {
            const double v = finite(t, o);
            if (!(v >= 0.0 && v < 1.0)) throw InputError(kSource, o, "expected a fraction in [0, 1), found '" + t + "'");
            return v;
          },
          [](const double& v) { return std::optional<std::string>(exact_number(v)); }};
}

Codec<bool> boolean() { return either("true", "false"); }

Codec<bool> either(std::string yes, std::string no) {
  return {[yes, no](const std::string& t, const std::string& o) {
            if (t == yes) return true;
            if (t == no) return false;
            throw InputError(kSource, o, "expected " + yes + " or " + no + ", found '" + t + "'");
          },
          [yes, no](const bool& v) { return std::optional<std::string>(v ? yes : no); }};
}

Codec<std::size_t> size(std::size_t minimum) {
  return {[minimum](const std::string& t, const std::string& o) {
            const std::size_t bytes = parse_size(t, o);
            if (bytes < minimum)
              throw InputError(kSource, o, "expected a size >= " + size_text(minimum) + ", found '" + t + "'");
            return bytes;
          },
          [](const std::size_t& v) { return std::optional<std::string>(size_text(v)); }};
}

Codec<std::uint64_t> seed() {
  return {[](const std::string& t, const std::string& o) { return parse_seed(t, o); },
          [](const std::uint64_t& v) { return std::optional<std::string>(std::to_string(v)); }};
}

Codec<std::optional<std::string>> text() {
  return {[](const std::string& t, const std::string&) { return std::optional<std::string>(t); },
          [](const std::optional<std::string>& v) { return v; }};
}

Codec<std::optional<std::filesystem::path>> path() {
  return {[](const std::string& t, const std::string& o) {
            if (t.empty()) throw InputError(kSource, o, "expected a path, found an empty one");
            return std::optional<std::filesystem::path>(t);
          },
          [](const std::optional<std::filesystem::path>& v) {
            return v ? std::optional<std::string>(v->string()) : std::nullopt;
          }};
}

std::pair<std::int64_t, std::int64_t> parse_step_range(const std::string& text, const std::string& option) {
  const std::size_t colon = text.find(':');
  auto read = [&](std::string_view part, std::int64_t& out) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), out);
    return error == std::errc{} && end == part.data() + part.size() && out >= 1;
  };
  std::int64_t first = 0, last = 0;
  if (colon == std::string::npos || !read(std::string_view(text).substr(0, colon), first) ||
      !read(std::string_view(text).substr(colon + 1), last) || last < first)
    throw InputError(option, option, "expected FIRST:LAST, steps >= 1 with FIRST <= LAST, found \"" + text + "\"");
  return {first, last};
}

Codec<std::optional<std::pair<std::int64_t, std::int64_t>>> step_range() {
  return {[](const std::string& t, const std::string& o) {
            return std::optional<std::pair<std::int64_t, std::int64_t>>(parse_step_range(t, o));
          },
          [](const std::optional<std::pair<std::int64_t, std::int64_t>>& v) {
            return v ? std::optional<std::string>(std::to_string(v->first) + ":" + std::to_string(v->second))
                     : std::nullopt;
          }};
}

Codec<Straggler> straggler() {
  return {[](const std::string& t, const std::string& o) {
            const std::string expectation =
                "expected RANK:FACTOR (a rank >= 0 and a slowdown factor in [1, 1000], e.g. 3:2.5), found '" + t + "'";
            const std::size_t colon = t.find(':');
            if (colon == std::string::npos) throw InputError(kSource, o, expectation);
            Straggler s;
            const std::string rank = t.substr(0, colon), factor = t.substr(colon + 1);
            const auto [rank_end, rank_error] = std::from_chars(rank.data(), rank.data() + rank.size(), s.rank);
            const auto [factor_end, factor_error] = std::from_chars(factor.data(), factor.data() + factor.size(), s.factor);
            if (rank.empty() || rank_error != std::errc{} || rank_end != rank.data() + rank.size() || factor.empty() ||
                factor_error != std::errc{} || factor_end != factor.data() + factor.size())
              throw InputError(kSource, o, expectation);
            if (s.rank < 0 || !(s.factor >= 1.0 && s.factor <= 1000.0)) throw InputError(kSource, o, expectation);
            return s;
          },
          [](const Straggler& s) {
            return s.rank < 0 ? std::nullopt
                              : std::optional<std::string>(std::to_string(s.rank) + ":" + exact_number(s.factor));
          }};
}

}  // namespace asteria::run::codec
