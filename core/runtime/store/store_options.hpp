#pragma once
// Settings of the tiered optimizer-state store (state_store.hpp).
#include <cstddef>
#include <string>
#include <string_view>

#include "core/platform/memory.hpp"

namespace asteria::runtime {

using BlockId = std::size_t;  // dense: 0, 1, 2, ... in the order blocks were added

enum class PlacementPolicy {
  // Every block lives on the device and is updated there. Placement fails (PlacementError)
  // when the device budget cannot hold them all.
  device,
  // Static offload: every block lives on the host and is updated there, except blocks added
  // with BlockOptions::update_on_device, which are copied to the device before their update
  // and back after it.
  host,
  // Dynamic: blocks are updated on the device; the ones needed soonest (by the use order)
  // stay there, and under pressure the block whose next use is farthest goes down to the host,
  // or to NVMe when the host is full. Blocks are prefetched `lookahead` uses ahead.
  tiered,
  // Every block lives on NVMe and is streamed in to `nvme_update_tier` (or the device, with
  // BlockOptions::update_on_device) for its update, then written back.
  nvme,
  // Every block as its BlockOptions say (a plan made by asteria plan): it rests on
  // BlockOptions::home and is updated on the device or, with update_on_device false, on the
  // host; a block updated away from home is staged there for its update. A device home with a
  // host update is refused (InputError): the state would cross the link both ways for nothing.
  planned,
};

std::string_view to_string(PlacementPolicy policy) noexcept;
// Parses "device", "host", "tiered", "nvme" or "planned"; throws InputError naming `source` otherwise.
PlacementPolicy parse_placement_policy(std::string_view text, const std::string& source);

struct StoreOptions {
  PlacementPolicy policy = PlacementPolicy::tiered;
  // How many uses ahead (in the use order) the store starts moving blocks to their update
  // tier; 0 disables automatic prefetch (explicit prefetch() still works).
  int lookahead = 2;
  // Where blocks of the nvme policy are updated (host or device).
  platform::Tier nvme_update_tier = platform::Tier::host;
};

struct BlockOptions {
  // host, nvme and planned policies: run this block's update on the device (Deep-Optimizer-
  // States-style split). Ignored by the device and tiered policies, which always update on the
  // device.
  bool update_on_device = false;
  // planned policy: where the block rests between updates. Ignored by the other policies.
  platform::Tier home = platform::Tier::device;
};

}  // namespace asteria::runtime
