#pragma once
// A SimGrid simulation of `units` GPUs with their hosts, links and disks (see topology.hpp),
// one Platform per unit, in which the runtime's own code runs as simulated actors.
//
//   Simulation sim(options);
//   sim.run([](int unit, platform::Platform& p) { ... the rank's main ... });
//   sim.now(); sim.activity_counts();
//
// One simulation per process. SimGrid's engine is a process-wide singleton; SimGrid 3.32 lets a
// program delete it and create another, but the second engine inherits the first one's
// simulated clock (time does not restart at 0) and its configuration cannot be set again, so
// results would depend on what ran before. A second Simulation in a process therefore throws
// std::logic_error; run several simulations in child processes (sim/child_process.hpp).
//
// Calls that pass simulated time or block (Pending::wait, Clock::sleep_until, waits on
// condition variables) work only inside run(), in a unit's main or in work it submitted.
// Before run() a program may allocate, submit work and issue copies (they start when run()
// does); outside run() there is one thread of control, so locks are no-ops.
#include <functional>
#include <memory>

#include "core/platform/platform.hpp"
#include "hwmodels/cost_model.hpp"
#include "sim/recorder.hpp"
#include "sim/simulation_options.hpp"
#include "sim/topology.hpp"

namespace asteria::sim {

class Simulation {
 public:
  // Validates the options (InputError), then builds the engine and the platform. Throws
  // std::logic_error if this process already created a Simulation.
  explicit Simulation(SimulationOptions options);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  int units() const noexcept;
  int nodes() const noexcept;
  // The units that run (have a platform and a main): units() unless representative ranks
  // (SimulationOptions::simulated_units) leave the others as mirrors.
  int simulated_units() const noexcept;
  // The platform of `unit` (0 <= unit < simulated_units(); std::out_of_range otherwise).
  platform::Platform& platform(int unit);

  using UnitMain = std::function<void(int unit, platform::Platform& platform)>;
  // Runs one main actor per unit that runs (on the unit's CPU host) until all of them return; service
  // actors (streams, workers, copies) are then stopped, whatever they still had queued. The
  // first exception a main throws is rethrown here with its type (the other mains are stopped
  // when it is thrown). Throws std::runtime_error if the mains block forever (deadlock), and
  // std::logic_error if called twice.
  void run(const UnitMain& main_per_unit);

  double now() const;  // simulated seconds since the start
  ActivityCounts activity_counts() const noexcept;
  const SimulationOptions& options() const noexcept;
  const hw::CostModel& cost_model() const noexcept;
  // The simulated machine's hosts, links and disks (valid as long as the simulation).
  const Topology& topology() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace asteria::sim
