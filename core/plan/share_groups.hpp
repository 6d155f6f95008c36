#pragma once
// How sharded blocks travel (schedule.hpp): a collective that moves each block to or from its
// owner (a gather of new weights, a scatter of gradients) packs each rank's blocks in block order
// and pads every rank's share to the largest. Blocks travel in groups of consecutive layers, a
// group closing once its shares are about even; a block larger than an even share of its group
// travels alone (a gather: by a broadcast from its owner; a scatter: by an all-reduce), since
// padding every share to it would multiply the bytes.
#include <vector>

#include "core/plan/schedule.hpp"

namespace asteria::plan {

// A group is even enough once its padded collective moves at most this many times its blocks'
// bytes.
inline constexpr double kSharePadding = 1.25;

// Which of a block's sizes travels: its weights (gathers) or its gradient (scatters).
using BlockBytes = double BlockWork::*;

struct ShareSplit {
  std::vector<int> alone;     // blocks larger than an even share: a collective each
  std::vector<int> together;  // the rest: one collective of padded shares
};

// The owned blocks (owner >= 0) of the layers first_layer..last_layer of `layers`, by how they
// travel among `ranks` ranks, in block order.
ShareSplit split_shares(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers, BlockBytes bytes);

// The bytes a collective of `members` moves: their bytes when one rank owns them all (a
// broadcast), else ranks x the largest rank's share (nccl-tests' size of an all-gather's or a
// reduce-scatter's whole buffer).
double padded_bytes(const std::vector<BlockWork>& blocks, int ranks, const std::vector<int>& members, BlockBytes bytes);

// Whether the blocks of `layers` that travel together move at most kSharePadding times their
// bytes.
bool shares_are_even(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers, BlockBytes bytes);

// Owners of sharded blocks (bytes[b] of layer layers[b], layers non-decreasing) among `ranks`:
// layer by layer, largest block first, each to the rank holding the fewest bytes of its layer so
// far, ties to the one holding the fewest in all, then the lowest: every layer's shares about
// even (its collectives pad little) and every rank's total too. Deterministic: every rank
// computes the same owners.
std::vector<int> assign_block_owners(const std::vector<double>& bytes, const std::vector<int>& layers, int ranks);

}  // namespace asteria::plan
