// The settings a study can give a run: their YAML keys, sim options, value checks and slug tags.
#include "apps/asteria/study_settings.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/common/error.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/runtime/store/store_options.hpp"

namespace asteria::cli::study {
namespace {

enum class Kind {
  name_or_path,
  optimizer,
  placement,
  numerics,
  publish,
  count_or_zero,
  count,
  refresh_sharing,  // owners | replicated
  flag,             // true | false: the bare option when true, nothing when false
  straggler,        // RANK:FACTOR
  schedule,         // horizontal | vertical
  fraction,         // a number in [0, 1)
  tier,             // device | host | nvme
  refresh_site,     // host | device
};

struct SettingInfo {
  Setting setting;
  std::string_view key;
  std::string_view option;
  Kind kind;
  std::string_view slug_tag;  // prefix of the value in a run's slug ("" for the core settings)
};

constexpr std::array<SettingInfo, kSettingCount> kSettings = {{
    {Setting::hw, "hw", "--hw", Kind::name_or_path, ""},
    {Setting::model, "model", "--model", Kind::name_or_path, ""},
    {Setting::optimizer, "optimizer", "--optimizer", Kind::optimizer, ""},
    {Setting::placement, "placement", "--placement", Kind::placement, ""},
    {Setting::staleness, "staleness", "--staleness", Kind::count_or_zero, "s"},
    {Setting::publish, "publish", "--publish", Kind::publish, ""},
    {Setting::steps, "steps", "--steps", Kind::count, "steps"},
    {Setting::warmup_steps, "warmup_steps", "--warmup-steps", Kind::count_or_zero, "warmup"},
    {Setting::numerics, "numerics", "--numerics", Kind::numerics, ""},
    {Setting::precondition_frequency, "precondition_frequency", "--precondition-frequency", Kind::count, "freq"},
    {Setting::max_precond_dim, "max_precond_dim", "--max-precond-dim", Kind::count, "dim"},
    {Setting::units, "units", "--units", Kind::count, "units"},
    {Setting::nodes, "nodes", "--nodes", Kind::count, "nodes"},
    {Setting::refresh_sharing, "refresh_sharing", "--refresh-sharing", Kind::refresh_sharing, ""},
    {Setting::sync_period, "sync_period", "--sync-period", Kind::count, "k"},
    {Setting::shard_state, "shard_state", "--shard-state", Kind::flag, "sharded"},
    {Setting::straggler, "straggler", "--straggler", Kind::straggler, "slow"},
    {Setting::batch, "batch", "--batch", Kind::count, "b"},
    {Setting::schedule, "schedule", "--schedule", Kind::schedule, ""},
    {Setting::micro_batches, "micro_batches", "--micro-batches", Kind::count, "mb"},
    {Setting::defer_fraction, "defer_fraction", "--defer-fraction", Kind::fraction, "defer"},
    {Setting::weights_on, "weights_on", "--weights-on", Kind::tier, "w-"},
    {Setting::gradients_on, "gradients_on", "--gradients-on", Kind::tier, "g-"},
    {Setting::checkpoints_on, "checkpoints_on", "--checkpoints-on", Kind::tier, "ckpt-"},
    {Setting::placement_file, "placement_file", "--placement-file", Kind::name_or_path, "plan-"},
    {Setting::host_workers, "host_workers", "--host-workers", Kind::count, "workers"},
    {Setting::refresh_on, "refresh_on", "--refresh-on", Kind::refresh_site, "refresh-on-"},
}};

// The table is indexed by Setting: every entry must sit at its own enumerator's place.
constexpr bool table_in_setting_order() {
  for (std::size_t i = 0; i < kSettings.size(); ++i)
    if (static_cast<std::size_t>(kSettings[i].setting) != i || kSettings[i].key.empty()) return false;
  return true;
}
static_assert(table_in_setting_order(), "kSettings must list every Setting in enum order");

const SettingInfo& info(Setting s) { return kSettings[static_cast<std::size_t>(s)]; }

// A value that names a file rather than a shipped profile or model: it has a directory part or
// a YAML extension.
bool looks_like_path(const std::string& value) {
  const auto ends_with = [&](std::string_view suffix) {
    return value.size() >= suffix.size() && value.compare(value.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return value.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

std::string whole_number(const std::string& text, long long minimum, const std::string& source,
                         const std::string& field, const std::string& where) {
  const std::string expectation = minimum == 0 ? "expected a whole number >= 0" : "expected a whole number >= 1";
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || value > std::numeric_limits<int>::max())
    throw InputError(source, field, expectation + ", found '" + text + "'" + where);
  if (value < minimum) throw InputError(source, field, expectation + ", found " + text + where);
  return std::to_string(value);
}

// true/false in any case (YAML's booleans), normalized to lower case.
std::string boolean(const std::string& text, const std::string& source, const std::string& field,
                    const std::string& where) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "true" || lower == "false") return lower;
  throw InputError(source, field, "expected true or false, found '" + text + "'" + where);
}

// The most a straggler may be slowed down (asteria sim's own bound).
constexpr double kMaxStragglerFactor = 1000.0;

// RANK:FACTOR, a rank >= 0 and a slowdown factor in [1, 1000], normalized to "3:2.5" (the rank
// without sign or leading zeros, the factor as the shortest decimal that reads back the same).
std::string straggler(const std::string& text, const std::string& source, const std::string& field,
                      const std::string& where) {
  const std::string expectation =
      "expected RANK:FACTOR (a rank >= 0 and a slowdown factor in [1, 1000], e.g. \"3:2.5\"; quote it in YAML), "
      "found '" +
      text + "'" + where;
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) throw InputError(source, field, expectation);
  const std::string rank_text = text.substr(0, colon);
  const std::string factor_text = text.substr(colon + 1);
  long long rank = 0;
  const auto [rank_end, rank_ec] = std::from_chars(rank_text.data(), rank_text.data() + rank_text.size(), rank);
  if (rank_ec != std::errc() || rank_end != rank_text.data() + rank_text.size() || rank < 0 ||
      rank > std::numeric_limits<int>::max())
    throw InputError(source, field, expectation);
  double factor = 0.0;
  const auto [factor_end, factor_ec] =
      std::from_chars(factor_text.data(), factor_text.data() + factor_text.size(), factor);
  if (factor_ec != std::errc() || factor_end != factor_text.data() + factor_text.size() || !std::isfinite(factor) ||
      factor < 1.0 || factor > kMaxStragglerFactor)
    throw InputError(source, field, expectation);
  char buffer[32];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, factor);
  return std::to_string(rank) + ":" + std::string(buffer, written.ptr);
}

}  // namespace

std::string_view key_of(Setting setting) noexcept { return info(setting).key; }
std::string_view option_of(Setting setting) noexcept { return info(setting).option; }

std::optional<Setting> setting_named(std::string_view key) noexcept {
  for (const SettingInfo& s : kSettings)
    if (s.key == key) return s.setting;
  return std::nullopt;
}

std::string known_settings_list() {
  std::string list;
  for (const SettingInfo& s : kSettings) {
    if (!list.empty()) list += ", ";
    list += s.key;
  }
  return list;
}

std::string line_suffix(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? " (line " + std::to_string(mark.line + 1) + ")" : "";
}

std::string parse_setting_value(const YAML::Node& node, Setting setting, const ValueContext& context) {
  const std::string where = line_suffix(node);
  const std::string& field = context.field;
  if (!node.IsScalar() || node.Scalar().empty()) {
    const std::string found = node.IsMap() ? "a mapping" : node.IsSequence() ? "a list" : "nothing";
    throw InputError(context.source, field, "expected a single value, found " + found + where);
  }
  const std::string text = node.Scalar();
  switch (info(setting).kind) {
    case Kind::name_or_path: {
      if (!looks_like_path(text)) return text;
      const std::filesystem::path path(text);
      return path.is_absolute() ? path.lexically_normal().string() : (context.base_dir / path).lexically_normal().string();
    }
    case Kind::optimizer:
      try {
        return std::string(optim::to_string(optim::parse_optimizer_kind(text, context.source)));
      } catch (const InputError&) {
        throw InputError(context.source, field,
                         "expected one of adamw, shampoo, soap, kl-shampoo, muon; found '" + text + "'" + where);
      }
    case Kind::placement:
      try {
        return std::string(runtime::to_string(runtime::parse_placement_policy(text, context.source)));
      } catch (const InputError&) {
        throw InputError(context.source, field, "expected one of device, host, tiered, nvme; found '" + text + "'" + where);
      }
    case Kind::numerics:
      if (text == "shapes" || text == "values") return text;
      throw InputError(context.source, field, "expected shapes or values, found '" + text + "'" + where);
    case Kind::publish:
      if (text == "deterministic" || text == "opportunistic") return text;
      throw InputError(context.source, field, "expected deterministic or opportunistic, found '" + text + "'" + where);
    case Kind::count_or_zero: return whole_number(text, 0, context.source, field, where);
    case Kind::count: return whole_number(text, 1, context.source, field, where);
    case Kind::refresh_sharing:
      if (text == "owners" || text == "replicated") return text;
      throw InputError(context.source, field, "expected owners or replicated, found '" + text + "'" + where);
    case Kind::flag: return boolean(text, context.source, field, where);
    case Kind::straggler: return straggler(text, context.source, field, where);
    case Kind::schedule:
      if (text == "horizontal" || text == "vertical") return text;
      throw InputError(context.source, field, "expected horizontal or vertical, found '" + text + "'" + where);
    case Kind::refresh_site:
      if (text == "host" || text == "device") return text;
      throw InputError(context.source, field, "expected host or device, found '" + text + "'" + where);
    case Kind::tier:
      if (text == "device" || text == "host" || text == "nvme") return text;
      throw InputError(context.source, field, "expected device, host or nvme, found '" + text + "'" + where);
    case Kind::fraction: {
      double value = -1.0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0.0 && value < 1.0))
        throw InputError(context.source, field, "expected a fraction in [0, 1), found '" + text + "'" + where);
      char buffer[32];
      const auto written = std::to_chars(buffer, buffer + sizeof buffer, value);
      return std::string(buffer, written.ptr);
    }
  }
  return text;
}

std::string slug_part(Setting setting, const std::string& value) {
  const Kind kind = info(setting).kind;
  // Deterministic publishing and owned refreshes are the usual cases (asteria sim's defaults):
  // only their alternatives are spelled out.
  if (kind == Kind::publish && value == "deterministic") return {};
  if (kind == Kind::refresh_sharing && value == "owners") return {};
  if (kind == Kind::refresh_site && value == "host") return {};
  // A flag shows as its tag when set ("sharded"), and not at all when not.
  if (kind == Kind::flag) return value == "true" ? std::string(info(setting).slug_tag) : std::string();
  std::string part = value;
  if (kind == Kind::name_or_path && looks_like_path(value)) part = std::filesystem::path(value).stem().string();
  // RANK:FACTOR reads as "slow3x2.5": rank 3 slowed down 2.5 times.
  if (kind == Kind::straggler) std::replace(part.begin(), part.end(), ':', 'x');
  part = std::string(info(setting).slug_tag) + part;
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

void append_sim_arguments(Setting setting, const std::string& value, std::vector<std::string>& args) {
  if (info(setting).kind == Kind::flag) {
    if (value == "true") args.emplace_back(info(setting).option);
    return;
  }
  args.emplace_back(info(setting).option);
  args.push_back(value);
}

}  // namespace asteria::cli::study
