#pragma once
// A what-if study: a YAML file naming a grid of `asteria sim` configurations (hardware × model ×
// optimizer × placement × staleness, and optionally any other sim setting as an axis), expanded
// into the ordered list of runs. The file format is documented in experiments/README.md.
#include <array>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/asteria/study_targets.hpp"

namespace asteria::cli::study {

// The settings a study can give a run are asteria sim's (core/run/run_schema.hpp: run settings,
// hyperparameters, the simulated machine), less those of its output (--out, --trace, ...), which
// the study decides itself. A setting's key is its option's name with '_' for '-' ("warmup_steps"
// for --warmup-steps). The first five are required for every run (from its sub-grid or the
// defaults) and lead each run's name and the table's columns.
inline constexpr std::array<std::string_view, 5> kCoreSettings = {"hw", "model", "optimizer", "placement", "staleness"};

// Where in the study file a value was written, so that a problem found later (a profile that
// does not load) can point at it.
struct ValueOrigin {
  std::string field;  // "grid[0].hw[1]", "defaults.steps"
  int line = 0;       // 1-based; 0 when unknown
};

// One run of the study. Values are normalized text, as the setting's own codec writes it back:
// "kl-shampoo", "3", "0.25", an absolute path for a hw/model given as a path.
struct StudyPoint {
  std::map<std::string, std::string, std::less<>> values;  // key -> value, the given settings only
  std::string slug;  // unique within the study; the run's directory name and its `config` label
  std::map<std::string, ValueOrigin, std::less<>> origins;  // of each given value (where the point first appears)

  std::optional<std::string> operator[](std::string_view key) const {
    const auto found = values.find(key);
    return found == values.end() ? std::nullopt : std::optional<std::string>(found->second);
  }
  const std::string& hw() const { return values.find("hw")->second; }
  const std::string& model() const { return values.find("model")->second; }
  const std::string& optimizer() const { return values.find("optimizer")->second; }
  const std::string& placement() const { return values.find("placement")->second; }
  int staleness() const { return std::stoi(values.find("staleness")->second); }
  const ValueOrigin& origin(std::string_view key) const;
};

struct StudySpec {
  std::string name;         // a safe directory name: results/<name> by default
  std::string description;  // optional free text
  std::string source;       // the file it came from, for messages
  // Keys of the non-core settings used as an axis by some sub-grid, in the study settings' order
  // (study_settings.hpp): the table's extra columns.
  std::vector<std::string> extra_axes;
  std::vector<StudyPoint> points;  // the union of the sub-grids' products, in file order
  // Time and energy to target losses (study_targets.hpp): the table's last columns.
  std::optional<Targets> targets;
};

// Parses and validates a study. `source` names the text in errors; relative hw/model paths are
// resolved against `base_dir`. Throws InputError(source, field path such as
// "grid[1].placement[2]", expectation) on any problem, YAML syntax errors with their line, and
// on a grid of more than 10000 runs (counted before duplicates are dropped).
StudySpec parse_study(std::string_view yaml_text, const std::string& source, const std::filesystem::path& base_dir);

// Reads `file` and parses it; relative paths inside resolve against the file's directory.
StudySpec load_study(const std::filesystem::path& file);

// The `asteria sim` arguments (without the program name) of one point, writing to `run_dir`;
// no trace option (the runner adds --trace when traces are kept). Each given setting is its
// option and value, except a switch (recompute_activations), which is the bare option when true and
// nothing when false.
std::vector<std::string> sim_arguments(const StudyPoint& point, const std::filesystem::path& run_dir);

}  // namespace asteria::cli::study
