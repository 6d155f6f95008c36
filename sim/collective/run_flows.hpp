#pragma once
// Runs a flow schedule (flow_schedule.hpp) on the simulated machine: every flow of a phase is a
// one-sided SimGrid communication between the GPU hosts of its units, over the links the
// topology routes it through (NVLink inside a node; nic-up, backbone, nic-down between nodes);
// the next phase starts when every flow of the phase has ended. Concurrent flows share the links
// they have in common (SimGrid's max-min sharing).
#include "sim/collective/flow_schedule.hpp"
#include "sim/topology.hpp"

namespace asteria::sim::collective {

// Call from inside a SimGrid actor (it blocks that actor for the simulated time the flows take).
// A flow moves ceil(bytes) bytes, so a fraction of a byte still pays the route's latency; flows
// of 0 bytes are skipped. Throws std::out_of_range for a flow whose unit is not in `topology`.
// SimGrid 3.32 keeps an actor's communications in its activity list and walks it as each one
// ends (sim_memory.cpp): a caller running many schedules should run each in a fresh actor.
void run_flows(const FlowSchedule& schedule, const Topology& topology);

}  // namespace asteria::sim::collective
