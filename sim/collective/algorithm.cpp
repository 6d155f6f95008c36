#include "sim/collective/algorithm.hpp"

#include "core/common/error.hpp"

namespace asteria::sim::collective {

std::string_view to_string(Algorithm algorithm) noexcept {
  switch (algorithm) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::hierarchical: return "hierarchical";
  }
  return "ring";
}

Algorithm parse_algorithm(std::string_view name, const std::string& source) {
  if (name == "ring") return Algorithm::ring;
  if (name == "tree") return Algorithm::tree;
  if (name == "hierarchical") return Algorithm::hierarchical;
  throw InputError(source, "algorithm", "expected one of ring, tree, hierarchical; found '" + std::string(name) + "'");
}

}  // namespace asteria::sim::collective
