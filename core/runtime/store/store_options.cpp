#include "core/runtime/store/store_options.hpp"

#include "core/common/error.hpp"

namespace asteria::runtime {

std::string_view to_string(PlacementPolicy policy) noexcept {
  switch (policy) {
    case PlacementPolicy::device: return "device";
    case PlacementPolicy::host: return "host";
    case PlacementPolicy::tiered: return "tiered";
    case PlacementPolicy::nvme: return "nvme";
    case PlacementPolicy::planned: return "planned";
  }
  return "?";
}

PlacementPolicy parse_placement_policy(std::string_view text, const std::string& source) {
  for (PlacementPolicy p : {PlacementPolicy::device, PlacementPolicy::host, PlacementPolicy::tiered,
                            PlacementPolicy::nvme, PlacementPolicy::planned})
    if (text == to_string(p)) return p;
  throw InputError(source, "placement policy",
                   "expected one of device, host, tiered, nvme, planned; found '" + std::string(text) + "'");
}

}  // namespace asteria::runtime
