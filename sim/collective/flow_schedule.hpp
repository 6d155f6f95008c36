#pragma once
// Collective algorithms as data: which bytes move between which units, phase by phase. The
// simulator runs a schedule as flows over its links (run_flows.hpp); this header knows nothing
// of SimGrid, so the schedules themselves are tested by counting.
//
// A schedule is a list of phases; the flows of one phase run at once and the next phase starts
// when all of them have ended (a step of the algorithm waits for the data of the step before).
// A flow names units (indices into Topology::units), not group ranks: Members maps each group
// rank to its unit and its node.
//
// Algorithms (n ranks, S bytes in the nccl-tests convention, see flow_schedule()):
//   ring          ranks in group order form a ring (rank i sends to i+1 mod n).
//                 all_reduce: reduce-scatter then all-gather, 2(n-1) phases of n flows of S/n;
//                 reduce_scatter, all_gather: n-1 phases of n flows of S/n;
//                 broadcast: a chain root, root+1, ..., pipelined in kPipelineChunks chunks.
//   tree          a binary tree over the ranks rooted at `root`, pipelined in kPipelineChunks
//                 chunks (tree_phases() below); reduce_scatter and all_gather fall back to ring
//                 (a tree has no shard-per-rank form; NCCL runs them on rings too).
//   hierarchical  intra-node parts over every GPU-GPU pair at once, inter-node parts as one
//                 ring (or chain) per local index, each over its own NIC (flow_schedule.cpp).
#include <string>
#include <string_view>
#include <vector>

#include "core/platform/comm.hpp"

namespace asteria::sim::collective {

enum class Algorithm { ring, tree, hierarchical };
std::string_view to_string(Algorithm algorithm) noexcept;
// Throws InputError(source, "algorithm", ...) naming the accepted values.
Algorithm parse_algorithm(std::string_view name, const std::string& source = "--algorithm");

// Pipelined algorithms (tree, ring broadcast, the inter-node chain of hierarchical broadcast)
// cut the buffer into this many chunks, so that the levels of a tree or the hops of a chain
// work on different chunks at the same time. NCCL pipelines the same way, with chunks of a
// fixed size instead of a fixed count; a count keeps the phase structure independent of S.
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
};

using FlowSchedule = std::vector<Phase>;

// Per group rank: its unit and its node (both vectors hold one entry per rank, in rank order).
struct Members {
  std::vector<int> units;
  std::vector<int> nodes;

  int size() const noexcept { return static_cast<int>(units.size()); }
};

// The schedule of one collective. `bytes` follows nccl-tests: all_reduce and broadcast: the
// buffer; reduce_scatter and all_gather: the whole (gathered) buffer, n shards of bytes/n.
// `root` (a group rank) is the source of broadcast and the root of tree all_reduce.
// n = 1 or bytes = 0: an empty schedule. Throws std::invalid_argument when units and nodes
// differ in length, a unit appears twice, root is not a rank, bytes is negative or not finite,
// or (hierarchical) the nodes hold different numbers of members.
FlowSchedule flow_schedule(Algorithm algorithm, platform::Collective collective, const Members& members, double bytes,
                           int root = 0);
// The same schedule with repeated phases kept once (Phase::repeat): what the simulator runs.
FlowSchedule compact_flow_schedule(Algorithm algorithm, platform::Collective collective, const Members& members,
                                   double bytes, int root = 0);
// Every phase written out `repeat` times (each with repeat 1).
FlowSchedule expand(const FlowSchedule& compact);

// nccl-tests' bus bandwidth factor (busbw = algbw · factor): all_reduce 2(n-1)/n,
// reduce_scatter and all_gather (n-1)/n, broadcast 1. Throws std::invalid_argument for ranks < 1.
double bus_bandwidth_factor(platform::Collective collective, int ranks);

}  // namespace asteria::sim::collective
