// Checking a study's runs before any starts: what `asteria sim` would refuse, found up front.
#include "apps/asteria/study_validation.hpp"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <string>

#include "apps/asteria/run_config_options.hpp"
#include "apps/asteria/sim_verb.hpp"
#include "apps/asteria/study_settings.hpp"
#include "core/common/error.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/workload/model_config.hpp"
#include "hwmodels/profile_loader.hpp"

namespace asteria::cli::study {
namespace {

using Key = std::array<std::optional<std::string>, 3>;  // the settings one check depends on

std::string at_line(const ValueOrigin& origin) {
  return origin.line > 0 ? " (line " + std::to_string(origin.line) + ")" : "";
}

std::optional<int> whole_number(const std::optional<std::string>& value) {
  if (!value) return std::nullopt;
  return std::stoi(*value);  // the parser has checked it
}

// The setting whose value the underlying error is about (`named` is its key or its sim option),
// when the point gives it; otherwise `fallback`.
const ValueOrigin& origin_named(const StudyPoint& point, const std::string& named, std::string_view fallback) {
  for (const auto& [key, value] : point.values) {
    const StudySetting* setting = find_study_setting(key);
    if (setting != nullptr && (named == setting->key || named == setting->option)) return point.origin(key);
  }
  return point.origin(fallback);
}

class Checker {
 public:
  explicit Checker(const StudySpec& spec) : spec_(spec) {}

  void check(const StudyPoint& point) {
    const hw::HardwareProfile* profile = check_profile(point);
    check_model(point);
    if (profile != nullptr) check_units(point, *profile);
    check_settings(point);
  }

  std::vector<RunProblem> take_problems() { return std::move(problems_); }

 private:
  void add(const ValueOrigin& origin, const std::string& expectation, const Error& cause) {
    add(origin, expectation, std::string(cause.what()));
  }
  void add(const ValueOrigin& origin, const std::string& expectation, const std::string& cause) {
    problems_.push_back({origin.field, expectation + at_line(origin) + ": " + cause});
  }

  // The point's profile, loaded once per distinct value; nullptr when it does not load.
  const hw::HardwareProfile* check_profile(const StudyPoint& point) {
    auto found = profiles_.find(point.hw());
    if (found == profiles_.end()) {
      std::optional<hw::HardwareProfile> profile;
      try {
        profile = hw::load_profile(hw::find_profile(point.hw()));
      } catch (const Error& e) {
        add(point.origin("hw"), "expected a hardware profile that loads", e);
      }
      found = profiles_.emplace(point.hw(), std::move(profile)).first;
    }
    return found->second ? &*found->second : nullptr;
  }

  void check_model(const StudyPoint& point) {
    if (!models_.insert(point.model()).second) return;
    try {
      workload::find_model_config(point.model());
    } catch (const Error& e) {
      add(point.origin("model"), "expected a model config that loads", e);
    }
  }

  void check_units(const StudyPoint& point, const hw::HardwareProfile& profile) {
    const auto units = point["units"];
    const auto nodes = point["nodes"];
    const Key key{point.hw(), units, nodes};
    auto found = unit_counts_.find(key);
    if (found == unit_counts_.end()) {
      std::optional<UnitCount> count;
      try {
        count = resolve_unit_count(whole_number(units), whole_number(nodes), profile.units_per_node(), profile.name);
      } catch (const InputError& e) {
        std::string expectation = "expected units and nodes that agree on profile " + profile.name;
        if (units && nodes)
          expectation += " (units " + point.origin("units").field + ", nodes " + point.origin("nodes").field + ")";
        add(origin_named(point, e.field(), "hw"), expectation, e);
      }
      found = unit_counts_.emplace(key, count).first;
    }
    if (found->second) check_straggler(point, *found->second);
  }

  // A straggler's rank is one of the run's units (ranks 0 .. units-1).
  void check_straggler(const StudyPoint& point, const UnitCount& count) {
    const auto straggler = point["straggler"];
    if (!straggler) return;
    const int rank = std::stoi(straggler->substr(0, straggler->find(':')));  // the parser has checked it
    if (rank < count.units) return;
    if (!stragglers_.insert({*straggler, count.units}).second) return;
    const ValueOrigin& origin = point.origin("straggler");
    problems_.push_back({origin.field, "expected a straggler rank below the run's " + std::to_string(count.units) +
                                           " unit(s) (ranks 0-" + std::to_string(count.units - 1) + " on " +
                                           point.hw() + "), found rank " + std::to_string(rank) + at_line(origin)});
  }

  // The run's settings read and checked together as asteria sim reads them (the optimizer's
  // hyperparameters with what the point sets, placement with schedule, ...).
  void check_settings(const StudyPoint& point) {
    std::vector<std::string> args = sim_arguments(point, "run");
    args.erase(args.begin());  // "sim"
    if (!settings_.insert(args).second) return;
    try {
      po::variables_map values;
      po::store(po::command_line_parser(args).options(sim_options_).positional({}).run(), values);
      po::notify(values);
      validate(read_run_config(RunVerb::sim, values));
    } catch (const InputError& e) {
      // The setting at fault and what it needs, without the command line's name for the source.
      const std::string what = "settings that asteria sim accepts together, with optimizer " + point.optimizer();
      add(origin_named(point, e.field(), "optimizer"), "expected " + what, e.field() + ": " + e.expectation());
    } catch (const po::error& e) {
      add(point.origin("optimizer"), "expected settings that asteria sim reads", std::string(e.what()));
    }
  }

  const StudySpec& spec_;
  std::vector<RunProblem> problems_;
  std::map<std::string, std::optional<hw::HardwareProfile>> profiles_;
  std::set<std::string> models_;
  std::map<Key, std::optional<UnitCount>> unit_counts_;
  std::set<std::pair<std::string, int>> stragglers_;  // (straggler, units) already reported
  std::set<std::vector<std::string>> settings_;  // the sim arguments already checked
  const po::options_description sim_options_ = run_config_options(RunVerb::sim);
};

}  // namespace

std::vector<RunProblem> run_input_problems(const StudySpec& spec) {
  Checker checker(spec);
  for (const StudyPoint& point : spec.points) checker.check(point);
  return checker.take_problems();
}

void check_run_inputs(const StudySpec& spec) {
  const std::vector<RunProblem> problems = run_input_problems(spec);
  if (problems.empty()) return;
  // The first problem is the error itself; the others follow it, one a line, in the same form.
  std::string text = problems.front().expectation;
  for (std::size_t i = 1; i < problems.size(); ++i)
    text += '\n' + spec.source + ": " + problems[i].field + ": " + problems[i].expectation;
  if (problems.size() > 1) text += "\n(" + std::to_string(problems.size()) + " problems; no run was started)";
  throw InputError(spec.source, problems.front().field, text);
}

}  // namespace asteria::cli::study
