#pragma once
// Sharded state's weight gathers (schedule.hpp): every rank ends a step with the new weights of
// the blocks other ranks own and updated. They travel in groups of consecutive gradient buckets:
// one all-gather per group, each rank's blocks of it packed and padded to the largest rank's
// share, and a block larger than an even share of its group alone, by a broadcast from its owner
// (an all-gather would pad every share to it).
#include <vector>

#include "core/plan/schedule.hpp"

namespace asteria::plan {

// A group is even enough once an all-gather of it moves at most this many times its blocks'
// bytes.
inline constexpr double kGatherPadding = 1.25;

struct GatherSplit {
  std::vector<int> alone;     // blocks larger than an even share: a broadcast each
  std::vector<int> together;  // the rest: one all-gather
};

// The owned blocks (owner >= 0) of the layers first_layer..last_layer of `layers`, by how they
// travel among `ranks` ranks, in block order.
GatherSplit split_gather(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers);

// The bytes a gather of `members` moves: their bytes when one rank owns them all (a broadcast),
// else ranks x the largest rank's share (nccl-tests' all_gather size of the padded buffer).
double gather_bytes(const std::vector<BlockWork>& blocks, int ranks, const std::vector<int>& members);

// Whether the blocks of `layers` that travel together move at most kGatherPadding times their
// bytes.
bool gather_is_even(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers);

}  // namespace asteria::plan
