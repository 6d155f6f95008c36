#pragma once
// Collective algorithms as data: which bytes move between which units, phase by phase. The
// simulator runs a schedule as flows over its links (run_flows.hpp); this header knows nothing
// of SimGrid, so the schedules themselves are tested by counting.
//
// A schedule is a list of phases; the flows of one phase run at once and the next phase starts
// when all of them have ended and the phase's latency has passed (a step of the algorithm waits
// for the data of the step before). A flow names units (indices into Topology::units), not group
// ranks: Members maps each group rank to its unit and its node.
//
// Algorithms (n ranks, S bytes in the nccl-tests convention, see flow_schedule()), as NCCL runs
// them; ranks are taken node by node (nodes in order of their first rank, ranks in group order
// inside a node), as NCCL lays its rings and trees over the machine, not over rank numbers:
//   ring          `channels` rings side by side, each over S/channels. Channel c enters every
//                 node at its rank c (mod the node's ranks) and leaves it from the one before, so
//                 the channels cross between nodes over different GPUs, hence different NICs.
//                 all_reduce: reduce-scatter then all-gather, 2(n-1) phases of one shard S/(c·n)
//                 per rank and channel; reduce_scatter, all_gather: n-1 such phases;
//                 broadcast: each channel's ring, cut at the root, as a chain pipelined in
//                 `pipeline_chunks` chunks.
//   tree          all_reduce: NCCL's double binary tree. Over the nodes, two binary trees in which
//                 a node that is inner in one is a leaf in the other; inside a
//                 node, a chain from the node's head (its rank c/2 for channel c) through its
//                 other ranks. Even channels use the first tree, odd ones the second (so each
//                 head's NIC carries one tree of each), each over
//                 S/channels, reduced up and broadcast down in `pipeline_chunks` chunks
//                 (tree_phases() in the .cpp). reduce_scatter, all_gather and broadcast run as
//                 ring (NCCL has no tree form of them either).
//   hierarchical  intra-node parts over every GPU-GPU pair at once, inter-node parts as one
//                 ring (or chain) per local index, each over its own NIC (flow_schedule.cpp);
//                 `channels` does not apply (every local index already has its ring).
// A protocol (protocol.hpp) multiplies every flow's bytes by its wire factor, gives each phase of
// the first chunk's way the step latency of its slowest hop (network if any flow leaves its node)
// and puts the algorithm's base latency in a first phase without flows.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/platform/comm.hpp"
#include "sim/collective/algorithm.hpp"
#include "sim/collective/protocol.hpp"

namespace asteria::sim::collective {

// Pipelined algorithms (tree, ring broadcast, the inter-node chain of hierarchical broadcast)
// cut each channel's buffer into chunks, so that the levels of a tree or the hops of a chain
// work on different chunks at the same time: by default this many; collective_choice.hpp sizes
// them as NCCL does (chunks of a fixed size, so a small buffer is one chunk).
inline constexpr int kPipelineChunks = 8;

struct Flow {
  int from = 0;  // unit indices (Topology::units)
  int to = 0;
  double bytes = 0.0;

  bool operator==(const Flow&) const = default;
};

struct Phase {
  std::vector<Flow> flows;  // run at once
  // The phase runs this many times in a row (the steps of a ring move the same bytes between
  // the same units): a compact schedule keeps one copy, O(n) flows where the expanded ring
  // holds O(n^2); flow_schedule() returns every phase expanded (repeat 1).
  int repeat = 1;
  // Seconds each run of the phase waits once its flows have ended (a protocol's step latency).
  double latency = 0.0;
  // Whether the phase is a step of the first chunk's way (or of an algorithm that is not
  // pipelined): only such a phase pays a protocol's step latency. Later chunks follow the first
  // without waiting out the latency again, as NCCL keeps several steps in flight per channel.
  bool first_chunk = true;
};

using FlowSchedule = std::vector<Phase>;

// Per group rank: its unit and its node (both vectors hold one entry per rank, in rank order).
struct Members {
  std::vector<int> units;
  std::vector<int> nodes;

  int size() const noexcept { return static_cast<int>(units.size()); }
};

struct ScheduleOptions {
  int channels = 1;                       // ring and tree (see above); >= 1
  int pipeline_chunks = kPipelineChunks;  // per channel; >= 1
  std::optional<Protocol> protocol;       // none: the flows alone, at their bytes
};

// The schedule of one collective. `bytes` follows nccl-tests: all_reduce and broadcast: the
// buffer; reduce_scatter and all_gather: the whole (gathered) buffer, n shards of bytes/n.
// `root` (a group rank) is the source of broadcast (all_reduce ends everywhere: trees need no root).
// n = 1 or bytes = 0: an empty schedule. Throws std::invalid_argument when units and nodes
// differ in length, a unit appears twice, root is not a rank, bytes is negative or not finite,
// channels or pipeline_chunks is below 1, or (hierarchical) the nodes hold different numbers of
// members.
FlowSchedule flow_schedule(Algorithm algorithm, platform::Collective collective, const Members& members, double bytes,
                           int root = 0, const ScheduleOptions& options = {});
// The same schedule with repeated phases kept once (Phase::repeat): what the simulator runs.
FlowSchedule compact_flow_schedule(Algorithm algorithm, platform::Collective collective, const Members& members,
                                   double bytes, int root = 0, const ScheduleOptions& options = {});
// Every phase written out `repeat` times (each with repeat 1).
FlowSchedule expand(const FlowSchedule& compact);

// nccl-tests' bus bandwidth factor (busbw = algbw · factor): all_reduce 2(n-1)/n,
// reduce_scatter and all_gather (n-1)/n, broadcast 1. Throws std::invalid_argument for ranks < 1.
double bus_bandwidth_factor(platform::Collective collective, int ranks);

}  // namespace asteria::sim::collective
