#pragma once
// Fixed placements to compare the solver's against, each with its predicted time.
//   all_device_site  every update on the device (the usual GPU optimizer, with state streamed
//                    from host or NVMe when the device cannot hold it);
//   all_host_site    every update on the host's CPU workers (ZeRO-Offload);
//   interleaved(k)   every k-th block (1-based: blocks k, 2k, 3k, ...; 0-based indices i with
//                    (i + 1) % k == 0) updated on the device, the rest on the host (Deep
//                    Optimizer States' fixed baseline; pass subgroups for its subgroups).
// The tier rule (the same for all three): blocks in block order, each resting on the first tier
// with room for its state among device, host, nvme -- skipping device for a block updated on the
// host (device tier with host site is not an option). No search: the rule is what a runtime that
// fills memory front to back does. A block that fits no tier -> InputError naming the tier
// (capacities.nvme, the last resort) and how many bytes it is short for that block.
#include <string>
#include <vector>

#include "core/planner/placement_problem.hpp"

namespace asteria::planner {

struct Baseline {
  std::string name;  // "all_device_site", "all_host_site", "interleaved(k=4)"
  Assignment assignment;
  Prediction prediction;
};

// Tiers for the given sites (one per block) under the tier rule above.
Assignment rest_by_fill(const PlacementProblem& problem, const std::vector<Site>& sites);

Baseline all_device_site(const PlacementProblem& problem);
Baseline all_host_site(const PlacementProblem& problem);
// k >= 1 (InputError otherwise); k = 1 is all_device_site's sites.
Baseline interleaved(const PlacementProblem& problem, int k);

}  // namespace asteria::planner
