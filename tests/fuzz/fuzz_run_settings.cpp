// The run settings' reader (core/run/run_schema.hpp): the input is lines "name=value"; each
// value given to a setting of that name either is refused with an InputError or reads to a
// value that writes back to text reading to the same value (every codec round-trips), and a
// whole configuration's recorded arguments read back to the same recorded settings.
#include <map>
#include <string>

#include "core/common/error.hpp"
#include "core/run/run_arguments.hpp"
#include "core/run/run_schema.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

using namespace asteria;

// Reads the values of `given` into the configuration it visits; counts what it read.
struct Reader {
  const std::map<std::string, std::string>& given;
  int read = 0;
  template <class T>
  void value(const run::Setting& s, T& value, const run::Codec<T>& codec) {
    const auto it = given.find(std::string(s.name));
    if (it == given.end()) return;
    try {
      T parsed = codec.parse(it->second, "--" + it->first);
      if (const std::optional<std::string> text = codec.format(parsed))
        fuzz::require(codec.parse(*text, "--" + it->first) == parsed, "a value reads back from its own text");
      value = parsed;
      ++read;
    } catch (const InputError&) {
    }
  }
  void flag(const run::Setting& s, bool& value, bool when_given) {
    if (given.count(std::string(s.name)) != 0) value = when_given;
  }
};

// The recorded arguments as name=value pairs (a flag as name=).
std::map<std::string, std::string> pairs_of(const std::vector<std::string>& arguments) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string name = arguments[i].substr(2);
    const bool has_value = i + 1 < arguments.size() && arguments[i + 1].rfind("--", 0) != 0;
    out[name] = has_value ? arguments[++i] : std::string();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  std::map<std::string, std::string> given;
  std::size_t from = 0;
  while (from < text.size()) {
    const std::size_t end = std::min(text.find('\n', from), text.size());
    const std::string_view line = text.substr(from, end - from);
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos) given[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    from = end + 1;
  }
  run::RunConfig config = run::default_run_config(run::RunVerb::train);
  Reader reader{given};
  run::describe_run(reader, config);
  run::describe(reader, config.hp);
  // What a trace records of this configuration reads back to the same recorded arguments.
  const std::vector<std::string> recorded = run::recorded_arguments(config);
  run::RunConfig again = run::default_run_config(run::RunVerb::train);
  const std::map<std::string, std::string> pairs = pairs_of(recorded);
  Reader back{pairs};
  run::describe_run(back, again);
  run::describe(back, again.hp);
  fuzz::require(run::recorded_arguments(again) == recorded, "recorded arguments read back to themselves");
  return 0;
}
