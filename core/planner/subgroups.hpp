#pragma once
// Consecutive blocks merged into subgroups (Deep Optimizer States' unit of placement), so that
// a model with thousands of blocks gives a MIP of tractable size. A subgroup's demand is the sum
// of its blocks' demands; since every option's usage is linear in the demand, a subgroup's
// usage is the sum of its blocks' usages, and an assignment of subgroups expanded to their
// blocks (expand()) predicts exactly the same time and rests the same bytes on each tier.
// (Merging only removes choices: the subgroup optimum bounds the block optimum from above.)
//
// The split: block i, whose state spans [before_i, before_i + state_i) of the total S, joins
// subgroup floor(count * (before_i + state_i / 2) / S) (capped at count - 1); subgroups that no
// block's midpoint falls in are dropped. So every subgroup holds about S / count bytes, the
// order of blocks is kept, and there are at most `count`. Without any state (S = 0) block
// counts stand in for bytes.
#include <cstddef>
#include <vector>

#include "core/planner/placement_problem.hpp"

namespace asteria::planner {

struct Subgroups {
  std::vector<BlockDemand> demands;  // one per subgroup: summed demands; label "first..last"
  std::vector<std::size_t> first;    // first block of each subgroup, then the block count
};

// count >= 1 (InputError otherwise); blocks must be valid demands (finite, >= 0).
Subgroups subgroups(const std::vector<BlockDemand>& blocks, int count);

// Each block takes its subgroup's choice. InputError when the sizes do not match.
Assignment expand(const Subgroups& groups, const Assignment& group_assignment);

}  // namespace asteria::planner
