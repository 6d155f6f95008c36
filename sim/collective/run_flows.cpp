#include "sim/collective/run_flows.hpp"

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

}  // namespace

void run_flows(const FlowSchedule& schedule, const Topology& topology) {
  std::vector<sg4::CommPtr> in_flight;
  for (const Phase& phase : schedule) {
    in_flight.clear();
    for (const Flow& flow : phase.flows) {
      const auto bytes = static_cast<std::uint64_t>(std::ceil(flow.bytes));
      if (bytes == 0) continue;
      in_flight.push_back(sg4::Comm::sendto_async(gpu_of(topology, flow.from), gpu_of(topology, flow.to), bytes));
    }
    sg4::Comm::wait_all(in_flight);
  }
}

}  // namespace asteria::sim::collective
