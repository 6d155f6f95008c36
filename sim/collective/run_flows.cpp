#include "sim/collective/run_flows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

namespace asteria::sim::collective {

namespace sg4 = simgrid::s4u;

namespace {

simgrid::s4u::Host* gpu_of(const Topology& topology, int unit) {
  if (unit < 0 || static_cast<std::size_t>(unit) >= topology.units.size())
    throw std::out_of_range("run_flows: unit " + std::to_string(unit) + " is not in a topology of " +
                            std::to_string(topology.units.size()) + " units");
  return topology.units[static_cast<std::size_t>(unit)].gpu;
}

// One run of a phase (`scale` times its bytes), then a wait.
struct Step {
  const Phase* phase = nullptr;
  double scale = 1.0;
  double wait_after = 0.0;  // seconds: the phase's latency (coalesced: the other steps' too)
};

// Starts the step's flows at once and waits for all of them.
void run_step(const Step& step, const Topology& topology, std::vector<sg4::CommPtr>& in_flight) {
  in_flight.clear();
  for (const Flow& flow : step.phase->flows) {
    const auto bytes = static_cast<std::uint64_t>(std::ceil(flow.bytes * step.scale));
    if (bytes == 0) continue;
    in_flight.push_back(sg4::Comm::sendto_async(gpu_of(topology, flow.from), gpu_of(topology, flow.to), bytes));
  }
  sg4::Comm::wait_all(in_flight);
  if (step.wait_after > 0.0) sg4::this_actor::sleep_for(step.wait_after);
}

// The largest latency of the routes the phase's flows take.
double largest_latency(const Phase& phase, const Topology& topology) {
  double largest = 0.0;
  std::vector<sg4::Link*> links;
  for (const Flow& flow : phase.flows) {
    if (flow.bytes <= 0.0) continue;
    double latency = 0.0;
    links.clear();
    gpu_of(topology, flow.from)->route_to(gpu_of(topology, flow.to), links, &latency);
    largest = std::max(largest, latency);
  }
  return largest;
}

}  // namespace

void run_flows(const FlowSchedule& schedule, const Topology& topology, const RunFlowsOptions& options) {
  std::vector<sg4::CommPtr> in_flight;
  for (const Phase& phase : schedule) {
    if (options.coalesce_repeats && phase.repeat > 1) {
      run_step({&phase, static_cast<double>(phase.repeat),
                (phase.repeat - 1) * largest_latency(phase, topology) + phase.repeat * phase.latency},
               topology, in_flight);
      continue;
    }
    for (int i = 0; i < phase.repeat; ++i) run_step({&phase, 1.0, phase.latency}, topology, in_flight);
  }
}

}  // namespace asteria::sim::collective
