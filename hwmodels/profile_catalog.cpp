#include <algorithm>
#include <system_error>

#include "core/common/error.hpp"
#include "core/common/shipped_files.hpp"
#include "hwmodels/profile_loader.hpp"

namespace asteria::hw {
namespace {

std::filesystem::path shipped_dir() { return shipped_path("hwmodels/profiles"); }

}  // namespace

std::vector<std::string> shipped_profile_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(shipped_dir(), ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::filesystem::path find_profile(std::string_view name_or_path) {
  std::error_code ec;
  const std::filesystem::path given(name_or_path);
  if (std::filesystem::is_regular_file(given, ec)) return given;
  const bool bare_name = !name_or_path.empty() && !given.has_parent_path();
  if (bare_name) {
    const std::string file = given.extension() == ".yaml" ? given.string() : given.string() + ".yaml";
    const std::filesystem::path shipped = shipped_dir() / file;
    if (std::filesystem::is_regular_file(shipped, ec)) return shipped;
  }
  std::string names;
  for (const std::string& name : shipped_profile_names()) names += (names.empty() ? "" : ", ") + name;
  throw InputError(std::string(name_or_path), "profile",
                   "expected an existing profile file or a shipped profile name (" +
                       (names.empty() ? "none in " + shipped_dir().string() : names) + ")");
}

}  // namespace asteria::hw
