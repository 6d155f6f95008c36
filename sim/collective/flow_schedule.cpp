#include "sim/collective/flow_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "core/common/error.hpp"

namespace asteria::sim::collective {

using platform::Collective;

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

// Pipelined chains: chain[0] holds `bytes`, cut into `chunks` chunks; in phase t hop h
// (chain[h] -> chain[h+1]) forwards chunk t - h. A chain of m members takes
// chunks + m - 2 phases instead of m - 1 phases of the whole buffer: for large
// buffers the time tends to that of one hop, as NCCL's pipelined ring broadcast.
void append_pipelined_chains(FlowSchedule& schedule, const Rings& chains, double bytes, int chunks) {
  std::size_t longest = 0;
  for (const Units& chain : chains) longest = std::max(longest, chain.size());
  if (longest < 2) return;
  const int hops = static_cast<int>(longest) - 1;
  const double chunk = bytes / chunks;
  for (int t = 0; t < chunks + hops - 1; ++t) {
    Phase phase;
    phase.first_chunk = t < hops;  // chunk 0 crosses hop t in phase t
    for (const Units& chain : chains) {
      // Hop h forwards chunk t - h: the hops from t - chunks + 1 to t (a long chain's window).
      const int last_hop = std::min(t, static_cast<int>(chain.size()) - 2);
      for (int h = std::max(0, t - chunks + 1); h <= last_hop; ++h)
        phase.flows.push_back({chain[static_cast<std::size_t>(h)], chain[static_cast<std::size_t>(h + 1)], chunk});
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

// Ranks node by node: nodes in order of their first rank, ranks in group order inside a node.
std::vector<Units> units_by_node(const Members& members) {
  std::vector<Units> by_node;
  std::unordered_map<int, std::size_t> position;  // node id -> its place in by_node
  for (int r = 0; r < members.size(); ++r) {
    const auto [at, added] = position.try_emplace(members.nodes[static_cast<std::size_t>(r)], by_node.size());
    if (added) by_node.emplace_back();
    by_node[at->second].push_back(members.units[static_cast<std::size_t>(r)]);
  }
  return by_node;
}

// A node's units from its `first`-th (mod their count) on, wrapping around.
Units rotated(const Units& node, int first) {
  const auto m = static_cast<int>(node.size());
  Units out;
  for (int i = 0; i < m; ++i) out.push_back(node[static_cast<std::size_t>((first + i) % m)]);
  return out;
}

// ---- ring ----------------------------------------------------------------------------------

// Channel c's ring: every node entered at its unit c (mod its units), nodes in order.
Rings channel_rings(const std::vector<Units>& by_node, int channels) {
  Rings rings;
  for (int c = 0; c < channels; ++c) {
    Units ring;
    for (const Units& node : by_node) {
      const Units entered = rotated(node, c);
      ring.insert(ring.end(), entered.begin(), entered.end());
    }
    rings.push_back(std::move(ring));
  }
  return rings;
}

FlowSchedule ring_schedule(Collective collective, const Members& members, double bytes, int root,
                           const ScheduleOptions& options) {
  const int n = members.size();
  const int channels = options.channels;
  const Rings rings = channel_rings(units_by_node(members), channels);
  const double shard = bytes / (static_cast<double>(n) * channels);
  FlowSchedule schedule;
  switch (collective) {
    case Collective::all_reduce: append_ring_steps(schedule, rings, shard, 2 * (n - 1)); break;
    case Collective::reduce_scatter:
    case Collective::all_gather: append_ring_steps(schedule, rings, shard, n - 1); break;
    case Collective::broadcast: {
      // Each channel's ring, cut at the root (pipelined, see append_pipelined_chains).
      const int root_unit = members.units[static_cast<std::size_t>(root)];
      Rings chains;
      for (const Units& ring : rings) {
        const auto at = static_cast<int>(std::find(ring.begin(), ring.end(), root_unit) - ring.begin());
        chains.push_back(rotated(ring, at));
      }
      append_pipelined_chains(schedule, chains, bytes / channels, options.pipeline_chunks);
      break;
    }
  }
  return schedule;
}

// ---- tree ----------------------------------------------------------------------------------
// The double binary tree over q node positions. The first tree is the in-order tree on
// x = v + 1 = 1..q: x's level is its lowest set bit b, its parent (x - b) | 2b (climbing on while
// that is past q), the root the largest power of two <= q. Its leaves are exactly the odd x (the
// even positions v), its inner nodes the odd positions. The second tree is the first mirrored
// (q even) or shifted by one position (q odd), so that its inner nodes are the first's leaves
// (as NCCL builds its two trees). parent[v] = -1 for the root.

int lowest_bit(int x) { return x & -x; }
int in_order_parent(int x) { return (x - lowest_bit(x)) | (2 * lowest_bit(x)); }

std::vector<int> node_tree(int q, bool second) {
  int root = 1;
  while (root * 2 <= q) root *= 2;
  std::vector<int> first(static_cast<std::size_t>(q), -1);
  for (int x = 1; x <= q; ++x) {
    if (x == root) continue;
    int p = in_order_parent(x);
    while (p > q) p = in_order_parent(p);
    first[static_cast<std::size_t>(x - 1)] = p - 1;
  }
  if (!second) return first;
  // Position v of the second tree is position map(v) of the first.
  const auto map = [q](int v) { return q % 2 == 0 ? q - 1 - v : (v + 1) % q; };
  const auto unmap = [q](int v) { return q % 2 == 0 ? q - 1 - v : (v - 1 + q) % q; };
  std::vector<int> tree(static_cast<std::size_t>(q), -1);
  for (int v = 0; v < q; ++v) {
    const int p = first[static_cast<std::size_t>(map(v))];
    tree[static_cast<std::size_t>(v)] = p < 0 ? -1 : unmap(p);
  }
  return tree;
}

// One channel's tree over units: each unit's parent (-1 at the root) and depth.
struct UnitTree {
  std::vector<int> units, parents, depths;  // parents: indices into units
  int height = 0;
};

// Channel c: the node tree (first for even c, second for odd), each node's chain from its head
// (its unit c / 2 mod its units: channels 2k and 2k + 1 share a head, hence a NIC, which so
// carries a tree in which its node is inner and one in which it is a leaf); a head's parent is the
// head of its node's parent, a chain member's the member before it.
UnitTree channel_tree(const std::vector<Units>& by_node, int channel) {
  const int q = static_cast<int>(by_node.size());
  const std::vector<int> nodes = node_tree(q, channel % 2 == 1);
  std::vector<int> node_depth(static_cast<std::size_t>(q), -1);
  const std::function<int(int)> depth_of_node = [&](int k) {
    int& d = node_depth[static_cast<std::size_t>(k)];
    if (d < 0) d = nodes[static_cast<std::size_t>(k)] < 0 ? 0 : depth_of_node(nodes[static_cast<std::size_t>(k)]) + 1;
    return d;
  };
  UnitTree tree;
  std::vector<int> head(static_cast<std::size_t>(q), 0);  // index of each node's head in tree.units
  for (int k = 0; k < q; ++k) {
    head[static_cast<std::size_t>(k)] = static_cast<int>(tree.units.size());
    const Units chain = rotated(by_node[static_cast<std::size_t>(k)], channel / 2);
    for (std::size_t i = 0; i < chain.size(); ++i) {
      tree.units.push_back(chain[i]);
      tree.parents.push_back(i == 0 ? -1 : static_cast<int>(tree.units.size()) - 2);
      tree.depths.push_back(depth_of_node(k) + static_cast<int>(i));
    }
  }
  for (int k = 0; k < q; ++k) {
    const int parent_node = nodes[static_cast<std::size_t>(k)];
    if (parent_node >= 0)
      tree.parents[static_cast<std::size_t>(head[static_cast<std::size_t>(k)])] =
          head[static_cast<std::size_t>(parent_node)];
  }
  for (const int d : tree.depths) tree.height = std::max(tree.height, d);
  return tree;
}

// tree_phases: the buffer of each channel is cut into K chunks; levels move in lockstep. With H
// the channel's height:
//   up    (reduce): in phase t, every unit at depth d >= 1 sends chunk t - (H - d) to its parent
//         (it received that chunk from its children in the phase before); chunk c reaches the
//         root at the end of phase c + H - 1;
//   down  (broadcast): in phase t, every unit at depth d with children sends chunk t - H - d to
//         each child (the root sends chunk c as soon as it has reduced it).
// Up and down overlap (they use opposite one-way links): K + 2H - 1 phases per channel, the
// channels side by side; every non-root unit sends K chunks up and receives K chunks down.
FlowSchedule tree_all_reduce(const Members& members, double bytes, const ScheduleOptions& options) {
  const std::vector<Units> by_node = units_by_node(members);
  const int chunks = options.pipeline_chunks;
  const double chunk = bytes / (static_cast<double>(options.channels) * chunks);
  const auto in_range = [chunks](int c) { return c >= 0 && c < chunks; };
  std::vector<UnitTree> trees;
  int phases = 0;
  for (int c = 0; c < options.channels; ++c) {
    trees.push_back(channel_tree(by_node, c));
    phases = std::max(phases, chunks + 2 * trees.back().height - 1);
  }
  FlowSchedule schedule(static_cast<std::size_t>(phases));
  int deepest = 0;
  for (const UnitTree& tree : trees) deepest = std::max(deepest, tree.height);
  // Chunk 0 goes up in phases 0 .. H-1 and down in H .. 2H-1.
  for (int t = 0; t < phases; ++t) schedule[static_cast<std::size_t>(t)].first_chunk = t < 2 * deepest;
  for (const UnitTree& tree : trees) {
    const int height = tree.height;
    for (std::size_t v = 0; v < tree.units.size(); ++v) {
      const int d = tree.depths[v];
      const int parent = tree.parents[v];
      if (parent < 0) continue;
      const int from = tree.units[v];
      const int to = tree.units[static_cast<std::size_t>(parent)];
      const int parent_depth = tree.depths[static_cast<std::size_t>(parent)];
      for (int t = 0; t < phases; ++t) {
        Phase& phase = schedule[static_cast<std::size_t>(t)];
        if (in_range(t - (height - d))) phase.flows.push_back({from, to, chunk});
        if (in_range(t - height - parent_depth)) phase.flows.push_back({to, from, chunk});
      }
    }
  }
  std::erase_if(schedule, [](const Phase& phase) { return phase.flows.empty(); });
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
FlowSchedule hierarchical_schedule(Collective collective, const Members& members, double bytes, int root,
                                   int pipeline_chunks) {
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
      append_pipelined_chains(schedule, chains, per_peer, pipeline_chunks);
      append_direct_exchange(schedule, grid.by_node, per_peer, root_unit);
      break;
    }
  }
  return schedule;
}

void check_members(const Members& members, double bytes, int root, const ScheduleOptions& options) {
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
  if (options.channels < 1 || options.pipeline_chunks < 1)
    throw std::invalid_argument("flow_schedule: channels and pipeline_chunks must be >= 1, got " +
                                std::to_string(options.channels) + " and " + std::to_string(options.pipeline_chunks));
}

// The protocol's costs (see the header): wire bytes, each phase's step latency by its slowest hop,
// the base latency up front.
void apply_protocol(FlowSchedule& schedule, Algorithm algorithm, Protocol protocol, const Members& members) {
  std::unordered_map<int, int> node_of;
  for (int r = 0; r < members.size(); ++r)
    node_of[members.units[static_cast<std::size_t>(r)]] = members.nodes[static_cast<std::size_t>(r)];
  const double wire = wire_factor(algorithm, protocol);
  for (Phase& phase : schedule) {
    Hop slowest = Hop::gpu_link;
    for (Flow& flow : phase.flows) {
      flow.bytes *= wire;
      if (node_of.at(flow.from) != node_of.at(flow.to)) slowest = Hop::network;
    }
    if (phase.first_chunk) phase.latency += step_latency(algorithm, protocol, slowest);
  }
  Phase start;
  start.latency = base_latency(algorithm, protocol);
  if (start.latency <= 0.0) return;
  schedule.push_back(std::move(start));
  std::rotate(schedule.rbegin(), schedule.rbegin() + 1, schedule.rend());  // to the front
}

// Consecutive phases that move the same flows with the same latency as one phase repeated (the
// steady state of a pipeline: every level busy with its chunk).
FlowSchedule merged_repeats(FlowSchedule schedule) {
  FlowSchedule merged;
  for (Phase& phase : schedule) {
    if (!merged.empty()) {
      Phase& last = merged.back();
      if (last.latency == phase.latency && last.first_chunk == phase.first_chunk && last.flows == phase.flows) {
        last.repeat += phase.repeat;
        continue;
      }
    }
    merged.push_back(std::move(phase));
  }
  return merged;
}

FlowSchedule schedule_of(Algorithm algorithm, Collective collective, const Members& members, double bytes, int root,
                         const ScheduleOptions& options) {
  switch (algorithm) {
    case Algorithm::ring: return ring_schedule(collective, members, bytes, root, options);
    case Algorithm::tree:
      if (collective == Collective::all_reduce) return tree_all_reduce(members, bytes, options);
      return ring_schedule(collective, members, bytes, root, options);  // no tree form: ring, as NCCL
    case Algorithm::hierarchical:
      return hierarchical_schedule(collective, members, bytes, root, options.pipeline_chunks);
  }
  return {};
}

}  // namespace

FlowSchedule flow_schedule(Algorithm algorithm, Collective collective, const Members& members, double bytes, int root,
                           const ScheduleOptions& options) {
  return expand(compact_flow_schedule(algorithm, collective, members, bytes, root, options));
}

FlowSchedule expand(const FlowSchedule& compact) {
  FlowSchedule expanded;
  for (const Phase& phase : compact)
    for (int i = 0; i < phase.repeat; ++i) expanded.push_back(Phase{phase.flows, 1, phase.latency, phase.first_chunk});
  return expanded;
}

FlowSchedule compact_flow_schedule(Algorithm algorithm, Collective collective, const Members& members, double bytes,
                                   int root, const ScheduleOptions& options) {
  check_members(members, bytes, root, options);
  if (members.size() < 2 || bytes == 0.0) return {};
  FlowSchedule schedule = schedule_of(algorithm, collective, members, bytes, root, options);
  // A collective with no tree form runs, and costs, as ring.
  const Algorithm ran =
      algorithm == Algorithm::tree && collective != Collective::all_reduce ? Algorithm::ring : algorithm;
  if (options.protocol) apply_protocol(schedule, ran, *options.protocol, members);
  return merged_repeats(std::move(schedule));
}

}  // namespace asteria::sim::collective
