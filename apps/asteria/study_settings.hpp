#pragma once
// Internals of the study parser: the settings a study can give a run (asteria sim's, from the one
// settings list, core/run/run_schema.hpp), checking one value and naming runs.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "apps/asteria/study_spec.hpp"

namespace asteria::cli::study {

// One setting a study can give a run.
struct StudySetting {
  std::string name;    // the schema's: "warmup-steps" (read by run::normalized_value)
  std::string key;     // "warmup_steps"
  std::string option;  // "--warmup-steps"
  bool flag = false;   // a switch: true is the bare option, false none
  bool file_value = false;  // a relative path in the study resolves against the study's directory
  bool word_value = false;  // its values are words that name themselves ("vertical", "replicated")
};

// Every setting a study can give a run, built once from the schema: the core five first
// (kCoreSettings), then the others studies have long used in their order (run names and table
// columns stay as they were), then the rest in the schema's order, hyperparameters last.
const std::vector<StudySetting>& study_settings();
// The setting with this key; nullptr when a study has none.
const StudySetting* find_study_setting(std::string_view key);

struct ValueContext {
  const std::string& source;             // the study file, for messages
  const std::string& field;              // "grid[1].placement[2]"
  const std::filesystem::path& base_dir;  // relative hw/model paths resolve against it
};

// "hw, model, optimizer, ...": every key a study may set.
std::string known_settings_list();

// " (line 12)" for a node read from text; "" when the node has no position.
std::string line_suffix(const YAML::Node& node);

// Checks a scalar value of `setting` with its codec and returns it normalized (canonical names,
// integers without signs or leading zeros, the shortest exact number, absolute paths, true/false
// in lower case for switches). Throws InputError(source, field, expectation (line N)) otherwise.
std::string parse_setting_value(const YAML::Node& node, const StudySetting& setting, const ValueContext& context);

// The piece of a run's slug that shows `value` ("s3", "freq10", "opportunistic", a path's stem),
// with every character outside [A-Za-z0-9.-] replaced by '-' so that '_' stays the separator;
// empty for a value the slug leaves out (publish: deterministic, refresh_sharing: owners,
// refresh_on: host, parallelism: ddp, a switch that is false). A switch that is true shows its
// tag; a straggler 3:2.5 is "slow3x2.5". Settings without a tag of their own show their
// name before a number ("lr0.001", "seed3") and their word alone.
std::string slug_part(const StudySetting& setting, const std::string& value);

// Appends the `asteria sim` arguments of one normalized value: the option and the value, or for a
// switch the bare option when true and nothing when false.
void append_sim_arguments(const StudySetting& setting, const std::string& value, std::vector<std::string>& args);

}  // namespace asteria::cli::study
