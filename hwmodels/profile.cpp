#include "hwmodels/profile.hpp"

namespace asteria::hw {

std::string_view to_string(Provenance p) noexcept {
  switch (p) {
    case Provenance::peak: return "peak";
    case Provenance::measured: return "measured";
    case Provenance::derived: return "derived";
  }
  return "derived";
}

}  // namespace asteria::hw
