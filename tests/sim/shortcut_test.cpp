// The simulator's options for many units, on the tests' tiny profile (tiny_profile.hpp) with the
// uniform links of collective_flow_test.cpp: NVLink 1e10 B/s and 1 µs, NIC 1e9 B/s and 5 µs
// (10 µs between nodes). Coalesced ring steps, phases wider than one actor's share of comms,
// serial collectives, representative ranks (mirrors) and their validation. Each simulation runs
// in a child process.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <stdexcept>
#include <vector>

#include "core/common/error.hpp"
#include "sim/collective/flow_schedule.hpp"
#include "sim/collective/protocol.hpp"
#include "sim/child_process.hpp"
#include "sim/collective/run_flows.hpp"
#include "sim/simulation.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

using collective::Algorithm;
using platform::Collective;
using platform::CommBuffer;
using platform::Platform;
using platform::ReduceOp;
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

collective::Members all_units(int units, int units_per_node) {
  collective::Members m;
  for (int u = 0; u < units; ++u) {
    m.units.push_back(u);
    m.nodes.push_back(u / units_per_node);
  }
  return m;
}

// Simulated seconds unit 0's main takes to run `schedule`.
double seconds_of(const SimulationOptions& options, const collective::FlowSchedule& schedule,
                  collective::RunFlowsOptions run = {}) {
  Simulation sim(options);
  double seconds = -1.0;
  sim.run([&](int unit, Platform& p) {
    if (unit != 0) return;
    run_flows(schedule, sim.topology(), run);
    seconds = p.clock().now();
  });
  return seconds;
}

TEST(Shortcuts, CoalescedRingStepsOfALoneCollectiveTakeTheStepsTime) {
  run_in_child([] {
    // 4 nodes x 2 GPUs, 2 NICs a node, hierarchical all-reduce of S = 8e6: direct exchanges of
    // S/2 on NVLink (1e-6 + 4e-4 s), then 2(q-1) = 6 ring steps of S/8 = 1e6 bytes between
    // nodes, each 1e-5 + 1e-3 s. Coalesced: one flow of 6e6 bytes (1e-5 + 6e-3 s) and 5 more
    // latencies: the same 6.06e-3 s.
    const double S = 8e6;
    const collective::FlowSchedule compact =
        compact_flow_schedule(Algorithm::hierarchical, Collective::all_reduce, all_units(8, 2), S);
    const double intra = kLinkLatency + S / 2 / kLinkBandwidth;
    const double ring = 6 * (2 * kNicLatency + S / 8 / kNicBandwidth);
    const double expected = intra + ring + intra;
    const double coalesced = seconds_of(uniform_options(8, 2, 2), compact, {true});
    EXPECT_NEAR(coalesced, expected, tolerance(expected));
  });
  run_in_child([] {
    const double S = 8e6;
    const collective::FlowSchedule compact =
        compact_flow_schedule(Algorithm::hierarchical, Collective::all_reduce, all_units(8, 2), S);
    const double steps = seconds_of(uniform_options(8, 2, 2), compact);
    const double expected = 2 * (kLinkLatency + S / 2 / kLinkBandwidth) + 6 * (2 * kNicLatency + S / 8 / kNicBandwidth);
    EXPECT_NEAR(steps, expected, tolerance(expected)) << "the compact schedule runs every step";
  });
}

TEST(Shortcuts, WideAndRepeatedPhasesTakeThePhasesTime) {
  run_in_child([] {
    // One node of 20 GPUs: a direct exchange is 20 · 19 = 380 flows at once, each on its own
    // NVLink: S = 2e6, S/20 = 1e5 bytes, 1e-6 + 1e-5 s a phase; the all-reduce is two of them.
    // A ring all-reduce: one phase of 20 flows repeated 2 · 19 times in the compact schedule.
    const double S = 2e6;
    const double hierarchical = seconds_of(
        uniform_options(20, 20, 1), flow_schedule(Algorithm::hierarchical, Collective::all_reduce, all_units(20, 20), S));
    const double phase = kLinkLatency + S / 20 / kLinkBandwidth;
    EXPECT_NEAR(hierarchical, 2 * phase, tolerance(2 * phase));
  });
  run_in_child([] {
    const double S = 2e6;
    const double ring = seconds_of(uniform_options(20, 20, 1),
                                   compact_flow_schedule(Algorithm::ring, Collective::all_reduce, all_units(20, 20), S));
    const double expected = 2 * 19 * (kLinkLatency + S / 20 / kLinkBandwidth);
    EXPECT_NEAR(ring, expected, tolerance(expected));
  });
}

// Two all-reduces called back to back: serial, the second starts when the first ends; otherwise
// both start at once and share the links.
TEST(Shortcuts, SerialCollectivesRunOneAtATimeInCallOrder) {
  for (const bool serial : {false, true}) {
    run_in_child([serial] {
      std::deque<test::RecordingSink> sinks;
      for (int u = 0; u < 4; ++u) sinks.emplace_back(u);
      SimulationOptions options = uniform_options(4, 2, 1);
      options.serial_collectives = serial;
      options.activities = [&sinks](int unit) { return &sinks.at(static_cast<std::size_t>(unit)); };
      Simulation sim(options);
      sim.run([](int, Platform& p) {
        platform::CommGroup& world = p.comm()->world();
        platform::CollectiveOptions first, second;
        first.label = "first";
        second.label = "second";
        platform::Pending a = world.all_reduce(CommBuffer::sized(1 << 20, platform::DType::fp32), ReduceOp::sum, first);
        platform::Pending b = world.all_reduce(CommBuffer::sized(1 << 20, platform::DType::fp32), ReduceOp::sum, second);
        ASSERT_TRUE(a.status().ok());
        ASSERT_TRUE(b.status().ok());
      });
      for (int u = 0; u < 4; ++u) {
        std::vector<platform::Activity> comms;
        for (const auto& a : sinks[static_cast<std::size_t>(u)].activities())
          if (a.track == platform::comm_track(u)) comms.push_back(a);
        ASSERT_EQ(comms.size(), 2u);
        EXPECT_EQ(comms[0].label, "first");
        EXPECT_EQ(comms[0].start, 0.0);
        if (serial) {
          EXPECT_EQ(comms[1].start, comms[0].end) << "unit " << u;
          EXPECT_NEAR(comms[1].end - comms[1].start, comms[0].end, tolerance(comms[0].end)) << "alone, as the first";
        } else {
          EXPECT_EQ(comms[1].start, 0.0) << "unit " << u;
        }
      }
    });
  }
}

// When unit 0's world all-reduce of 4e6 fp32 (S = 1.6e7 bytes) ends, in a run of 4 units (2
// nodes of 2, one NIC a node) of which `simulated` run (0: all); in a child process, exactly.
double all_reduce_end(int simulated) {
  const ChildOutcome outcome = run_in_child_process([simulated](ChildReport& report) {
    SimulationOptions options = uniform_options(4, 2, 1);
    options.simulated_units = simulated;
    options.collective_algorithm = collective::Algorithm::hierarchical;
    Simulation sim(options);
    if (sim.units() != 4 || sim.simulated_units() != (simulated == 0 ? 4 : simulated))
      throw std::logic_error("unexpected unit counts");
    int mains = 0;
    double end = -1.0;
    sim.run([&](int unit, Platform& p) {
      ++mains;
      if (p.comm()->size() != 4) throw std::logic_error("the world holds every unit, mirrors included");
      const platform::Pending done =
          p.comm()->world().all_reduce(CommBuffer::sized(4'000'000, platform::DType::fp32), ReduceOp::sum);
      if (!done.status().ok()) throw std::logic_error("all-reduce failed");
      if (unit == 0) end = p.clock().now();
    });
    if (mains != sim.simulated_units()) throw std::logic_error("a main ran for a mirror");
    char hex[64];
    std::snprintf(hex, sizeof hex, "%a", end);
    report.write(hex);
  });
  if (!outcome.succeeded()) throw std::runtime_error(outcome.describe());
  return std::strtod(outcome.report.c_str(), nullptr);
}

// Units 2 and 3 mirror units 0 and 1: only the first node runs, and its collective over the
// world ends when the full run's does, bit for bit.
TEST(Shortcuts, MirroredUnitsRunNothingAndTheirCollectivesTakeTheFullTime) {
  // Direct exchange: S/2 = 8e6 bytes to the node peer, 1e-6 + 8e-4 s; 2 ring steps of
  // S/4 = 4e6 bytes, the two rings sharing each node's one NIC: 1e-5 + 8e-3 s each; direct
  // exchange again: 1.7622e-2 s. At this size the Simple protocol wins: its base latency, and
  // its step latency per phase (GPU-GPU for the exchanges, network for the ring steps).
  using collective::Hop;
  const auto simple = collective::Protocol::simple;
  const auto hierarchical = collective::Algorithm::hierarchical;
  const double expected = 2 * (kLinkLatency + 8e6 / kLinkBandwidth) + 2 * (2 * kNicLatency + 8e6 / kNicBandwidth) +
                          collective::base_latency(hierarchical, simple) +
                          2 * collective::step_latency(hierarchical, simple, Hop::gpu_link) +
                          2 * collective::step_latency(hierarchical, simple, Hop::network);
  const double full = all_reduce_end(0);
  EXPECT_NEAR(full, expected, tolerance(expected));
  EXPECT_EQ(all_reduce_end(2), full);
}

TEST(Shortcuts, MirrorsCannotSplitAndNeedWholeNodesOfShapes) {
  run_in_child([] {
    SimulationOptions options = uniform_options(4, 2, 1);
    options.simulated_units = 2;
    Simulation sim(options);
    EXPECT_THROW(sim.run([](int unit, Platform& p) {
                   if (platform::Comm* comm = p.comm()) comm->world().split(unit % 2, unit);
                 }),
                 std::logic_error);
  });
  SimulationOptions odd = uniform_options(4, 2, 1);
  odd.simulated_units = 3;
  EXPECT_THROW(validate(odd), InputError);
  SimulationOptions values = uniform_options(4, 2, 1);
  values.numerics = platform::Numerics::values;
  values.simulated_units = 2;
  EXPECT_THROW(validate(values), InputError);
  SimulationOptions too_many = uniform_options(4, 2, 1);
  too_many.simulated_units = 6;
  EXPECT_THROW(validate(too_many), InputError);
  values.simulated_units = 4;  // every unit: no mirrors, values allowed
  EXPECT_NO_THROW(validate(values));
}

}  // namespace
}  // namespace asteria::sim
