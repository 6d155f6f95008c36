// The SimGrid backend joins the conformance suite with values (data-true): each scenario runs as
// the main actor of unit 0 of a one-unit simulation. A process hosts one simulation, so every
// scenario runs in a child process (failures are reported here).
#include "sim/simulation.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/platform/conformance.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::platform::conformance {
namespace {

Backend sim_backend() {
  Backend b;
  b.name = "sim";
  b.time = TimeSource::simulated;
  b.run = [](const Requirements& req, const Scenario& scenario) {
    sim::testing::run_in_child([&] {
      test::RecordingSink sink(0);
      sim::SimulationOptions options;
      options.profile = sim::testing::tiny_profile();
      options.profile.cpu.cores = sim::testing::q(req.host_workers);
      options.host_workers_per_unit = req.host_workers;
      options.budgets = sim::TierBudgets{req.device_capacity, req.host_capacity, req.nvme_capacity, 0};
      options.numerics = Numerics::values;
      if (req.record_activities) options.activities = [&sink](int) { return &sink; };
      sim::Simulation simulation(options);
      simulation.run([&](int, Platform& platform) { scenario(platform); });
    });
  };
  return b;
}

INSTANTIATE_TEST_SUITE_P(Sim, PlatformConformance, ::testing::Values(sim_backend()), backend_name);
INSTANTIATE_TEST_SUITE_P(Sim, ConcurrentPlatformConformance, ::testing::Values(sim_backend()), backend_name);

}  // namespace
}  // namespace asteria::platform::conformance
