#pragma once
// NCCL's choice of algorithm and protocol, on the simulated machine: every candidate schedule's
// time is predicted from the links it crosses (LinkCosts) and the least wins, as NCCL's tuner
// picks the least of its latency + size / bandwidth model per call. Ring and tree are NCCL's
// candidates (tree for all_reduce only); hierarchical runs only when asked for.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/collective/flow_schedule.hpp"
#include "sim/topology.hpp"

namespace asteria::sim::collective {

// Bytes per pipeline chunk of one channel: NCCL's default buffer of 4 MiB per channel over its 8
// steps (NCCL_BUFFSIZE, NCCL_STEPS), so a buffer below it goes in one chunk.
inline constexpr double kChunkBytes = 512.0 * 1024.0;
// The most chunks a pipelined schedule is cut into: past it, a chunk grows with the buffer (the
// pipeline's fill and drain then cost under 1/kMaxChunks of the buffer's time per level).
inline constexpr int kMaxChunks = 64;

// Predicted seconds of a schedule on the simulated links. Per phase: each flow takes its route's
// latency plus its bytes at its slowest link's bandwidth divided equally among the phase's flows
// that cross that link (the backbone, a fat pipe, is never divided); the phase takes its slowest
// flow and its latency, times its repeats. Where a phase's flows are alike, as in every schedule
// here (the same bytes over links of the same kinds), this is what SimGrid's max-min sharing
// gives: the hand formula of each algorithm. Routes are looked up once per pair of units.
//
// The prediction is exact (Prediction::exact), the simulation of the flows taking exactly that
// long when they run alone on their links, where in every phase all flows move the same bytes and
// the slowest ones have the largest latency and the least share of all, on a link whose flows all
// have that latency: max-min sharing then holds them at that share from start to end, and lets
// no other flow end later (exact_phase in the .cpp).
struct Prediction {
  double seconds = 0.0;
  bool exact = true;
};

class LinkCosts {
 public:
  explicit LinkCosts(const Topology& topology);
  Prediction predict(const FlowSchedule& schedule);
  double predicted_seconds(const FlowSchedule& schedule) { return predict(schedule).seconds; }
  const Topology& topology() const noexcept { return topology_; }

 private:
  struct Route {
    double latency = 0.0;
    std::vector<int> links;  // indices into bandwidth_, fat pipes left out
  };
  const Route& route(int from, int to);

  const Topology& topology_;
  std::unordered_map<std::uint64_t, Route> routes_;
  std::unordered_map<const void*, int> link_ids_;
  std::vector<double> bandwidth_;
  std::vector<int> flows_on_;  // per link, in the phase being predicted
  std::vector<double> latency_on_;  // per link, scratch of exact_phase (infinity: unset)
  bool exact_phase(const Phase& phase, const std::vector<const Route*>& routes, const std::vector<double>& rates,
                   double slowest);
};

// Channels and chunks as NCCL sizes them: one channel inside a node (a tree is then a chain);
// across nodes a ring per NIC of a node (at most the ranks a node holds), and for a tree the
// double binary tree's two per NIC; chunks of kChunkBytes per channel, 1 to kMaxChunks.
ScheduleOptions nccl_schedule_options(Algorithm algorithm, Protocol protocol, const Members& members, double bytes,
                                      int nics_per_node);

struct CollectiveChoice {
  Algorithm algorithm = Algorithm::ring;
  ScheduleOptions options;  // with its protocol
  double predicted_seconds = 0.0;
  bool exact = false;  // the prediction is exact when the collective runs alone (Prediction)
};

// The candidate of least predicted time: `algorithm` (or NCCL's ring and tree) with `protocol`
// (or each of LL, LL128, Simple; LL128 between nodes only where the NICs sit beside the GPUs,
// as NCCL enables it). Ties go to the earlier candidate (ring, then LL).
CollectiveChoice choose_collective(std::optional<Algorithm> algorithm, std::optional<Protocol> protocol,
                                   platform::Collective collective, const Members& members, double bytes, int root,
                                   LinkCosts& costs);

}  // namespace asteria::sim::collective
