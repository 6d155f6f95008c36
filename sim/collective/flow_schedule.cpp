#include "sim/collective/flow_schedule.hpp"

#include <cmath>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "core/common/error.hpp"

namespace asteria::sim::collective {

using platform::Collective;

std::string_view to_string(Algorithm algorithm) noexcept {
  switch (algorithm) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::hierarchical: return "hierarchical";
  }
  return "ring";
}

Algorithm parse_algorithm(std::string_view name, const std::string& source) {
  if (name == "ring") return Algorithm::ring;
  if (name == "tree") return Algorithm::tree;
  if (name == "hierarchical") return Algorithm::hierarchical;
  throw InputError(source, "algorithm", "expected one of ring, tree, hierarchical; found '" + std::string(name) + "'");
}

double bus_bandwidth_factor(Collective collective, int ranks) {
  if (ranks < 1) throw std::invalid_argument("bus_bandwidth_factor: ranks must be at least 1, got " + std::to_string(ranks));
  const double n = ranks;
  switch (collective) {
    case Collective::all_reduce: return 2.0 * (n - 1.0) / n;
    case Collective::reduce_scatter:
    case Collective::all_gather: return (n - 1.0) / n;
    case Collective::broadcast: return 1.0;
  }
  return 1.0;
}

namespace {

using Units = std::vector<int>;  // units in the order an algorithm visits them

// Several rings (or chains) that run in the same phases, each over its own links.
using Rings = std::vector<Units>;

// `steps` phases; in each, every member of every ring sends `bytes` to the next member of its
// ring. A reduce-scatter or an all-gather of a ring of m members is m-1 such steps of one shard.
// One phase repeated `steps` times (Phase::repeat).
void append_ring_steps(FlowSchedule& schedule, const Rings& rings, double bytes, int steps) {
  if (steps < 1) return;
  Phase phase;
  phase.repeat = steps;
  for (const Units& ring : rings) {
    const std::size_t m = ring.size();
    if (m < 2) continue;
    for (std::size_t i = 0; i < m; ++i) phase.flows.push_back({ring[i], ring[(i + 1) % m], bytes});
  }
  schedule.push_back(std::move(phase));
}

// Pipelined chains: chain[0] holds `bytes`, cut into kPipelineChunks chunks; in phase t hop h
// (chain[h] -> chain[h+1]) forwards chunk t - h. A chain of m members takes
// kPipelineChunks + m - 2 phases instead of m - 1 phases of the whole buffer: for large
// buffers the time tends to that of one hop, as NCCL's pipelined ring broadcast.
void append_pipelined_chains(FlowSchedule& schedule, const Rings& chains, double bytes) {
  std::size_t longest = 0;
  for (const Units& chain : chains) longest = std::max(longest, chain.size());
  if (longest < 2) return;
  const int hops = static_cast<int>(longest) - 1;
  const double chunk = bytes / kPipelineChunks;
  for (int t = 0; t < kPipelineChunks + hops - 1; ++t) {
    Phase phase;
    for (const Units& chain : chains) {
      for (int h = 0; h + 1 < static_cast<int>(chain.size()); ++h) {
        const int c = t - h;
        if (c >= 0 && c < kPipelineChunks)
          phase.flows.push_back({chain[static_cast<std::size_t>(h)], chain[static_cast<std::size_t>(h + 1)], chunk});
      }
    }
    schedule.push_back(std::move(phase));
  }
}

// One phase: inside each group, every member sends `bytes` to every other member at once
// (direct: each ordered GPU pair has its own NVLink, so no flow shares a link); `holds_all`, a
// unit that already has everything (a broadcast's root), receives nothing.
void append_direct_exchange(FlowSchedule& schedule, const Rings& groups, double bytes, int holds_all = -1) {
  Phase phase;
  for (const Units& group : groups)
    for (const int from : group)
      for (const int to : group)
        if (from != to && to != holds_all) phase.flows.push_back({from, to, bytes});
  if (!phase.flows.empty()) schedule.push_back(std::move(phase));
}

// ---- ring ----------------------------------------------------------------------------------

FlowSchedule ring_schedule(Collective collective, const Units& units, double bytes, int root) {
  const int n = static_cast<int>(units.size());
  FlowSchedule schedule;
  switch (collective) {
    case Collective::all_reduce: append_ring_steps(schedule, {units}, bytes / n, 2 * (n - 1)); break;
    case Collective::reduce_scatter:
    case Collective::all_gather: append_ring_steps(schedule, {units}, bytes / n, n - 1); break;
    case Collective::broadcast: {
      // The chain follows the ring from the root (pipelined, see append_pipelined_chains).
      Units chain;
      for (int i = 0; i < n; ++i) chain.push_back(units[static_cast<std::size_t>((root + i) % n)]);
      append_pipelined_chains(schedule, {chain}, bytes);
      break;
    }
  }
  return schedule;
}

// ---- tree ----------------------------------------------------------------------------------
// A binary tree over positions v = (rank - root) mod n: the parent of v is (v-1)/2, its children
// 2v+1 and 2v+2, its depth floor(log2(v+1)); H is the depth of the deepest position, n-1.
// The buffer is cut into kPipelineChunks chunks of S/C. Levels move in lockstep:
//   up    (reduce): in phase t, every v at depth d >= 1 sends chunk t - (H - d) to its parent
//         (it received that chunk from its children in the phase before); chunk c reaches the
//         root at the end of phase c + H - 1;
//   down  (broadcast): in phase t, every v at depth d with children sends chunk t - H - d to
//         each child (the root starts with chunk c as soon as it has reduced it).
// Up and down overlap (they use opposite one-way links). all_reduce: C + 2H - 1 phases, every
// non-root rank sends C chunks up and receives C chunks down. broadcast: down only, starting at
// phase 0 (chunk t - d): C + H - 1 phases.

int depth_of(int v) {
  int d = 0;
  for (int x = v + 1; x > 1; x /= 2) ++d;
  return d;
}

FlowSchedule tree_schedule(bool reduce_first, const Units& units, double bytes, int root) {
  const int n = static_cast<int>(units.size());
  const auto unit_at = [&](int v) { return units[static_cast<std::size_t>((v + root) % n)]; };
  const int height = depth_of(n - 1);
  const int down_start = reduce_first ? height : 0;  // phase in which the root sends chunk 0 down
  const int phases = kPipelineChunks + down_start + height - 1;
  const double chunk = bytes / kPipelineChunks;
  const auto in_range = [](int c) { return c >= 0 && c < kPipelineChunks; };
  FlowSchedule schedule;
  for (int t = 0; t < phases; ++t) {
    Phase phase;
    for (int v = 0; v < n; ++v) {
      const int d = depth_of(v);
      if (reduce_first && v > 0 && in_range(t - (height - d))) phase.flows.push_back({unit_at(v), unit_at((v - 1) / 2), chunk});
      if (in_range(t - down_start - d))
        for (const int child : {2 * v + 1, 2 * v + 2})
          if (child < n) phase.flows.push_back({unit_at(v), unit_at(child), chunk});
    }
    schedule.push_back(std::move(phase));
  }
  return schedule;
}

// ---- hierarchical --------------------------------------------------------------------------
// Ranks grouped by node (nodes in order of their first rank, ranks in group order inside a
// node): q nodes of p ranks; a rank's local index is its place in its node's group.

struct NodeGrid {
  std::vector<Units> by_node;   // [node position][local index] -> unit
  std::vector<Units> by_local;  // [local index][node position] -> unit
  int node_of_root = 0;
  int local_of_root = 0;
};

NodeGrid node_grid(const Members& members, int root) {
  std::vector<int> node_ids;
  std::unordered_map<int, std::size_t> position;  // node id -> its place in node_ids (not a scan: O(n))
  NodeGrid grid;
  for (int r = 0; r < members.size(); ++r) {
    const int node = members.nodes[static_cast<std::size_t>(r)];
    const auto [at, added] = position.try_emplace(node, node_ids.size());
    const std::size_t k = at->second;
    if (added) {
      node_ids.push_back(node);
      grid.by_node.emplace_back();
    }
    if (r == root) {
      grid.node_of_root = static_cast<int>(k);
      grid.local_of_root = static_cast<int>(grid.by_node[k].size());
    }
    grid.by_node[k].push_back(members.units[static_cast<std::size_t>(r)]);
  }
  const std::size_t p = grid.by_node.front().size();
  for (std::size_t k = 0; k < grid.by_node.size(); ++k)
    if (grid.by_node[k].size() != p)
      throw std::invalid_argument("hierarchical collective: every node must hold the same number of members; node " +
                                  std::to_string(node_ids[k]) + " holds " + std::to_string(grid.by_node[k].size()) +
                                  ", node " + std::to_string(node_ids[0]) + " holds " + std::to_string(p));
  grid.by_local.assign(p, Units{});
  for (const Units& node : grid.by_node)
    for (std::size_t l = 0; l < p; ++l) grid.by_local[l].push_back(node[l]);
  return grid;
}

// all_reduce: direct intra-node reduce-scatter (shard S/p to each node peer), one inter-node
// ring all-reduce of its shard per local index (2(q-1) phases of S/(pq), all rings in the same
// phases, each on its own NIC), direct intra-node all-gather.
// reduce_scatter: direct intra-node exchange of the S/p destined to each peer's local index,
// then per local index an inter-node ring reduce-scatter (q-1 phases of S/n).
// all_gather: the reverse (inter-node ring all-gather, then direct intra-node exchange of S/p).
// broadcast: the root scatters S/p to its node peers, each local index forwards its shard down a
// pipelined chain over the nodes (from the root's node on), then direct intra-node all-gather.
FlowSchedule hierarchical_schedule(Collective collective, const Members& members, double bytes, int root) {
  const NodeGrid grid = node_grid(members, root);
  const int q = static_cast<int>(grid.by_node.size());
  const int p = static_cast<int>(grid.by_local.size());
  const double per_peer = bytes / p;  // what one rank sends each node peer in a direct exchange
  const double shard = bytes / (static_cast<double>(p) * q);
  FlowSchedule schedule;
  switch (collective) {
    case Collective::all_reduce:
      append_direct_exchange(schedule, grid.by_node, per_peer);
      append_ring_steps(schedule, grid.by_local, shard, 2 * (q - 1));
      append_direct_exchange(schedule, grid.by_node, per_peer);
      break;
    case Collective::reduce_scatter:
      append_direct_exchange(schedule, grid.by_node, per_peer);
      append_ring_steps(schedule, grid.by_local, shard, q - 1);
      break;
    case Collective::all_gather:
      append_ring_steps(schedule, grid.by_local, shard, q - 1);
      append_direct_exchange(schedule, grid.by_node, per_peer);
      break;
    case Collective::broadcast: {
      const Units& root_node = grid.by_node[static_cast<std::size_t>(grid.node_of_root)];
      const int root_unit = root_node[static_cast<std::size_t>(grid.local_of_root)];
      Phase scatter;
      for (const int peer : root_node)
        if (peer != root_unit) scatter.flows.push_back({root_unit, peer, per_peer});
      if (!scatter.flows.empty()) schedule.push_back(std::move(scatter));
      Rings chains;
      for (const Units& same_local : grid.by_local) {
        Units chain;
        for (int i = 0; i < q; ++i) chain.push_back(same_local[static_cast<std::size_t>((grid.node_of_root + i) % q)]);
        chains.push_back(std::move(chain));
      }
      append_pipelined_chains(schedule, chains, per_peer);
      append_direct_exchange(schedule, grid.by_node, per_peer, root_unit);
      break;
    }
  }
  return schedule;
}

void check_members(const Members& members, double bytes, int root) {
  if (members.units.size() != members.nodes.size())
    throw std::invalid_argument("flow_schedule: members hold " + std::to_string(members.units.size()) + " units but " +
                                std::to_string(members.nodes.size()) + " nodes; expected one of each per rank");
  if (std::set<int>(members.units.begin(), members.units.end()).size() != members.units.size())
    throw std::invalid_argument("flow_schedule: a unit appears twice among the members; expected one rank per unit");
  if (root < 0 || root >= std::max(members.size(), 1))
    throw std::invalid_argument("flow_schedule: root " + std::to_string(root) + " is not a rank of a group of " +
                                std::to_string(members.size()));
  if (!std::isfinite(bytes) || bytes < 0.0)
    throw std::invalid_argument("flow_schedule: bytes must be finite and >= 0, got " + std::to_string(bytes));
}

}  // namespace

FlowSchedule flow_schedule(Algorithm algorithm, Collective collective, const Members& members, double bytes, int root) {
  return expand(compact_flow_schedule(algorithm, collective, members, bytes, root));
}

FlowSchedule expand(const FlowSchedule& compact) {
  FlowSchedule expanded;
  for (const Phase& phase : compact)
    for (int i = 0; i < phase.repeat; ++i) expanded.push_back(Phase{phase.flows, 1});
  return expanded;
}

FlowSchedule compact_flow_schedule(Algorithm algorithm, Collective collective, const Members& members, double bytes,
                                   int root) {
  check_members(members, bytes, root);
  if (members.size() < 2 || bytes == 0.0) return {};
  switch (algorithm) {
    case Algorithm::ring: return ring_schedule(collective, members.units, bytes, root);
    case Algorithm::tree:
      if (collective == Collective::all_reduce) return tree_schedule(true, members.units, bytes, root);
      if (collective == Collective::broadcast) return tree_schedule(false, members.units, bytes, root);
      return ring_schedule(collective, members.units, bytes, root);  // no tree form: ring, as NCCL
    case Algorithm::hierarchical: return hierarchical_schedule(collective, members, bytes, root);
  }
  return {};
}

}  // namespace asteria::sim::collective
