// Collective algorithms as flow schedules (sim/collective/flow_schedule.hpp), checked by
// counting: phases, flows per phase, bytes per flow, what each rank sends and receives, which
// pairs talk. No simulation runs here.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "sim/collective/flow_schedule.hpp"

namespace asteria::sim::collective {
namespace {

using platform::Collective;
constexpr int C = kPipelineChunks;

// n ranks on units first, first+1, ... (a unit numbering unlike the ranks', so a schedule that
// confused ranks with units fails), `per_node` ranks per node.
Members consecutive(int n, int per_node = 1000, int first = 10) {
  Members m;
  for (int r = 0; r < n; ++r) {
    m.units.push_back(first + r);
    m.nodes.push_back(r / per_node);
  }
  return m;
}

std::size_t flow_count(const FlowSchedule& s) {
  std::size_t count = 0;
  for (const Phase& p : s) count += p.flows.size();
  return count;
}

std::map<int, double> bytes_sent(const FlowSchedule& s) {
  std::map<int, double> sent;
  for (const Phase& p : s)
    for (const Flow& f : p.flows) sent[f.from] += f.bytes;
  return sent;
}

std::map<int, double> bytes_received(const FlowSchedule& s) {
  std::map<int, double> received;
  for (const Phase& p : s)
    for (const Flow& f : p.flows) received[f.to] += f.bytes;
  return received;
}

// Every flow of every phase carries `bytes`.
void expect_every_flow(const FlowSchedule& s, double bytes) {
  for (std::size_t i = 0; i < s.size(); ++i)
    for (const Flow& f : s[i].flows) EXPECT_DOUBLE_EQ(f.bytes, bytes) << "phase " << i;
}

TEST(CollectiveSchedule, AlgorithmNamesRoundTripAndErrorsListTheChoices) {
  for (const Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical})
    EXPECT_EQ(parse_algorithm(to_string(a)), a);
  try {
    parse_algorithm("butterfly");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "--algorithm");
    const std::string message = e.what();
    for (const char* name : {"ring", "tree", "hierarchical", "butterfly"})
      EXPECT_NE(message.find(name), std::string::npos) << message;
  }
}

TEST(CollectiveSchedule, RingAllReduceIsReduceScatterThenAllGatherAroundTheRing) {
  const int n = 4;
  const double S = 4000.0;
  const FlowSchedule s = flow_schedule(Algorithm::ring, Collective::all_reduce, consecutive(n), S);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(2 * (n - 1)));
  for (const Phase& p : s) {
    ASSERT_EQ(p.flows.size(), static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) EXPECT_EQ(p.flows[static_cast<std::size_t>(r)], (Flow{10 + r, 10 + (r + 1) % n, S / n}));
  }
}

TEST(CollectiveSchedule, RingAllReduceSendsTwiceNMinusOneOverNOfTheBufferPerRank) {
  const double S = 1 << 20;
  for (const int n : {2, 3, 5, 8}) {
    SCOPED_TRACE(n);
    const FlowSchedule s = flow_schedule(Algorithm::ring, Collective::all_reduce, consecutive(n), S);
    const std::map<int, double> sent = bytes_sent(s);
    ASSERT_EQ(sent.size(), static_cast<std::size_t>(n));
    for (const auto& [unit, bytes] : sent) EXPECT_DOUBLE_EQ(bytes, 2.0 * (n - 1) / n * S) << unit;
  }
}

TEST(CollectiveSchedule, RingReduceScatterAndAllGatherTakeNMinusOneStepsOfOneShard) {
  const int n = 5;
  const double S = 5000.0;  // the gathered buffer: shards of 1000
  for (const Collective c : {Collective::reduce_scatter, Collective::all_gather}) {
    SCOPED_TRACE(platform::to_string(c));
    const FlowSchedule s = flow_schedule(Algorithm::ring, c, consecutive(n), S);
    ASSERT_EQ(s.size(), static_cast<std::size_t>(n - 1));
    for (const Phase& p : s) EXPECT_EQ(p.flows.size(), static_cast<std::size_t>(n));
    expect_every_flow(s, 1000.0);
  }
}

TEST(CollectiveSchedule, RingBroadcastIsAPipelinedChainFromTheRoot) {
  const int n = 5;
  const int root = 2;
  const double S = 8000.0;
  const FlowSchedule s = flow_schedule(Algorithm::ring, Collective::broadcast, consecutive(n), S, root);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(C + n - 2));
  EXPECT_EQ(flow_count(s), static_cast<std::size_t>((n - 1) * C));
  expect_every_flow(s, S / C);
  // The first phase: only the root sends (chunk 0 to the next rank); the last: only the last hop.
  ASSERT_EQ(s.front().flows.size(), 1u);
  EXPECT_EQ(s.front().flows[0], (Flow{10 + root, 10 + (root + 1) % n, S / C}));
  ASSERT_EQ(s.back().flows.size(), 1u);
  EXPECT_EQ(s.back().flows[0].to, 10 + (root + n - 1) % n);
  // Every rank but the root receives the whole buffer once; the root receives nothing.
  const std::map<int, double> received = bytes_received(s);
  EXPECT_EQ(received.count(10 + root), 0u);
  ASSERT_EQ(received.size(), static_cast<std::size_t>(n - 1));
  for (const auto& [unit, bytes] : received) EXPECT_DOUBLE_EQ(bytes, S) << unit;
}

TEST(CollectiveSchedule, TreeAllReduceReducesUpAndBroadcastsDownInPipelinedChunks) {
  // 7 ranks, root 3: positions v = rank - 3 mod 7 form a full binary tree of height 2.
  const int n = 7;
  const int root = 3;
  const double S = 8000.0;
  const auto unit_at = [&](int v) { return 10 + (v + root) % n; };
  const FlowSchedule s = flow_schedule(Algorithm::tree, Collective::all_reduce, consecutive(n), S, root);
  const int height = 2;
  ASSERT_EQ(s.size(), static_cast<std::size_t>(C + 2 * height - 1));
  EXPECT_EQ(flow_count(s), static_cast<std::size_t>(2 * (n - 1) * C));  // C chunks up and down per edge
  expect_every_flow(s, S / C);
  // Only parent-child pairs talk, each direction C times.
  std::map<std::pair<int, int>, int> pairs;
  for (const Phase& p : s)
    for (const Flow& f : p.flows) ++pairs[{f.from, f.to}];
  ASSERT_EQ(pairs.size(), static_cast<std::size_t>(2 * (n - 1)));
  for (int v = 1; v < n; ++v) {
    EXPECT_EQ((pairs[{unit_at(v), unit_at((v - 1) / 2)}]), C) << v;
    EXPECT_EQ((pairs[{unit_at((v - 1) / 2), unit_at(v)}]), C) << v;
  }
  // Phase 0: only the deepest level (positions 3..6) sends, up.
  ASSERT_EQ(s.front().flows.size(), 4u);
  for (const Flow& f : s.front().flows) EXPECT_TRUE(f.to == unit_at(1) || f.to == unit_at(2)) << f.to;
  // The root sends its first chunk down in phase `height`, once both subtrees have reduced it.
  for (std::size_t t = 0; t < s.size(); ++t) {
    for (const Flow& f : s[t].flows) {
      if (f.from == unit_at(0)) {
        EXPECT_GE(t, static_cast<std::size_t>(height));
      }
    }
  }
}

TEST(CollectiveSchedule, TreeBroadcastSendsDownOnlyAndEveryRankGetsTheBuffer) {
  const int n = 6;  // positions 0..5: height 2, position 2 has one child
  const double S = 8000.0;
  const FlowSchedule s = flow_schedule(Algorithm::tree, Collective::broadcast, consecutive(n), S);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(C + 2 - 1));
  EXPECT_EQ(flow_count(s), static_cast<std::size_t>((n - 1) * C));
  const std::map<int, double> received = bytes_received(s);
  EXPECT_EQ(received.count(10), 0u);
  for (int r = 1; r < n; ++r) EXPECT_DOUBLE_EQ(received.at(10 + r), S) << r;
}

TEST(CollectiveSchedule, TreeReduceScatterAndAllGatherFallBackToRing) {
  for (const Collective c : {Collective::reduce_scatter, Collective::all_gather}) {
    const FlowSchedule tree = flow_schedule(Algorithm::tree, c, consecutive(4), 4000.0);
    const FlowSchedule ring = flow_schedule(Algorithm::ring, c, consecutive(4), 4000.0);
    ASSERT_EQ(tree.size(), ring.size());
    for (std::size_t i = 0; i < tree.size(); ++i) EXPECT_EQ(tree[i].flows, ring[i].flows) << i;
  }
}

// 2 nodes x 4 ranks whose rank order alternates between the nodes (ranks 0, 2, 4, 6 on node 7,
// the others on node 3): the node grouping comes from `nodes`, not from rank order.
Members two_nodes_interleaved() {
  Members m;
  for (int r = 0; r < 8; ++r) {
    m.units.push_back(100 + r);
    m.nodes.push_back(r % 2 == 0 ? 7 : 3);
  }
  return m;
}

TEST(CollectiveSchedule, HierarchicalAllReduceIsIntraNodeThenRingsPerLocalIndexThenIntraNode) {
  const Members m = two_nodes_interleaved();
  std::map<int, int> node_of;
  std::map<int, int> local_of;  // the place of the unit among its node's ranks
  std::map<int, int> seen;
  for (int r = 0; r < 8; ++r) {
    node_of[m.units[static_cast<std::size_t>(r)]] = m.nodes[static_cast<std::size_t>(r)];
    local_of[m.units[static_cast<std::size_t>(r)]] = seen[m.nodes[static_cast<std::size_t>(r)]]++;
  }
  const double S = 8000.0;
  const int p = 4;
  const int q = 2;
  const FlowSchedule s = flow_schedule(Algorithm::hierarchical, Collective::all_reduce, m, S);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(1 + 2 * (q - 1) + 1));
  for (const std::size_t intra : {std::size_t{0}, s.size() - 1}) {
    SCOPED_TRACE(intra);
    EXPECT_EQ(s[intra].flows.size(), static_cast<std::size_t>(q * p * (p - 1)));  // every ordered pair of a node
    std::set<std::pair<int, int>> pairs;
    for (const Flow& f : s[intra].flows) {
      EXPECT_EQ(node_of.at(f.from), node_of.at(f.to));
      EXPECT_DOUBLE_EQ(f.bytes, S / p);
      pairs.insert({f.from, f.to});
    }
    EXPECT_EQ(pairs.size(), s[intra].flows.size());  // no pair twice: each NVLink carries one flow
  }
  for (std::size_t middle = 1; middle + 1 < s.size(); ++middle) {
    SCOPED_TRACE(middle);
    EXPECT_EQ(s[middle].flows.size(), static_cast<std::size_t>(p * q));
    std::set<int> senders;
    for (const Flow& f : s[middle].flows) {
      EXPECT_NE(node_of.at(f.from), node_of.at(f.to));
      EXPECT_EQ(local_of.at(f.from), local_of.at(f.to));
      EXPECT_DOUBLE_EQ(f.bytes, S / (p * q));
      senders.insert(f.from);
    }
    EXPECT_EQ(senders.size(), 8u);  // every rank sends, one flow each (one NIC each)
  }
}

TEST(CollectiveSchedule, HierarchicalOnOneNodeIsIntraNodeOnlyAndOneRankPerNodeIsTheRing) {
  const double S = 6000.0;
  const FlowSchedule one_node = flow_schedule(Algorithm::hierarchical, Collective::all_reduce, consecutive(3, 3), S);
  ASSERT_EQ(one_node.size(), 2u);
  for (const Phase& p : one_node) EXPECT_EQ(p.flows.size(), 6u);
  expect_every_flow(one_node, S / 3);

  const Members one_per_node = consecutive(4, 1);
  const FlowSchedule hierarchical = flow_schedule(Algorithm::hierarchical, Collective::all_reduce, one_per_node, S);
  const FlowSchedule ring = flow_schedule(Algorithm::ring, Collective::all_reduce, one_per_node, S);
  ASSERT_EQ(hierarchical.size(), ring.size());
  for (std::size_t i = 0; i < ring.size(); ++i) EXPECT_EQ(hierarchical[i].flows, ring[i].flows) << i;
}

TEST(CollectiveSchedule, HierarchicalReduceScatterAllGatherAndBroadcastMoveTheRightShares) {
  const Members m = consecutive(8, 4);  // nodes 0 and 1, 4 ranks each
  const double S = 8000.0;
  const FlowSchedule rs = flow_schedule(Algorithm::hierarchical, Collective::reduce_scatter, m, S);
  ASSERT_EQ(rs.size(), 2u);  // one direct exchange, q - 1 = 1 ring step
  expect_every_flow({rs[0]}, S / 4);
  expect_every_flow({rs[1]}, S / 8);
  const FlowSchedule ag = flow_schedule(Algorithm::hierarchical, Collective::all_gather, m, S);
  ASSERT_EQ(ag.size(), 2u);  // the reverse
  expect_every_flow({ag[0]}, S / 8);
  expect_every_flow({ag[1]}, S / 4);

  const int root = 5;  // node 1
  const FlowSchedule bc = flow_schedule(Algorithm::hierarchical, Collective::broadcast, m, S, root);
  ASSERT_EQ(bc.size(), static_cast<std::size_t>(1 + C + 2 - 2 + 1));  // scatter, chains of 2, all-gather
  EXPECT_EQ(bc.front().flows.size(), 3u);
  for (const Flow& f : bc.front().flows) EXPECT_EQ(f.from, 10 + root);
  const std::map<int, double> received = bytes_received(bc);
  EXPECT_EQ(received.count(10 + root), 0u);
  ASSERT_EQ(received.size(), 7u);
  for (const auto& [unit, bytes] : received) EXPECT_DOUBLE_EQ(bytes, S) << unit;
}

TEST(CollectiveSchedule, HierarchicalRefusesNodesOfUnequalSize) {
  Members m = consecutive(5, 3);  // 3 ranks on node 0, 2 on node 1
  try {
    flow_schedule(Algorithm::hierarchical, Collective::all_reduce, m, 1000.0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("same number of members"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(flow_schedule(Algorithm::ring, Collective::all_reduce, m, 1000.0));
}

TEST(CollectiveSchedule, OneRankOrNoBytesIsAnEmptySchedule) {
  for (const Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical})
    for (const Collective c :
         {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather, Collective::broadcast}) {
      EXPECT_TRUE(flow_schedule(a, c, consecutive(1), 1000.0).empty());
      EXPECT_TRUE(flow_schedule(a, c, consecutive(4, 2), 0.0).empty());
    }
}

TEST(CollectiveSchedule, BadMembersRootOrBytesAreRefused) {
  Members m = consecutive(4);
  m.nodes.pop_back();
  EXPECT_THROW(flow_schedule(Algorithm::ring, Collective::all_reduce, m, 1.0), std::invalid_argument);
  Members twice = consecutive(3);
  twice.units[2] = twice.units[0];
  EXPECT_THROW(flow_schedule(Algorithm::ring, Collective::all_reduce, twice, 1.0), std::invalid_argument);
  EXPECT_THROW(flow_schedule(Algorithm::ring, Collective::broadcast, consecutive(3), 1.0, 3), std::invalid_argument);
  EXPECT_THROW(flow_schedule(Algorithm::ring, Collective::all_reduce, consecutive(3), -1.0), std::invalid_argument);
}

TEST(CollectiveSchedule, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_reduce, 8), 2.0 * 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_reduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_gather, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::broadcast, 16), 1.0);
  EXPECT_THROW(bus_bandwidth_factor(Collective::all_reduce, 0), std::invalid_argument);
}

}  // namespace
}  // namespace asteria::sim::collective
