// The simulator's communicator (SimComm, data-true) runs the Comm conformance scenarios: each
// rank is a unit's main actor in a simulation of tiny_profile units (two per node). A process
// hosts one simulation, so every scenario runs in a child process (failures are reported here).
// A simulation of one unit has no Comm: worlds start at two ranks.
#include <stdexcept>

#include "sim/simulation.hpp"
#include "tests/comm/comm_conformance.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::comm_conformance {
namespace {

void run_sim(int ranks, Scenario scenario) {
  sim::testing::run_in_child([&] {
    sim::SimulationOptions options = sim::testing::tiny_options(platform::Numerics::values);
    options.units = ranks;
    sim::Simulation simulation(options);
    simulation.run([&](int, platform::Platform& p) {
      if (p.comm() == nullptr) throw std::logic_error("a unit without a Comm");
      Rank rank{*p.comm(), p.completions(), [&p] { p.clock().sleep_for(1e-3); }};
      scenario(rank);
    });
  });
}

Backend sim_backend() { return {"sim", run_sim}; }

INSTANTIATE_TEST_SUITE_P(SimComm, CommConformance, ::testing::ValuesIn(params(sim_backend(), {2, 3, 4})),
                         param_name);

}  // namespace
}  // namespace asteria::comm_conformance
