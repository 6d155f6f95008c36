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

// Every function here takes the blocks listed layer by layer, as validate_schedule_inputs
// requires (it finds a bucket's blocks by binary search).
//
// The owned blocks (owner >= 0) of the layers first_layer..last_layer of `layers`, by how they
// travel among `ranks` ranks, in block order.
ShareSplit split_shares(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers, BlockBytes bytes);

// A scatter's split of the owned blocks of `layers` (by gradient bytes): as split_shares, and
// blocks of one owner only all alone (a reduce-scatter would move them to every rank anyway).
ShareSplit split_gradients(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers);

// Weights travel as the forward reads them (the layers' compute copy, bf16 under mixed
// precision): the factor from the owned blocks' (master) weight bytes of `bucket`'s layers to
// those layers' weight_bytes (1 when no block has bytes).
double compute_copy_scale(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                          const BucketInfo& bucket);

// The bytes a collective of `members` moves: their bytes when one rank owns them all (a
// broadcast), else ranks x the largest rank's share (nccl-tests' size of an all-gather's or a
// reduce-scatter's whole buffer).
double padded_bytes(const std::vector<BlockWork>& blocks, int ranks, const std::vector<int>& members, BlockBytes bytes);

// Whether the blocks of `layers` that travel together move at most kSharePadding times their
// bytes.
bool shares_are_even(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers, BlockBytes bytes);
// Whether every owned block of `layers` travels together (none larger than an even share) and
// their shares are even: what a unit of collectives of padded shares wants (zero2's gradient
// buckets, fsdp's units).
bool shares_are_whole_and_even(const std::vector<BlockWork>& blocks, int ranks, const BucketInfo& layers,
                               BlockBytes bytes);

// shares_are_whole_and_even for a range of layers that grows a layer at a time (a gradient bucket,
// an fsdp unit): the range's bytes, its largest block and every rank's share are kept as layers
// join, so that a range far from whole and even is told so in O(1); one that may be is checked
// exactly by shares_are_whole_and_even (the same answer, bit for bit).
class ShareTally {
 public:
  ShareTally(const std::vector<BlockWork>& blocks, int ranks, BlockBytes bytes);
  void add_layer(int layer);  // its owned blocks join
  void clear();
  bool whole_and_even(const BucketInfo& layers) const;  // `layers`: the layers added since clear()

 private:
  const std::vector<BlockWork>& blocks_;
  int ranks_;
  BlockBytes bytes_;
  std::vector<double> share_;
  double total_ = 0.0, largest_block_ = 0.0, largest_share_ = 0.0;
  int owners_ = 0;  // ranks with a share
};

// fsdp's units (as FSDP wraps modules): consecutive layers, in forward order, whose weights are
// gathered and dropped together; a unit closes once its blocks hold options.bucket_bytes of
// weights and its shares are whole and even (each layer a unit at 0). Per layer, its unit's
// index.
std::vector<int> fsdp_units(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                            const ScheduleOptions& options);

// One collective of a bucket: its kind (reduce, scatter or gather), the blocks it moves (named by
// a bucket of their layers) and its bytes (nccl-tests' size, in the blocks' own bytes).
struct BucketCollective {
  OpKind kind = OpKind::reduce;
  BucketInfo bucket;
  double bytes = 0.0;
};

// A closed gradient bucket's collectives, in issue order: one reduce of its `bytes` where the
// gradients are not sharded (or no block has an owner); else a reduce of the blocks split_gradients
// leaves alone, then a scatter of the rest (padded shares).
std::vector<BucketCollective> gradient_collectives(const std::vector<BlockWork>& blocks, int ranks,
                                                   Parallelism parallelism, const BucketInfo& layers, double bytes);
// The gathers of the owned blocks of `range` (one per block that travels alone, one for the rest),
// each moving the weights' compute copy (compute_copy_scale).
std::vector<BucketCollective> weight_gathers(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                                             int ranks, const BucketInfo& range);

// The layers of `unit` (fsdp_units' numbering: consecutive layers).
BucketInfo unit_layers(const std::vector<int>& unit_of, int unit);

// Owners of sharded blocks (bytes[b] of layer layers[b], layers non-decreasing) among `ranks`:
// layer by layer, largest block first, each to the rank holding the fewest bytes of its layer so
// far, ties to the one holding the fewest in all, then the lowest: every layer's shares about
// even (its collectives pad little) and every rank's total too. Deterministic: every rank
// computes the same owners.
std::vector<int> assign_block_owners(const std::vector<double>& bytes, const std::vector<int>& layers, int ranks);

}  // namespace asteria::plan
