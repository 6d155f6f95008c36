#pragma once
// Internals of the study parser: checking one setting's value and naming runs.
#include <filesystem>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "apps/asteria/study_spec.hpp"

namespace asteria::cli::study {

struct ValueContext {
  const std::string& source;             // the study file, for messages
  const std::string& field;              // "grid[1].placement[2]"
  const std::filesystem::path& base_dir;  // relative hw/model paths resolve against it
};

// "hw, model, optimizer, ...": every key a study may set.
std::string known_settings_list();

// " (line 12)" for a node read from text; "" when the node has no position.
std::string line_suffix(const YAML::Node& node);

// Checks a scalar value of `setting` and returns it normalized (canonical optimizer names,
// integers without signs or leading zeros, absolute paths, true/false in lower case, a straggler
// as RANK:FACTOR with the shortest factor). Throws InputError otherwise.
std::string parse_setting_value(const YAML::Node& node, Setting setting, const ValueContext& context);

// The piece of a run's slug that shows `value` ("s3", "freq10", "opportunistic", a path's stem),
// with every character outside [A-Za-z0-9.-] replaced by '-' so that '_' stays the separator;
// empty for a value the slug leaves out (publish: deterministic, refresh_sharing: owners, refresh_on: host,
// shard_state: false). shard_state: true is "sharded"; a straggler 3:2.5 is "slow3x2.5".
std::string slug_part(Setting setting, const std::string& value);

// Appends the `asteria sim` arguments of one normalized value: the option and the value, or for a
// flag (shard_state) the bare option when true and nothing when false.
void append_sim_arguments(Setting setting, const std::string& value, std::vector<std::string>& args);

}  // namespace asteria::cli::study
