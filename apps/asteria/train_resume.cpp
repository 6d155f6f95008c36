#include "apps/asteria/train_resume.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "core/run/settings_list.hpp"

namespace asteria::cli {
namespace {

namespace po = boost::program_options;

// The options a resumed run may change, from the settings list once.
std::set<std::string, std::less<>> resumable_names() {
  std::set<std::string, std::less<>> names;
  for (const run::Setting& s : run::all_settings())
    if (s.resumable) names.emplace(s.name);
  return names;
}

// "--steps, --out, ...": every option a resumed run may change.
std::string resumable_list() {
  std::string text;
  for (const run::Setting& s : run::all_settings())
    if (s.resumable && s.name != "resume") text += (text.empty() ? "--" : ", --") + std::string(s.name);
  return text;
}

// Each option of `args` with its values and the tokens that gave it, in order.
std::vector<po::option> parsed(const Args& args, const po::options_description& options, const std::string& source) {
  try {
    return po::command_line_parser(args).options(options).positional({}).run().options;
  } catch (const po::error& e) {
    throw InputError(source, "arguments", e.what());
  }
}

std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : " ") + v;
  return out.empty() ? "(set)" : out;
}

}  // namespace

bool resumable(std::string_view name) { return resumable_names().count(name) != 0; }

Args arguments_to_save(const Args& args, const po::options_description& options) {
  Args out;
  for (const po::option& o : parsed(args, options, "command line"))
    if (o.string_key != "resume") out.insert(out.end(), o.original_tokens.begin(), o.original_tokens.end());
  return out;
}

Args resumed_arguments(const Args& saved, const Args& given, const po::options_description& options,
                       const std::string& checkpoint) {
  const std::vector<po::option> before = parsed(saved, options, checkpoint + " (saved arguments)");
  const std::vector<po::option> now = parsed(given, options, "command line");
  std::map<std::string, std::vector<std::string>> saved_values;
  for (const po::option& o : before) saved_values[o.string_key] = o.value;
  std::set<std::string> given_keys;
  for (const po::option& o : now) given_keys.insert(o.string_key);
  const std::set<std::string, std::less<>> may_change = resumable_names();
  const auto overridable = [&](const std::string& key) { return may_change.count(key) != 0; };
  // The checkpoint's options, less those given anew; --overwrite only counts when given now.
  Args out;
  for (const po::option& o : before)
    if (o.string_key != "overwrite" && (!overridable(o.string_key) || given_keys.count(o.string_key) == 0))
      out.insert(out.end(), o.original_tokens.begin(), o.original_tokens.end());
  for (const po::option& o : now) {
    if (overridable(o.string_key)) {
      if (o.string_key != "resume") out.insert(out.end(), o.original_tokens.begin(), o.original_tokens.end());
      continue;
    }
    const auto it = saved_values.find(o.string_key);
    if (it == saved_values.end() || it->second != o.value)
      throw InputError("command line", "--" + o.string_key,
                       "a resumed run keeps the settings of its checkpoint " + checkpoint + ": " + joined(o.value) +
                           " differs from the checkpoint's " +
                           (it == saved_values.end() ? std::string("default") : joined(it->second)) +
                           " (only " + resumable_list() + " may change)");
  }
  return out;
}

std::string arguments_text(const Args& args) { return nlohmann::json(args).dump(); }

Args parse_arguments_text(const std::string& text, const std::string& source) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) throw InputError(source, "meta.args", "expected a JSON array of strings");
  Args out;
  for (const nlohmann::json& a : j) {
    if (!a.is_string()) throw InputError(source, "meta.args", "expected a JSON array of strings");
    out.push_back(a.get<std::string>());
  }
  return out;
}

}  // namespace asteria::cli
