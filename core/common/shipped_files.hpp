#pragma once
// Where the files Asteria ships beside its programs (models, hardware profiles, studies, plot
// scripts) are read at run time: the tree named by ASTERIA_SOURCE_DIR in the environment when a
// built tree was copied or moved (a device machine runs the binaries in another checkout), else
// the source tree the programs were built from.
#include <filesystem>
#include <string_view>

namespace asteria {

// The root of the shipped files.
std::filesystem::path shipped_root();
// `relative` under that root (e.g. "experiments/models").
std::filesystem::path shipped_path(std::string_view relative);

}  // namespace asteria
