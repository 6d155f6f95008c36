#pragma once
// Reading and writing hardware profiles (YAML; the format is described in hwmodels/README.md).
// Every bad input raises asteria::InputError naming the file, the field ("gpu.memory_bandwidth")
// and what was expected.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hwmodels/profile.hpp"

namespace asteria::hw {

// Reads and validates a profile file; `origin` of the result is the path.
HardwareProfile load_profile(const std::filesystem::path& path);

// Parses and validates profile text; `source` names it in errors and becomes `origin`.
HardwareProfile parse_profile(std::string_view yaml_text, const std::string& source);

// The profile as YAML that parse_profile reads back to an equal profile (origin is kept as a
// comment; the reader takes origin from where it reads).
std::string profile_to_yaml(const HardwareProfile& profile);

// `name_or_path` when it names an existing file, else the shipped profile of that name
// (hwmodels/profiles/<name>.yaml). Throws InputError listing the shipped names otherwise.
std::filesystem::path find_profile(std::string_view name_or_path);

// Names of the shipped profiles, sorted ("gb10", "gh200", ...).
std::vector<std::string> shipped_profile_names();

}  // namespace asteria::hw
