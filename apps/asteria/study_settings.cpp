// The settings a study can give a run: asteria sim's, read from the one settings list, each
// checked and normalized by its own codec; and how a run's name shows their values.
#include "apps/asteria/study_settings.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <type_traits>

#include "core/common/error.hpp"
#include "core/run/run_schema.hpp"
#include "core/run/settings_list.hpp"

namespace asteria::cli::study {
namespace {

// Collects the settings of asteria sim that a study may give: not those of the run's output.
struct Collector {
  std::vector<StudySetting> settings;

  static bool takes(const run::Setting& s) { return s.taken_by(run::RunVerb::sim) && !s.output; }

  static StudySetting described(const run::Setting& s) {
    StudySetting out;
    out.name = std::string(s.name);
    out.key = out.name;
    std::replace(out.key.begin(), out.key.end(), '-', '_');
    out.option = "--" + out.name;
    out.file_value = s.file_value;
    return out;
  }

  template <class T>
  void value(const run::Setting& s, T&, const run::Codec<T>&) {
    if (!takes(s)) return;
    StudySetting setting = described(s);
    setting.word_value = std::is_enum_v<T>;
    settings.push_back(std::move(setting));
  }

  void flag(const run::Setting& s, bool&, bool) {
    if (!takes(s)) return;
    StudySetting setting = described(s);
    setting.flag = true;
    settings.push_back(std::move(setting));
  }
};

// How a run's name shows a setting: its tag before the value, and a usual value it leaves out.
// Settings not listed show their name before a number, their word alone, a switch's name when
// set; these keep the short names studies have always used.
struct SlugStyle {
  std::string_view key;
  std::string_view tag;
  std::string_view unshown;  // the usual value (sim's default), left out of the name
};
constexpr std::array<SlugStyle, 29> kSlugStyles = {{
    {"hw", "", ""},
    {"model", "", ""},
    {"optimizer", "", ""},
    {"placement", "", ""},
    {"staleness", "s", ""},
    {"publish", "", "deterministic"},
    {"steps", "steps", ""},
    {"warmup_steps", "warmup", ""},
    {"numerics", "", ""},
    {"precondition_frequency", "freq", ""},
    {"max_precond_dim", "dim", ""},
    {"units", "units", ""},
    {"nodes", "nodes", ""},
    {"refresh_sharing", "", "owners"},
    {"sync_period", "k", ""},
    {"parallelism", "", "ddp"},
    {"straggler", "slow", ""},
    {"batch", "b", ""},
    {"schedule", "", ""},
    {"micro_batches", "mb", ""},
    {"defer_fraction", "defer", ""},
    {"prefetch_depth", "pf", ""},
    {"reshard", "reshard-", "after-use"},
    {"weights_on", "w-", ""},
    {"gradients_on", "g-", ""},
    {"checkpoints_on", "ckpt-", ""},
    {"placement_file", "plan-", ""},
    {"host_workers", "workers", ""},
    {"refresh_on", "refresh-on-", "host"},
}};

std::vector<StudySetting> collect_study_settings() {
  run::RunConfig config = run::default_run_config(run::RunVerb::sim);
  Collector c;
  run::describe_run(c, config);
  run::describe(c, config.hp);
  // The settings with a slug style first, in its order (the core ones lead it; studies' run names
  // and table columns keep their order), then the others in the schema's.
  std::vector<StudySetting> ordered;
  for (const SlugStyle& style : kSlugStyles) {
    const auto found =
        std::find_if(c.settings.begin(), c.settings.end(), [&](const StudySetting& s) { return s.key == style.key; });
    if (found == c.settings.end()) continue;
    ordered.push_back(*found);
    c.settings.erase(found);
  }
  ordered.insert(ordered.end(), c.settings.begin(), c.settings.end());
  return ordered;
}

const SlugStyle* slug_style(std::string_view key) {
  const auto found = std::find_if(kSlugStyles.begin(), kSlugStyles.end(), [&](const SlugStyle& s) { return s.key == key; });
  return found == kSlugStyles.end() ? nullptr : &*found;
}

// A value that names a file rather than a shipped profile or model: it has a directory part or
// a YAML extension.
bool looks_like_path(const std::string& value) {
  const auto ends_with = [&](std::string_view suffix) {
    return value.size() >= suffix.size() && value.compare(value.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return value.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

}  // namespace

const std::vector<StudySetting>& study_settings() {
  static const std::vector<StudySetting> settings = collect_study_settings();
  return settings;
}

const StudySetting* find_study_setting(std::string_view key) {
  const std::vector<StudySetting>& all = study_settings();
  const auto found = std::find_if(all.begin(), all.end(), [&](const StudySetting& s) { return s.key == key; });
  return found == all.end() ? nullptr : &*found;
}

std::string known_settings_list() {
  std::string list;
  for (const StudySetting& s : study_settings()) {
    if (!list.empty()) list += ", ";
    list += s.key;
  }
  return list;
}

std::string line_suffix(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? " (line " + std::to_string(mark.line + 1) + ")" : "";
}

std::string parse_setting_value(const YAML::Node& node, const StudySetting& setting, const ValueContext& context) {
  const std::string where = line_suffix(node);
  const std::string& field = context.field;
  if (!node.IsScalar() || node.Scalar().empty()) {
    const std::string found = node.IsMap() ? "a mapping" : node.IsSequence() ? "a list" : "nothing";
    throw InputError(context.source, field, "expected a single value, found " + found + where);
  }
  const std::string text = node.Scalar();
  if (setting.file_value && looks_like_path(text)) {
    const std::filesystem::path path(text);
    return path.is_absolute() ? path.lexically_normal().string() : (context.base_dir / path).lexically_normal().string();
  }
  // A switch takes YAML's booleans in any case.
  std::string given = text;
  if (setting.flag) {
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "true" || lower == "false") given = lower;
  }
  try {
    return *run::normalized_value(setting.name, given);
  } catch (const InputError& e) {
    throw InputError(context.source, field, e.expectation() + where);
  }
}

std::string slug_part(const StudySetting& setting, const std::string& value) {
  const SlugStyle* style = slug_style(setting.key);
  if (style != nullptr && !style->unshown.empty() && value == style->unshown) return {};
  std::string name = setting.key;
  std::replace(name.begin(), name.end(), '_', '-');
  // A switch shows as its tag (or name) when set, and not at all when not.
  if (setting.flag) return value == "true" ? std::string(style != nullptr ? style->tag : name) : std::string();
  std::string part = value;
  if (setting.file_value && looks_like_path(value)) part = std::filesystem::path(value).stem().string();
  // RANK:FACTOR reads as "slow3x2.5": rank 3 slowed down 2.5 times.
  std::replace(part.begin(), part.end(), ':', 'x');
  if (style != nullptr) {
    part = std::string(style->tag) + part;
  } else if (!setting.word_value) {
    const bool number = !part.empty() && (std::isdigit(static_cast<unsigned char>(part.front())) != 0);
    part = name + (number ? "" : "-") + part;
  }
  // Keep directory names portable and free of separators.
  std::replace_if(
      part.begin(), part.end(),
      [](char c) {
        const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                          c == '.';
        return !safe;
      },
      '-');
  return part;
}

void append_sim_arguments(const StudySetting& setting, const std::string& value, std::vector<std::string>& args) {
  if (setting.flag) {
    if (value == "true") args.push_back(setting.option);
    return;
  }
  args.push_back(setting.option);
  args.push_back(value);
}

}  // namespace asteria::cli::study
