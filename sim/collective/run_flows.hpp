#pragma once
// Runs a flow schedule (flow_schedule.hpp) on the simulated machine: every flow of a phase is a
// one-sided SimGrid communication between the GPU hosts of its units, over the links the
// topology routes it through (NVLink inside a node; nic-up, backbone, nic-down between nodes);
// the next phase starts when every flow of the phase has ended and the phase's latency has passed,
// and a phase with repeat k runs k times in a row. Concurrent flows share the links they have in common (SimGrid's max-min
// sharing).
#include "sim/collective/flow_schedule.hpp"
#include "sim/topology.hpp"

namespace asteria::sim::collective {

struct RunFlowsOptions {
  // Approximate shortcut (opt-in, SimulationOptions::coalesce_ring_steps): a phase repeated k
  // times runs once, each flow carrying k times its bytes, then waits (k-1) times the largest
  // route latency among its flows and k times the phase's latency. Alone on their links, the k steps take exactly that
  // (k · (latency + bytes / bandwidth)); flows that share links with other traffic share it over
  // one long transfer instead of k short ones, so the time may differ slightly.
  bool coalesce_repeats = false;
};

// Call from inside a SimGrid actor (it blocks that actor for the simulated time the flows take).
// A flow moves ceil(bytes) bytes, so a fraction of a byte still pays the route's latency; flows
// of 0 bytes are skipped. Throws std::out_of_range for a flow whose unit is not in `topology`.
// A caller running many schedules should run each in a fresh actor (sim_memory.cpp: SimGrid
// 3.32 walks an actor's list of activities as each one ends).
void run_flows(const FlowSchedule& schedule, const Topology& topology, const RunFlowsOptions& options = {});

}  // namespace asteria::sim::collective
