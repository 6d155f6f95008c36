#pragma once
// A what-if study: a YAML file naming a grid of `asteria sim` configurations (hardware × model ×
// optimizer × placement × staleness, and optionally any other sim setting as an axis), expanded
// into the ordered list of runs. The file format is documented in experiments/README.md.
#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asteria::cli::study {

// Every setting a study can give a run; each maps to one `asteria sim` option.
enum class Setting : std::size_t {
  hw,
  model,
  optimizer,
  placement,
  staleness,
  publish,
  steps,
  warmup_steps,
  numerics,
  precondition_frequency,
  max_precond_dim,
  units,
  nodes,
  refresh_sharing,
  sync_period,
  shard_state,
  straggler,
  batch,
  schedule,
  micro_batches,
  defer_fraction,
  weights_on,
  gradients_on,
  checkpoints_on,
  placement_file,
  host_workers,
  refresh_on,
};
inline constexpr std::size_t kSettingCount = 27;

// The first five are required for every run (from its sub-grid or the defaults).
inline constexpr std::size_t kCoreSettingCount = 5;

std::string_view key_of(Setting setting) noexcept;     // "warmup_steps" (the YAML key)
std::string_view option_of(Setting setting) noexcept;  // "--warmup-steps" (the sim option)
std::optional<Setting> setting_named(std::string_view key) noexcept;

// Where in the study file a value was written, so that a problem found later (a profile that
// does not load) can point at it.
struct ValueOrigin {
  std::string field;  // "grid[0].hw[1]", "defaults.steps"
  int line = 0;       // 1-based; 0 when unknown
};

// One run of the study. Values are normalized text: "kl-shampoo", "3", an absolute path for a
// hw/model given as a path.
struct StudyPoint {
  std::array<std::optional<std::string>, kSettingCount> values;
  std::string slug;  // unique within the study; the run's directory name and its `config` label
  std::array<ValueOrigin, kSettingCount> origins;  // of each given value (where the point first appears)

  const std::optional<std::string>& operator[](Setting s) const { return values[static_cast<std::size_t>(s)]; }
  std::optional<std::string>& operator[](Setting s) { return values[static_cast<std::size_t>(s)]; }
  const std::string& hw() const { return *(*this)[Setting::hw]; }
  const std::string& model() const { return *(*this)[Setting::model]; }
  const std::string& optimizer() const { return *(*this)[Setting::optimizer]; }
  const std::string& placement() const { return *(*this)[Setting::placement]; }
  int staleness() const { return std::stoi(*(*this)[Setting::staleness]); }
  const ValueOrigin& origin(Setting s) const { return origins[static_cast<std::size_t>(s)]; }
};

struct StudySpec {
  std::string name;         // a safe directory name: results/<name> by default
  std::string description;  // optional free text
  std::string source;       // the file it came from, for messages
  // Non-core settings used as an axis by some sub-grid, in Setting order: extra table columns.
  std::vector<Setting> extra_axes;
  std::vector<StudyPoint> points;  // the union of the sub-grids' products, in file order
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
// option and value, except a flag (shard_state), which is the bare option when true and nothing
// when false.
std::vector<std::string> sim_arguments(const StudyPoint& point, const std::filesystem::path& run_dir);

}  // namespace asteria::cli::study
