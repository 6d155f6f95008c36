// Study files: validation, grid expansion, run slugs and the sim command line of a run.
#include "apps/asteria/study_spec.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "apps/asteria/study_settings.hpp"
#include "core/common/error.hpp"

namespace asteria::cli::study {
namespace {

using Values = std::map<std::string, std::string, std::less<>>;
using Origins = std::map<std::string, ValueOrigin, std::less<>>;

struct Axis {
  const StudySetting* setting;
  std::vector<std::string> values;
  std::vector<ValueOrigin> origins;  // one per value
};

// Every default given, and where.
struct Defaults {
  Values values;
  Origins origins;
};

constexpr std::array<std::string_view, 5> kTopKeys = {"name", "description", "defaults", "grid", "targets"};

// Each run is a process: a grid beyond this is a mistake (or a few YAML aliases multiplying
// lists), and expanding it would exhaust time and memory before anything ran.
constexpr std::size_t kMaxRuns = 10000;

std::string found_kind(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  return "nothing";
}

std::string key_text(const YAML::Node& key) { return key.IsScalar() ? key.Scalar() : std::string("?"); }

ValueOrigin origin_of(const YAML::Node& node, std::string field) {
  const int line = node.Mark().line;
  return {std::move(field), line >= 0 ? line + 1 : 0};
}

// A run's directory name must not escape the results directory: letters, digits, '.', '-', '_'.
bool safe_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

const StudySetting& known_setting(const YAML::Node& key, const std::string& source, const std::string& parent) {
  const std::string name = key_text(key);
  const StudySetting* setting = find_study_setting(name);
  const std::string field = parent.empty() ? name : parent + "." + name;
  if (name == "mode")
    throw InputError(source, field,
                     "renamed: use numerics: shapes|values instead (data-free is shapes, data-true is values)" +
                         line_suffix(key));
  if (setting == nullptr)
    throw InputError(source, field, "unknown setting; expected one of " + known_settings_list() + line_suffix(key));
  return *setting;
}

Defaults parse_defaults(const YAML::Node& node, const std::string& source, const std::filesystem::path& base_dir) {
  Defaults defaults;
  if (!node.IsMap())
    throw InputError(source, "defaults", "expected a mapping of setting: value, found " + found_kind(node) +
                                             line_suffix(node));
  for (const auto& entry : node) {
    const StudySetting& setting = known_setting(entry.first, source, "defaults");
    const std::string field = "defaults." + setting.key;
    if (entry.second.IsSequence())
      throw InputError(source, field, "expected a single value (lists of values go under grid)" +
                                          line_suffix(entry.second));
    defaults.values[setting.key] = parse_setting_value(entry.second, setting, {source, field, base_dir});
    defaults.origins[setting.key] = origin_of(entry.second, field);
  }
  return defaults;
}

std::vector<Axis> parse_subgrid(const YAML::Node& node, const std::string& field, const std::string& source,
                                const std::filesystem::path& base_dir) {
  if (!node.IsMap() || node.size() == 0)
    throw InputError(source, field, "expected a mapping of axis: [values], found " + found_kind(node) +
                                        line_suffix(node));
  std::vector<Axis> axes;
  for (const auto& entry : node) {
    const StudySetting& setting = known_setting(entry.first, source, field);
    const std::string axis_field = field + "." + setting.key;
    const bool repeated =
        std::any_of(axes.begin(), axes.end(), [&](const Axis& a) { return a.setting == &setting; });
    if (repeated) throw InputError(source, axis_field, "given twice in one sub-grid" + line_suffix(entry.first));
    Axis axis{&setting, {}, {}};
    const YAML::Node& list = entry.second;
    if (list.IsSequence()) {
      if (list.size() == 0)
        throw InputError(source, axis_field, "expected a non-empty list of values" + line_suffix(list));
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string item_field = axis_field + "[" + std::to_string(i) + "]";
        axis.values.push_back(parse_setting_value(list[i], setting, {source, item_field, base_dir}));
        axis.origins.push_back(origin_of(list[i], item_field));
      }
    } else {
      // A single value is a one-point axis.
      axis.values.push_back(parse_setting_value(list, setting, {source, axis_field, base_dir}));
      axis.origins.push_back(origin_of(list, axis_field));
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

void require_core_settings(const std::vector<Axis>& axes, const Defaults& defaults, const YAML::Node& node,
                           const std::string& field, const std::string& source) {
  for (std::string_view key : kCoreSettings) {
    const bool on_axis = std::any_of(axes.begin(), axes.end(), [&](const Axis& a) { return a.setting->key == key; });
    if (!on_axis && defaults.values.count(key) == 0)
      throw InputError(source, field,
                       "missing axis '" + std::string(key) + "' (give it in this sub-grid or under defaults)" +
                           line_suffix(node));
  }
}

// Adds the product of the axis lengths to `runs`; an InputError past kMaxRuns.
void count_runs(const std::vector<Axis>& axes, std::size_t& runs, const YAML::Node& node, const std::string& field,
                const std::string& source) {
  // Stops multiplying past the bound, so that it cannot overflow: "at least" in the message.
  std::size_t product = 1;
  for (const Axis& axis : axes)
    if (product <= kMaxRuns) product *= axis.values.size();
  runs += product;
  if (runs > kMaxRuns)
    throw InputError(source, field,
                     "expected a study of at most " + std::to_string(kMaxRuns) +
                         " runs (a sub-grid gives the product of its axis lengths), found at least " +
                         std::to_string(runs) + " up to this sub-grid" + line_suffix(node));
}

// The cartesian product of `axes` over `defaults`: the first axis varies slowest. The points
// are not named yet; `seen` holds the values of those in `out`.
void expand(const std::vector<Axis>& axes, const Defaults& defaults, std::vector<StudyPoint>& out,
            std::set<Values>& seen) {
  std::vector<std::size_t> index(axes.size(), 0);
  while (true) {
    StudyPoint point{defaults.values, {}, defaults.origins};
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const std::string& key = axes[a].setting->key;
      point.values[key] = axes[a].values[index[a]];
      point.origins[key] = axes[a].origins[index[a]];
    }
    // A point reached by two sub-grids runs once, at its first place.
    if (seen.insert(point.values).second) out.push_back(std::move(point));
    std::size_t a = axes.size();
    while (a > 0) {
      --a;
      if (++index[a] < axes[a].values.size()) break;
      index[a] = 0;
      if (a == 0) return;
    }
    if (axes.empty()) return;
  }
}

std::string slug_of(const Values& values, const std::vector<std::string>& extra_axes) {
  std::string slug;
  auto add = [&](std::string_view key) {
    const auto value = values.find(key);
    if (value == values.end()) return;
    const std::string part = slug_part(*find_study_setting(key), value->second);
    if (part.empty()) return;
    if (!slug.empty()) slug += '_';
    slug += part;
  };
  for (std::string_view key : kCoreSettings) add(key);
  for (const std::string& key : extra_axes) add(key);
  return slug;
}

void name_points(StudySpec& spec, std::vector<StudyPoint> points) {
  std::set<std::string> used;
  for (StudyPoint& point : points) {
    const std::string base = slug_of(point.values, spec.extra_axes);
    // Different paths with one file stem would share a slug: number the later ones.
    std::string slug = base;
    for (int n = 2; used.count(slug) != 0; ++n) {
      slug = base;
      slug += '-';
      slug += std::to_string(n);
    }
    used.insert(slug);
    point.slug = std::move(slug);
    spec.points.push_back(std::move(point));
  }
}

std::string optional_text(const YAML::Node& root, const char* key, const std::string& source) {
  const YAML::Node node = root[key];
  if (!node.IsDefined() || node.IsNull()) return {};
  if (!node.IsScalar()) throw InputError(source, key, "expected text, found " + found_kind(node) + line_suffix(node));
  return node.Scalar();
}

}  // namespace

const ValueOrigin& StudyPoint::origin(std::string_view key) const {
  static const ValueOrigin kNowhere;
  const auto found = origins.find(key);
  return found == origins.end() ? kNowhere : found->second;
}

StudySpec parse_study(std::string_view yaml_text, const std::string& source, const std::filesystem::path& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    throw InputError(source, "yaml", "syntax error at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) throw InputError(source, "yaml", "expected a mapping with keys name and grid at the top level");
  for (const auto& entry : root) {
    const std::string key = key_text(entry.first);
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end())
      throw InputError(source, key, "unknown key; expected one of name, description, defaults, grid, targets" +
                                        line_suffix(entry.first));
  }
  const YAML::Node const_root = root;  // const lookups never insert
  StudySpec spec;
  spec.source = source;
  spec.name = optional_text(const_root, "name", source);
  if (!const_root["name"].IsDefined()) throw InputError(source, "name", "missing; expected the study's name");
  if (!safe_name(spec.name))
    throw InputError(source, "name",
                     "expected a name of letters, digits, '.', '-' and '_' (it names the results directory), found '" +
                         spec.name + "'" + line_suffix(const_root["name"]));
  spec.description = optional_text(const_root, "description", source);

  Defaults defaults;
  if (const YAML::Node node = const_root["defaults"]; node.IsDefined() && !node.IsNull())
    defaults = parse_defaults(node, source, base_dir);

  const YAML::Node grid = const_root["grid"];
  if (!grid.IsDefined()) throw InputError(source, "grid", "missing; expected a list of sub-grids");
  if (!grid.IsSequence() || grid.size() == 0)
    throw InputError(source, "grid", "expected a non-empty list of sub-grids, found " + found_kind(grid) +
                                         line_suffix(grid));
  std::vector<StudyPoint> points;
  std::set<Values> seen;
  std::set<std::string> extra_axes;
  std::size_t runs = 0;
  for (std::size_t g = 0; g < grid.size(); ++g) {
    const std::string field = "grid[" + std::to_string(g) + "]";
    const std::vector<Axis> axes = parse_subgrid(grid[g], field, source, base_dir);
    require_core_settings(axes, defaults, grid[g], field, source);
    count_runs(axes, runs, grid[g], field, source);
    for (const Axis& axis : axes) {
      const bool core = std::find(kCoreSettings.begin(), kCoreSettings.end(), axis.setting->key) != kCoreSettings.end();
      if (!core) extra_axes.insert(axis.setting->key);
    }
    expand(axes, defaults, points, seen);
  }
  // In the study settings' order (study_settings()), whatever order the sub-grids gave them in.
  for (const StudySetting& setting : study_settings())
    if (extra_axes.count(setting.key) != 0) spec.extra_axes.push_back(setting.key);
  name_points(spec, std::move(points));
  if (const YAML::Node node = const_root["targets"]; node.IsDefined() && !node.IsNull())
    spec.targets = parse_targets(node, source, base_dir);
  return spec;
}

StudySpec load_study(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), "file", "expected a readable study file (YAML)");
  std::ostringstream text;
  text << in.rdbuf();
  const std::filesystem::path dir = std::filesystem::absolute(file).parent_path();
  return parse_study(text.str(), file.string(), dir);
}

std::vector<std::string> sim_arguments(const StudyPoint& point, const std::filesystem::path& run_dir) {
  std::vector<std::string> args{"sim"};
  for (const StudySetting& setting : study_settings())
    if (const auto value = point.values.find(setting.key); value != point.values.end())
      append_sim_arguments(setting, value->second, args);
  args.insert(args.end(), {"--out", run_dir.string(), "--no-progress"});
  return args;
}

}  // namespace asteria::cli::study
