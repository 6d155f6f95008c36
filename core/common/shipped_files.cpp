#include "core/common/shipped_files.hpp"

#include <cstdlib>

#ifndef ASTERIA_BUILT_FROM
#error "ASTERIA_BUILT_FROM must name the source tree the programs are built from"
#endif

namespace asteria {

std::filesystem::path shipped_root() {
  const char* moved = std::getenv("ASTERIA_SOURCE_DIR");
  if (moved != nullptr && *moved != '\0') return std::filesystem::path(moved);
  return std::filesystem::path(ASTERIA_BUILT_FROM);
}

std::filesystem::path shipped_path(std::string_view relative) { return shipped_root() / relative; }

}  // namespace asteria
