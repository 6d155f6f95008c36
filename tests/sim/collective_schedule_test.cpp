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
#include "sim/collective/protocol.hpp"

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

TEST(CollectiveSchedule, TreeAllReduceIsADoubleBinaryTreeOverNodesWithChainsInside) {
  // 3 nodes of 2 ranks (units 10..15), 4 channels. Channels 0 and 1 have each node's first rank
  // as head (10, 12, 14), channels 2 and 3 the second (11, 13, 15); even channels join the heads
  // by the first tree (in-order: node 1 the root of nodes 0 and 2), odd ones by the second
  // (shifted: node 0 the root of nodes 1 and 2). Inside a node, the head's chain to the other
  // rank. Height: 1 tree level + 1 chain hop = 2.
  const double S = 24000.0;
  ScheduleOptions o;
  o.channels = 4;
  const FlowSchedule s = flow_schedule(Algorithm::tree, Collective::all_reduce, consecutive(6, 2), S, 0, o);
  const int height = 2;
  ASSERT_EQ(s.size(), static_cast<std::size_t>(C + 2 * height - 1));
  EXPECT_EQ(flow_count(s), static_cast<std::size_t>(2 * (6 - 1) * C * 4));  // per channel: C up, C down per edge
  expect_every_flow(s, S / (4 * C));
  std::map<std::pair<int, int>, int> pairs;
  for (const Phase& p : s)
    for (const Flow& f : p.flows) ++pairs[{f.from, f.to}];
  const std::map<std::pair<int, int>, int> expected = {
      // heads 10, 12, 14: first tree 10-12, 14-12 (channel 0); second tree 12-10, 14-10 (channel 1)
      {{10, 12}, 2 * C}, {{12, 10}, 2 * C}, {{14, 12}, C}, {{12, 14}, C}, {{14, 10}, C}, {{10, 14}, C},
      // heads 11, 13, 15: the same trees (channels 2 and 3)
      {{11, 13}, 2 * C}, {{13, 11}, 2 * C}, {{15, 13}, C}, {{13, 15}, C}, {{15, 11}, C}, {{11, 15}, C},
      // chains: each node's pair, up and down, for the four channels
      {{10, 11}, 4 * C}, {{11, 10}, 4 * C}, {{12, 13}, 4 * C}, {{13, 12}, 4 * C}, {{14, 15}, 4 * C}, {{15, 14}, 4 * C}};
  EXPECT_EQ(pairs, expected);
  // Phase 0: only the deepest units (the chain members of each channel's non-root nodes) send, up.
  std::set<std::pair<int, int>> first;
  for (const Flow& f : s.front().flows) first.insert({f.from, f.to});
  EXPECT_EQ(first, (std::set<std::pair<int, int>>{{11, 10}, {15, 14}, {13, 12}, {10, 11}, {14, 15}, {12, 13}}));
}

TEST(CollectiveSchedule, DoubleBinaryTreesPutInnerNodesOfOneAmongTheLeavesOfTheOther) {
  for (const int q : {2, 3, 5, 6, 7, 8, 9, 12, 16, 31, 100}) {
    SCOPED_TRACE(q);
    ScheduleOptions o;
    o.channels = 2;
    o.pipeline_chunks = 1;
    const FlowSchedule s = flow_schedule(Algorithm::tree, Collective::all_reduce, consecutive(q, 1), 1.0 * q, 0, o);
    // One rank per node: both channels' trees join the same units; count each unit's children
    // per tree (down flows of chunk 0 come after the root has it, so count pairs instead).
    std::map<std::pair<int, int>, int> pairs;
    for (const Phase& p : s)
      for (const Flow& f : p.flows) ++pairs[{f.from, f.to}];
    std::map<int, int> neighbours;
    for (const auto& [pair, count] : pairs) neighbours[pair.first] += count;  // each tree edge counted per tree
    // Every node joins both trees (q - 1 edges each, up and down): 4 (q - 1) flows.
    EXPECT_EQ(flow_count(s), static_cast<std::size_t>(4 * (q - 1)));
    // A node inner in both trees would send to up to 6 neighbours (2 parents, 4 children); in
    // complementary trees every node is a leaf in one of them: 4 or fewer.
    for (const auto& [unit, sends] : neighbours) EXPECT_LE(sends, 4) << "unit " << unit;
  }
}

TEST(CollectiveSchedule, RingChannelsCrossBetweenNodesOverEveryGpuAndSoEveryNic) {
  // 2 nodes of 4 ranks, 4 channels: channel c enters each node at its rank c and leaves from
  // rank c - 1, so across the channels every rank sends across once per phase.
  const double S = 32000.0;
  ScheduleOptions o;
  o.channels = 4;
  const FlowSchedule s = flow_schedule(Algorithm::ring, Collective::all_reduce, consecutive(8, 4), S, 0, o);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(2 * (8 - 1)));
  for (const Phase& p : s) {
    ASSERT_EQ(p.flows.size(), 32u);  // 4 rings of 8
    std::set<int> across;
    for (const Flow& f : p.flows) {
      EXPECT_DOUBLE_EQ(f.bytes, S / (8 * 4));
      if ((f.from - 10) / 4 != (f.to - 10) / 4) {
        EXPECT_TRUE(across.insert(f.from).second) << "unit " << f.from << " sends across twice";
        EXPECT_EQ((f.from - 10 + 1) % 4, (f.to - 10) % 4) << "enters at the rank after the one it left";
      }
    }
    EXPECT_EQ(across.size(), 8u);
  }
  // Broadcast: each channel's ring cut at the root carries S / 4 to every other rank.
  const FlowSchedule bc = flow_schedule(Algorithm::ring, Collective::broadcast, consecutive(8, 4), S, 5, o);
  const std::map<int, double> received = bytes_received(bc);
  EXPECT_EQ(received.count(15), 0u);
  ASSERT_EQ(received.size(), 7u);
  for (const auto& [unit, bytes] : received) EXPECT_DOUBLE_EQ(bytes, S) << unit;
}

TEST(CollectiveSchedule, TreeReduceScatterAllGatherAndBroadcastRunAsRing) {
  for (const Collective c : {Collective::reduce_scatter, Collective::all_gather, Collective::broadcast}) {
    const FlowSchedule tree = flow_schedule(Algorithm::tree, c, consecutive(4), 4000.0);
    const FlowSchedule ring = flow_schedule(Algorithm::ring, c, consecutive(4), 4000.0);
    ASSERT_EQ(tree.size(), ring.size());
    for (std::size_t i = 0; i < tree.size(); ++i) EXPECT_EQ(tree[i].flows, ring[i].flows) << i;
  }
}

TEST(CollectiveSchedule, AProtocolScalesTheWireBytesAndPaysItsLatencies) {
  const Members two_nodes = consecutive(4, 2);
  const double S = 4000.0;
  for (const Protocol p : kProtocols) {
    SCOPED_TRACE(std::string(to_string(p)));
    ScheduleOptions o;
    o.protocol = p;
    const FlowSchedule bare = flow_schedule(Algorithm::ring, Collective::all_reduce, two_nodes, S);
    const FlowSchedule with = flow_schedule(Algorithm::ring, Collective::all_reduce, two_nodes, S, 0, o);
    // A first phase without flows holds the base latency; each ring step crosses between nodes.
    ASSERT_EQ(with.size(), bare.size() + 1);
    EXPECT_TRUE(with.front().flows.empty());
    EXPECT_DOUBLE_EQ(with.front().latency, base_latency(Algorithm::ring, p));
    for (std::size_t i = 0; i < bare.size(); ++i) {
      EXPECT_DOUBLE_EQ(with[i + 1].latency, step_latency(Algorithm::ring, p, Hop::network)) << i;
      ASSERT_EQ(with[i + 1].flows.size(), bare[i].flows.size());
      for (std::size_t f = 0; f < bare[i].flows.size(); ++f)
        EXPECT_DOUBLE_EQ(with[i + 1].flows[f].bytes, bare[i].flows[f].bytes * wire_factor(Algorithm::ring, p));
    }
  }
  // Inside one node, GPU-GPU step latencies; a pipelined tree pays them on chunk 0's way only.
  ScheduleOptions o;
  o.protocol = Protocol::simple;
  const FlowSchedule tree = flow_schedule(Algorithm::tree, Collective::all_reduce, consecutive(3), S, 0, o);
  const int height = 2;  // a chain of 3
  ASSERT_EQ(tree.size(), static_cast<std::size_t>(1 + C + 2 * height - 1));
  for (std::size_t t = 1; t < tree.size(); ++t)
    EXPECT_DOUBLE_EQ(tree[t].latency,
                     t <= 2 * height ? step_latency(Algorithm::tree, Protocol::simple, Hop::gpu_link) : 0.0)
        << t;
  EXPECT_GT(wire_factor(Algorithm::tree, Protocol::ll), wire_factor(Algorithm::ring, Protocol::ll));
  EXPECT_EQ(parse_protocol("ll128"), Protocol::ll128);
  EXPECT_THROW(parse_protocol("ll64"), InputError);
}

TEST(CollectiveSchedule, ChannelsAndChunksBelowOneAreRefused) {
  ScheduleOptions o;
  o.channels = 0;
  EXPECT_THROW(flow_schedule(Algorithm::ring, Collective::all_reduce, consecutive(4), 1.0, 0, o), std::invalid_argument);
  o.channels = 1;
  o.pipeline_chunks = 0;
  EXPECT_THROW(flow_schedule(Algorithm::tree, Collective::all_reduce, consecutive(4), 1.0, 0, o), std::invalid_argument);
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
