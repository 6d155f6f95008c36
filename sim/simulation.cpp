#include "sim/simulation.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "core/common/error.hpp"
#include "sim/sim_platform.hpp"
#include "sim/topology.hpp"

namespace asteria::sim {

namespace sg4 = simgrid::s4u;

namespace {

// The engine is a process-wide singleton (see simulation.hpp): remember that one was made.
void claim_the_engine() {
  static std::atomic<bool> claimed{false};
  if (claimed.exchange(true))
    throw std::logic_error(
        "asteria::sim::Simulation: one simulation per process (SimGrid's engine cannot be reset); "
        "run further simulations in child processes (sim/child_process.hpp)");
}

// Sanitizers follow threads, not the stack switches of SimGrid's default actor contexts.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kUnderSanitizer = true;
#else
constexpr bool kUnderSanitizer = false;
#endif
#else
constexpr bool kUnderSanitizer = false;
#endif

std::unique_ptr<sg4::Engine> make_engine() {
  char program[] = "asteria-sim";
  char quiet[] = "--log=root.thres:critical";
  // SimGrid's default actor contexts switch stacks in assembly, which AddressSanitizer cannot
  // follow (false reports when an actor throws) and ThreadSanitizer takes for one thread; under
  // either, each actor gets a thread instead (still one running at a time).
  char threads[] = "--cfg=contexts/factory:thread";
  char* argv[] = {program, quiet, kUnderSanitizer ? threads : nullptr, nullptr};
  int argc = kUnderSanitizer ? 3 : 2;
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  // The default LV08 network model caps a flow by TCP window (gamma) over latency and scales
  // bandwidth and latency by factors fitted for Ethernet: NVLink or C2C links would not get
  // their bandwidth. CM02 with no cross traffic gives latency + bytes/bandwidth and fair sharing.
  // Every actor's stack is one memory mapping, not two: without a guard page a data-parallel
  // run of many ranks (each with its host workers and its collectives' actors) stays under the
  // kernel's vm.max_map_count (65530 by default), which SimGrid otherwise dies on.
  if (!kUnderSanitizer) sg4::Engine::set_config("contexts/guard-size:0");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e15");
  return engine;
}

}  // namespace

struct Simulation::Impl {
  SimulationOptions options;
  hw::CostModel costs;
  Recorder recorder;
  std::unique_ptr<sg4::Engine> engine;  // destroyed after the platforms (declared before them)
  Topology topology;
  std::unique_ptr<CommHub> hub;  // several units: where their collectives meet
  std::vector<std::unique_ptr<SimPlatform>> platforms;
  bool ran = false;
  std::exception_ptr first_error;
  std::vector<bool> finished;

  explicit Impl(SimulationOptions o)
      : options(std::move(o)), costs(options.profile, options.gemm_precision) {}

  void unit_main(int unit, const UnitMain& main) {
    try {
      main(unit, *platforms[static_cast<std::size_t>(unit)]);
      finished[static_cast<std::size_t>(unit)] = true;
      if (std::all_of(finished.begin(), finished.end(), [](bool f) { return f; })) stop_services();
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // stopped because another main failed
    } catch (...) {
      finished[static_cast<std::size_t>(unit)] = true;
      if (!first_error) first_error = std::current_exception();
      stop_services();
      sg4::Actor::kill_all();  // the other mains may wait for this one forever
    }
  }

  // What SimGrid does to daemon actors when the mains are done, done to work kept by timers.
  void stop_services() {
    for (const auto& p : platforms) p->stop_services();
    if (hub) hub->stop();
  }
};

Simulation::Simulation(SimulationOptions options) {
  validate(options);
  claim_the_engine();
  impl_ = std::make_unique<Impl>(std::move(options));
  impl_->engine = make_engine();
  impl_->topology = build_topology(impl_->options);
  const SimulationOptions& o = impl_->options;
  const long long actors = o.max_actors > 0 ? o.max_actors : max_simulated_actors();
  impl_->recorder.set_actor_budget(actors - static_cast<long long>(running_units(o)) * kActorsPerUnit);
  if (o.units > 1)
    impl_->hub = std::make_unique<CommHub>(
        impl_->topology, CommHubSettings{o.collective_algorithm, running_units(o), o.coalesce_ring_steps, o.serial_collectives,
                        o.predicted_collectives},
        impl_->recorder);
  for (int u = 0; u < running_units(o); ++u)  // mirrors (representative ranks) have none
    impl_->platforms.push_back(std::make_unique<SimPlatform>(o, impl_->topology.units[static_cast<std::size_t>(u)],
                                                             impl_->costs, impl_->recorder, impl_->hub.get()));
}

Simulation::~Simulation() {
  if (!impl_) return;
  impl_->platforms.clear();  // before the engine: they hold s4u mutexes and semaphores
  impl_->hub.reset();
  impl_->engine.reset();
}

int Simulation::units() const noexcept { return impl_->options.units; }
int Simulation::nodes() const noexcept { return impl_->topology.nodes; }
int Simulation::simulated_units() const noexcept { return static_cast<int>(impl_->platforms.size()); }

platform::Platform& Simulation::platform(int unit) {
  if (unit < 0 || unit >= simulated_units())
    throw std::out_of_range("Simulation::platform(" + std::to_string(unit) + "): the simulation has " +
                            std::to_string(units()) + " units, " + std::to_string(simulated_units()) +
                            " of which run");
  return *impl_->platforms[static_cast<std::size_t>(unit)];
}

void Simulation::run(const UnitMain& main_per_unit) {
  Impl& s = *impl_;
  if (s.ran) throw std::logic_error("Simulation::run: a simulation runs once");
  s.ran = true;
  s.finished.assign(s.platforms.size(), false);
  for (const auto& p : s.platforms) p->start_services();
  for (int u = 0; u < simulated_units(); ++u) {
    sg4::Actor::create("main" + std::to_string(u), s.topology.units[static_cast<std::size_t>(u)].cpu,
                       [&s, u, &main_per_unit] { s.unit_main(u, main_per_unit); });
  }
  s.engine->run();
  if (s.first_error) std::rethrow_exception(s.first_error);
  if (s.recorder.actors_refused() > 0)
    throw InputError("simulation options", "host_workers_per_unit",
                     "at most " +
                         std::to_string(s.options.max_actors > 0 ? s.options.max_actors : max_simulated_actors()) +
                         " simulated actors (each a stack mapping; vm.max_map_count / 2): the host workers' work "
                         "needed more at once (" + std::to_string(s.recorder.actors_refused()) +
                         " not started); use fewer --host-workers, fewer --units/--nodes, or --simulated-nodes");
  std::string stuck;
  for (std::size_t u = 0; u < s.finished.size(); ++u)
    if (!s.finished[u]) stuck += (stuck.empty() ? "" : ", ") + std::to_string(u);
  if (!stuck.empty())
    throw std::runtime_error("simulation deadlock at t = " + std::to_string(now()) + " s: the main of unit(s) " +
                             stuck + " waits for something that never happens");
}

double Simulation::now() const { return sg4::Engine::get_clock(); }
ActivityCounts Simulation::activity_counts() const noexcept { return impl_->recorder.counts(); }
const SimulationOptions& Simulation::options() const noexcept { return impl_->options; }
const hw::CostModel& Simulation::cost_model() const noexcept { return impl_->costs; }
const Topology& Simulation::topology() const noexcept { return impl_->topology; }

}  // namespace asteria::sim
