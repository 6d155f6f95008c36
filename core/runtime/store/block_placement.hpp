#pragma once
// One optimizer block's placement as a plan chose it (asteria plan): the tier its state rests on
// and where its update runs. The step driver hands a list of them, one per block in its block
// order, to the store under PlacementPolicy::planned; the label ties each entry to its block, so
// a plan made for another model or optimizer is refused rather than misapplied.
#include <string>

#include "core/platform/memory.hpp"

namespace asteria::runtime {

struct BlockPlacement {
  std::string label;  // the block's label as the driver names it ("layer0.attn.q block 0 (rows 0:64, cols 0:64)")
  platform::Tier home = platform::Tier::device;
  bool update_on_device = true;  // false: the host's workers update it (home must then be host or nvme)
};

}  // namespace asteria::runtime
