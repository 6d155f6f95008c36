// Collectives run as flows over the simulated topology (sim/collective/run_flows.hpp) take the
// time worked out by hand. The profile is the tests' tiny unit with uniform links:
//   NVLink (gpu_link)  B = 1e10 B/s, L = 1 µs per direction per pair;
//   NIC                1e9 B/s, 5 µs each way; a flow between nodes crosses nic-up (5 µs),
//                      the backbone (a fat pipe, no latency) and nic-down (5 µs): 10 µs, 1e9 B/s.
// A flow alone on its links takes latency + bytes / bandwidth (CM02, no cross traffic); flows
// that share a link with the same latency share its bandwidth equally. A phase lasts as long as
// its slowest flow. Every test runs its simulation in a child process (one engine per process).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include <simgrid/s4u.hpp>

#include "sim/collective/collective_choice.hpp"
#include "sim/collective/flow_schedule.hpp"
#include "sim/collective/protocol.hpp"
#include "sim/collective/run_flows.hpp"
#include "sim/simulation.hpp"
#include "sim/topology.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim::collective {
namespace {

using platform::Collective;
using platform::Platform;
using testing::q;
using testing::run_in_child;
using testing::tolerance;

constexpr double kLinkBandwidth = 1e10;
constexpr double kLinkLatency = 1e-6;
constexpr double kNicBandwidth = 1e9;
constexpr double kNicLatency = 5e-6;

SimulationOptions uniform_options(int units, int units_per_node, int nics_per_node) {
  SimulationOptions o = testing::tiny_options(platform::Numerics::shapes);
  o.profile.node.units_per_node = q(units_per_node);
  o.profile.node.nics_per_node = q(nics_per_node);
  o.profile.node.gpu_link = {q(kLinkBandwidth), q(kLinkLatency)};
  o.profile.node.nic = {q(kNicBandwidth), q(kNicLatency)};
  o.units = units;
  o.host_workers_per_unit = 1;
  return o;
}

// Ranks 0..units-1 on units 0..units-1, nodes as the topology fills them.
Members all_units(int units, int units_per_node) {
  Members m;
  for (int u = 0; u < units; ++u) {
    m.units.push_back(u);
    m.nodes.push_back(u / units_per_node);
  }
  return m;
}

// Simulated seconds `schedule` takes, run by unit 0's main (the other mains return at once).
double simulated_seconds(const SimulationOptions& options, const FlowSchedule& schedule) {
  Simulation sim(options);
  double seconds = -1.0;
  sim.run([&](int unit, Platform& p) {
    if (unit != 0) return;
    const Topology& topology = sim.topology();
    const double start = p.clock().now();
    run_flows(schedule, topology);
    seconds = p.clock().now() - start;
  });
  return seconds;
}

TEST(CollectiveFlows, RingAllReduceInsideANodeTakesTheAnalyticTime) {
  run_in_child([] {
    // n = 4 GPUs of one node, S = 4e6 bytes: 2(n-1) = 6 phases of flows of S/n = 1e6 bytes, each
    // on its own NVLink: 6 · (1e-6 + 1e6 / 1e10) = 6 · 1.01e-4 = 6.06e-4 s.
    const int n = 4;
    const double S = 4e6;
    const FlowSchedule schedule = flow_schedule(Algorithm::ring, Collective::all_reduce, all_units(n, 4), S);
    const double expected = 2.0 * (n - 1) * (kLinkLatency + S / (n * kLinkBandwidth));
    EXPECT_DOUBLE_EQ(expected, 6.06e-4);
    const double seconds = simulated_seconds(uniform_options(n, 4, 1), schedule);
    EXPECT_NEAR(seconds, expected, tolerance(expected));
  });
}

TEST(CollectiveFlows, RingAllReduceAcrossTwoNodesIsPacedByTheNics) {
  run_in_child([] {
    // 2 nodes x 2 GPUs, one NIC per node, ring 0 -> 1 -> 2 -> 3 -> 0: flows 1 -> 2 and 3 -> 0
    // cross the NICs (each on its own nic-up and nic-down), the others stay on NVLink. S = 4e6:
    // flows of 1e6 bytes; over the NICs 2·5e-6 + 1e6/1e9 = 1.01e-3 s (over NVLink 1.01e-4 s, done
    // before), so each of the 6 phases takes 1.01e-3 s: 2(n-1)·(L + S/(n·B)) with L = 1e-5 s,
    // B = 1e9 B/s, = 6.06e-3 s.
    const int n = 4;
    const double S = 4e6;
    const FlowSchedule schedule = flow_schedule(Algorithm::ring, Collective::all_reduce, all_units(n, 2), S);
    const double path_latency = 2.0 * kNicLatency;
    const double expected = 2.0 * (n - 1) * (path_latency + S / (n * kNicBandwidth));
    EXPECT_DOUBLE_EQ(expected, 6.06e-3);
    const double seconds = simulated_seconds(uniform_options(n, 2, 1), schedule);
    EXPECT_NEAR(seconds, expected, tolerance(expected));
  });
}

TEST(CollectiveFlows, HierarchicalAllReduceOnTwoNodesOfFourIsTheSumOfItsPhases) {
  run_in_child([] {
    // 2 nodes x 4 GPUs, 4 NICs per node (GPU l on NIC l), S = 8e6 bytes:
    //   intra-node reduce-scatter: every GPU sends S/4 = 2e6 bytes to each of its 3 node peers
    //     at once, each flow on its own NVLink:            1e-6 + 2e6/1e10      = 2.01e-4 s
    //   inter-node ring all-reduce of each shard, 4 rings of 2 (one per local index, each on
    //     its own NIC): 2 phases of S/8 = 1e6 bytes:   2 · (1e-5 + 1e6/1e9)     = 2.02e-3 s
    //   intra-node all-gather, as the reduce-scatter:                             2.01e-4 s
    //   total                                                                     2.422e-3 s
    const double S = 8e6;
    const FlowSchedule schedule = flow_schedule(Algorithm::hierarchical, Collective::all_reduce, all_units(8, 4), S);
    const double intra = kLinkLatency + S / 4 / kLinkBandwidth;
    const double inter = 2.0 * (2.0 * kNicLatency + S / 8 / kNicBandwidth);
    const double expected = intra + inter + intra;
    EXPECT_NEAR(expected, 2.422e-3, 1e-15);
    const double seconds = simulated_seconds(uniform_options(8, 4, 4), schedule);
    EXPECT_NEAR(seconds, expected, tolerance(expected));
  });
}

TEST(CollectiveFlows, GpusThatShareANicShareItsBandwidth) {
  run_in_child([] {
    // As above with 2 NICs per node: GPUs 0 and 2 of a node use NIC 0, GPUs 1 and 3 NIC 1, so
    // two rings' flows (1e6 bytes each, same latency) share each NIC: 2e6 bytes at 1e9 B/s
    // after 1e-5 s, 2.01e-3 s per inter-node phase. Total 2 · 2.01e-4 + 2 · 2.01e-3 = 4.422e-3 s.
    const double S = 8e6;
    const FlowSchedule schedule = flow_schedule(Algorithm::hierarchical, Collective::all_reduce, all_units(8, 4), S);
    const double intra = kLinkLatency + S / 4 / kLinkBandwidth;
    const double inter = 2.0 * (2.0 * kNicLatency + 2.0 * (S / 8) / kNicBandwidth);
    const double expected = intra + inter + intra;
    EXPECT_NEAR(expected, 4.422e-3, 1e-15);
    const double seconds = simulated_seconds(uniform_options(8, 4, 2), schedule);
    EXPECT_NEAR(seconds, expected, tolerance(expected));
  });
}

TEST(CollectiveFlows, PipelinedTreeAllReduceOfTwoGpusTakesChunksPlusOnePhases) {
  run_in_child([] {
    // 2 GPUs of one node: the tree is one edge; C = 8 chunks of S/8 = 1e6 bytes go up while
    // earlier chunks come down (opposite NVLinks), C + 1 = 9 phases of 1e-6 + 1e6/1e10 s each
    // = 9.09e-4 s.
    const double S = 8e6;
    const FlowSchedule schedule = flow_schedule(Algorithm::tree, Collective::all_reduce, all_units(2, 4), S);
    const double expected = (kPipelineChunks + 1) * (kLinkLatency + S / kPipelineChunks / kLinkBandwidth);
    EXPECT_NEAR(expected, 9.09e-4, 1e-15);
    const double seconds = simulated_seconds(uniform_options(2, 4, 1), schedule);
    EXPECT_NEAR(seconds, expected, tolerance(expected));
  });
}

TEST(CollectiveFlows, EachUnitUsesTheNicOfItsLocalIndexAndOneNodeHasNone) {
  run_in_child([] {
    Simulation sim(uniform_options(8, 4, 2));
    sim.run([&](int unit, Platform&) {
      if (unit != 0) return;
      const Topology& topology = sim.topology();
      ASSERT_EQ(topology.units.size(), 8u);
      EXPECT_EQ(topology.nodes, 2);
      const char* expected_up[] = {"nic-up0.0", "nic-up0.1", "nic-up0.0", "nic-up0.1",
                                   "nic-up1.0", "nic-up1.1", "nic-up1.0", "nic-up1.1"};
      for (std::size_t u = 0; u < 8; ++u) {
        const UnitResources& r = topology.units[u];
        ASSERT_NE(r.nic_up, nullptr) << u;
        ASSERT_NE(r.nic_down, nullptr) << u;
        EXPECT_EQ(r.nic_up->get_name(), expected_up[u]) << u;
        EXPECT_EQ(r.nic_down->get_name(), "nic-down" + std::string(expected_up[u]).substr(6)) << u;
        EXPECT_DOUBLE_EQ(r.nic_up->get_bandwidth(), kNicBandwidth) << u;  // one NIC, not the node's sum
        EXPECT_DOUBLE_EQ(r.nic_down->get_latency(), kNicLatency) << u;
        EXPECT_EQ(r.node, static_cast<int>(u / 4)) << u;
      }
    });
  });
  run_in_child([] {
    Simulation sim(uniform_options(4, 4, 2));
    sim.run([&](int unit, Platform&) {
      if (unit != 0) return;
      for (const UnitResources& r : sim.topology().units) {
        EXPECT_EQ(r.nic_up, nullptr);
        EXPECT_EQ(r.nic_down, nullptr);
      }
    });
  });
}


// Members of 2 nodes x 4 (units 0..7).
Members two_nodes_of_four() { return all_units(8, 4); }

TEST(CollectiveFlows, RingAllReduceOverTwoChannelsTakesTheHandFormula) {
  run_in_child([] {
    // 2 nodes of 2 GPUs, each with its own NIC; 2 channels cross between the nodes over
    // different GPUs, so every NIC and NVLink carries one flow per step. 6 steps, each paced by
    // the flows between nodes (2 NIC latencies + S/8 at the NIC's bandwidth) plus Simple's
    // network step latency, after Simple's base latency.
    const double S = 8e6;
    ScheduleOptions o;
    o.channels = 2;
    o.protocol = Protocol::simple;
    const FlowSchedule schedule = compact_flow_schedule(Algorithm::ring, Collective::all_reduce, all_units(4, 2), S, 0, o);
    const double step = 2 * kNicLatency + S / 8 / kNicBandwidth +
                        step_latency(Algorithm::ring, Protocol::simple, Hop::network);
    const double expected = base_latency(Algorithm::ring, Protocol::simple) + 6 * step;
    const double seconds = simulated_seconds(uniform_options(4, 2, 2), schedule);
    EXPECT_NEAR(seconds, expected, tolerance(expected));
  });
}

// Where the prediction says it is exact, the flows take that time: 2 nodes of 4 GPUs (every NIC
// alike), 5 nodes of 4 on 2 NICs and 7 nodes of one GPU (trees whose nodes differ: roots, inner
// nodes with one or two children, leaves). Rings, and trees at every size here, are exact.
TEST(CollectiveFlows, EveryAlgorithmAndProtocolTakesItsPredictedTimeWhereExact) {
  struct Shape {
    int units, per_node, nics;
  };
  for (const Shape shape : {Shape{8, 4, 2}, Shape{20, 4, 2}, Shape{7, 1, 1}}) {
    run_in_child([shape] {
      Simulation sim(uniform_options(shape.units, shape.per_node, shape.nics));
      sim.run([&](int unit, Platform&) {
        if (unit != 0) return;
        const Topology& topology = sim.topology();
        LinkCosts costs(topology);
        const Members members = all_units(shape.units, shape.per_node);
        for (const Algorithm a : kAlgorithms)
          for (const Protocol p : kProtocols)
            for (const Collective c :
                 {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather, Collective::broadcast})
              for (const double S : {1e3, 3e7}) {
                SCOPED_TRACE(std::to_string(shape.units) + " units: " + std::string(to_string(a)) + " " +
                             std::string(to_string(p)) + " " + std::string(platform::to_string(c)) + " " +
                             std::to_string(S));
                const ScheduleOptions o = nccl_schedule_options(a, p, members, S, topology.nics_per_node);
                const FlowSchedule schedule = compact_flow_schedule(a, c, members, S, 2, o);
                const Prediction predicted = costs.predict(schedule);
                if (c == Collective::all_reduce && a != Algorithm::hierarchical) {
                  EXPECT_TRUE(predicted.exact);
                }
                if (!predicted.exact) continue;
                const double start = simgrid::s4u::Engine::get_clock();
                simgrid::s4u::Actor::create("flows", topology.units.front().cpu,
                                            [&schedule, &topology] { run_flows(schedule, topology); })
                    ->join();
                const double seconds = simgrid::s4u::Engine::get_clock() - start;
                EXPECT_GT(seconds, 0.0);
                EXPECT_NEAR(seconds, predicted.seconds, tolerance(predicted.seconds));
              }
      });
    });
  }
}

// A phase whose flows are not alike is not called exact: two flows of different bytes through one
// NIC (the smaller ends first and the larger then speeds up, which equal shares do not see). The
// simulation then differs from the equal-share prediction, which is why such a collective runs
// its flows.
TEST(CollectiveFlows, UnlikeFlowsSharingALinkAreNotPredictedExactly) {
  run_in_child([] {
    Simulation sim(uniform_options(4, 2, 1));  // 2 nodes of 2 GPUs, one NIC each
    sim.run([&](int unit, Platform&) {
      if (unit != 0) return;
      const Topology& topology = sim.topology();
      LinkCosts costs(topology);
      // Units 0 and 1 (node 0) send to units 2 and 3 (node 1) through node 0's one NIC.
      const FlowSchedule alike = {Phase{{{0, 2, 1e6}, {1, 3, 1e6}}}};
      const FlowSchedule unlike = {Phase{{{0, 2, 1e6}, {1, 3, 3e6}}}};
      EXPECT_TRUE(costs.predict(alike).exact);
      const Prediction p = costs.predict(unlike);
      EXPECT_FALSE(p.exact);
      const double start = simgrid::s4u::Engine::get_clock();
      simgrid::s4u::Actor::create("flows", topology.units.front().cpu,
                                  [&unlike, &topology] { run_flows(unlike, topology); })
          ->join();
      const double seconds = simgrid::s4u::Engine::get_clock() - start;
      // Equal shares: 3e6 at half the NIC; max-min: both at half until the small one's 1e6 is
      // through, then the large one's other 2e6 at the whole NIC, sooner.
      EXPECT_NEAR(p.seconds, 2 * kNicLatency + 3e6 / (kNicBandwidth / 2), tolerance(p.seconds));
      EXPECT_NEAR(seconds, 2 * kNicLatency + 1e6 / (kNicBandwidth / 2) + 2e6 / kNicBandwidth, tolerance(seconds));
      EXPECT_LT(seconds, p.seconds * (1 - 1e-6));
    });
  });
}

TEST(CollectiveFlows, NcclsChoiceIsTheLeastPredictedTimeAndLl128StaysInsideNodesWhereNicsHangOffTheCpu) {
  for (const bool beside : {false, true}) {
    run_in_child([beside] {
      SimulationOptions options = uniform_options(8, 4, 2);
      options.profile.node.nic_beside_gpu = beside;
      Simulation sim(options);
      sim.run([&](int unit, Platform&) {
        if (unit != 0) return;
        LinkCosts costs(sim.topology());
        const Members members = two_nodes_of_four();
        bool saw_ll128 = false;
        for (double S = 8.0; S < 2e9; S *= 8) {
          SCOPED_TRACE(S);
          const CollectiveChoice choice =
              choose_collective(std::nullopt, std::nullopt, Collective::all_reduce, members, S, 0, costs);
          saw_ll128 = saw_ll128 || choice.options.protocol == Protocol::ll128;
          for (const Algorithm a : {Algorithm::ring, Algorithm::tree})
            for (const Protocol p : kProtocols) {
              if (p == Protocol::ll128 && !beside) continue;
              const CollectiveChoice one = choose_collective(a, p, Collective::all_reduce, members, S, 0, costs);
              EXPECT_LE(choice.predicted_seconds, one.predicted_seconds) << to_string(a) << " " << to_string(p);
            }
        }
        if (!beside) {
          EXPECT_FALSE(saw_ll128) << "LL128 between nodes whose NICs hang off the CPU";
        }
        // Latency wins small buffers, bandwidth large ones.
        EXPECT_EQ(choose_collective(std::nullopt, std::nullopt, Collective::all_reduce, members, 8.0, 0, costs)
                      .options.protocol,
                  Protocol::ll);
        EXPECT_EQ(choose_collective(std::nullopt, std::nullopt, Collective::all_reduce, members, 1e9, 0, costs)
                      .options.protocol,
                  Protocol::simple);
      });
    });
  }
}

}  // namespace
}  // namespace asteria::sim::collective
