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

std::string_view to_string(DeviceKind kind) noexcept { return kind == DeviceKind::cpu ? "cpu" : "gpu"; }

std::size_t GemmEfficiency::class_of(std::int64_t dimension) noexcept {
  if (dimension <= 0) return kClasses - 1;  // no size given
  for (std::size_t i = 0; i < kUpperBounds.size(); ++i)
    if (dimension < kUpperBounds[i]) return i;
  return kClasses - 1;
}

const Quantity& GemmEfficiency::by_class(std::size_t index) const noexcept {
  switch (index) {
    case 0: return below_256;
    case 1: return below_1024;
    case 2: return below_4096;
    default: return from_4096;
  }
}

Quantity& GemmEfficiency::by_class(std::size_t index) noexcept {
  return const_cast<Quantity&>(static_cast<const GemmEfficiency&>(*this).by_class(index));
}

GemmEfficiency& GemmEfficiency::operator=(const Quantity& every_class) {
  below_256 = below_1024 = below_4096 = from_4096 = every_class;
  return *this;
}

}  // namespace asteria::hw
