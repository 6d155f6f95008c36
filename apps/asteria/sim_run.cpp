// asteria sim: builds the workload, the simulated platform and one step driver per unit, runs
// them, and keeps unit 0's per-step records (every unit runs the same single-GPU step).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <ostream>

#include "apps/asteria/sim_verb.hpp"
#include "core/common/error.hpp"
#include "core/runtime/driver/modelled_block.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "core/workload/optimizer_blocks.hpp"
#include "core/workload/runtime_stack.hpp"
#include "hwmodels/profile_loader.hpp"
#include "sim/simulation.hpp"

namespace asteria::cli {
namespace {

using platform::Tier;
using WallClock = std::chrono::steady_clock;

constexpr std::size_t kStateElementBytes = sizeof(float);  // optimizer state is fp32

void validate(const SimSettings& s) {
  if (s.steps < 1) throw InputError("asteria sim", "--steps", "expected an integer >= 1");
  if (s.staleness < 0) throw InputError("asteria sim", "--staleness", "expected an integer >= 0");
  if (s.units && *s.units < 1) throw InputError("asteria sim", "--units", "expected an integer >= 1");
  if (s.nodes && *s.nodes < 1) throw InputError("asteria sim", "--nodes", "expected an integer >= 1");
  if (s.host_workers < 0) throw InputError("asteria sim", "--host-workers", "expected an integer >= 0");
  if (s.lookahead < 0) throw InputError("asteria sim", "--lookahead", "expected an integer >= 0");
  if (s.warmup_steps && *s.warmup_steps < 0)
    throw InputError("asteria sim", "--warmup-steps", "expected an integer >= 0");
}

// Subtracts what the model itself keeps on the device (weights, gradients, activations) from the
// budgets the optimizer state may use; a model that alone exceeds the device fits nowhere.
std::optional<runtime::TierShortfall> reserve_model_memory(sim::TierBudgets& budgets, std::size_t model_bytes) {
  if (model_bytes > budgets.device)
    return runtime::TierShortfall{Tier::device, model_bytes, budgets.device, budgets.device};
  budgets.device -= model_bytes;
  if (budgets.unified != 0) {
    if (model_bytes > budgets.unified)
      return runtime::TierShortfall{Tier::device, model_bytes, budgets.unified, budgets.unified};
    budgets.unified -= model_bytes;
  }
  return std::nullopt;
}

// Progress on stderr once the run has taken more than a second of wall time.
class Progress {
 public:
  Progress(std::ostream& out, bool enabled, int total) : out_(out), enabled_(enabled), total_(total) {}
  ~Progress() {
    if (shown_) out_ << '\n' << std::flush;
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void step(int done, double simulated_s) {
    if (!enabled_) return;
    const double wall = std::chrono::duration<double>(WallClock::now() - start_).count();
    if (wall < 1.0 && done < total_) return;
    if (wall < 1.0 && !shown_) return;
    const int width = 30;
    const int filled = total_ > 0 ? done * width / total_ : width;
    char line[160];
    std::snprintf(line, sizeof line, "\rsim [%-*s] step %d/%d, simulated %.3f s, wall %.1f s", width,
                  std::string(static_cast<std::size_t>(filled), '#').c_str(), done, total_, simulated_s, wall);
    out_ << line << std::flush;
    shown_ = true;
  }

 private:
  std::ostream& out_;
  bool enabled_;
  int total_;
  WallClock::time_point start_ = WallClock::now();
  bool shown_ = false;
};

}  // namespace

UnitCount resolve_unit_count(std::optional<int> units, std::optional<int> nodes, int units_per_node,
                             const std::string& hw_name) {
  if (units_per_node < 1)
    throw InputError(hw_name, "node.units_per_node", "expected an integer >= 1");
  if (units && *units < 1) throw InputError("asteria sim", "--units", "expected an integer >= 1");
  if (nodes && *nodes < 1) throw InputError("asteria sim", "--nodes", "expected an integer >= 1");
  if (!nodes) {
    const int u = units.value_or(1);
    return {u, (u + units_per_node - 1) / units_per_node};
  }
  // 64-bit: nodes x units_per_node may exceed an int.
  const long long most = static_cast<long long>(*nodes) * units_per_node;
  if (most > std::numeric_limits<int>::max())
    throw InputError("asteria sim", "--nodes",
                     "expected at most " + std::to_string(std::numeric_limits<int>::max() / units_per_node) +
                         " nodes of " + hw_name + " (" + std::to_string(units_per_node) + " units per node)");
  if (!units) return {static_cast<int>(most), *nodes};
  const long long fewest = most - units_per_node + 1;
  if (*units < fewest || *units > most)
    throw InputError("asteria sim", "--nodes",
                     "--nodes " + std::to_string(*nodes) + " of " + hw_name + " (" + std::to_string(units_per_node) +
                         " units per node) holds " + std::to_string(fewest) + " to " + std::to_string(most) +
                         " units, found --units " + std::to_string(*units) +
                         "; give one of --nodes and --units, or make them agree");
  return {*units, *nodes};
}

std::string_view to_string(SimDataMode mode) noexcept {
  return mode == SimDataMode::data_free ? "data-free" : "data-true";
}

SimOutcome run_sim(const SimSettings& settings, std::ostream& progress_out) {
  validate(settings);
  const auto wall_start = WallClock::now();
  SimOutcome out;
  out.settings = settings;

  const hw::HardwareProfile profile = hw::load_profile(hw::find_profile(settings.hw));
  const workload::ModelConfig config = workload::find_model_config(settings.model);
  const workload::WorkloadModel wl = workload::build_workload(config);
  out.hw_name = profile.name;
  out.model_name = config.name;
  const UnitCount count = resolve_unit_count(settings.units, settings.nodes, profile.units_per_node(), profile.name);
  out.units = count.units;
  out.nodes = count.nodes;
  out.parameters = static_cast<std::size_t>(wl.totals.parameters);
  optim::validate(settings.hp, "asteria sim");
  const auto blocks = workload::optimizer_blocks(wl, settings.optimizer, settings.hp, kStateElementBytes);
  const workload::OptimizerTotals totals = workload::summarize(blocks);
  out.blocks = totals.blocks;
  out.state_bytes = totals.state_bytes;
  out.model_device_bytes = static_cast<std::size_t>(wl.totals.parameter_bytes + wl.totals.gradient_bytes +
                                                    wl.totals.activation_bytes);

  sim::SimulationOptions options;
  options.profile = profile;
  options.units = out.units;
  options.host_workers_per_unit = settings.host_workers;
  options.data = settings.mode == SimDataMode::data_free ? sim::DataMode::data_free : sim::DataMode::data_true;
  options.record_timeline = settings.trace;
  sim::TierBudgets budgets = sim::budgets_from(profile);
  if (const auto short_of = reserve_model_memory(budgets, out.model_device_bytes)) {
    out.fits = false;
    out.shortfall = {*short_of};
    out.fit_message = "the model's weights, gradients and activations alone exceed the device memory";
    out.capacity_bytes = {0, budgets.host, budgets.nvme};
    out.wall_seconds = std::chrono::duration<double>(WallClock::now() - wall_start).count();
    return out;
  }
  options.budgets = budgets;
  out.capacity_bytes = {budgets.device, budgets.host, budgets.nvme};

  const runtime::SyntheticModelSpec stack = workload::runtime_stack(wl, runtime::GradientSpec{settings.seed});
  const int warmup = settings.warmup_steps.value_or(
      static_cast<int>(runtime::first_publication_step(settings.optimizer, settings.hp, settings.staleness)));
  const int total_steps = warmup + settings.steps;

  sim::Simulation simulation(options);
  const hw::CostModel& costs = simulation.cost_model();
  runtime::DriverOptions driver_options;
  driver_options.mode = settings.mode == SimDataMode::data_free ? runtime::NumericsMode::shapes
                                                                : runtime::NumericsMode::full;
  driver_options.warmup_steps = warmup;
  driver_options.store.policy = settings.placement;
  driver_options.store.lookahead = settings.lookahead;
  driver_options.service.staleness = settings.staleness;
  driver_options.service.policy = runtime::PublishPolicy::deterministic;
  driver_options.device_seconds = [&costs](const platform::Cost& cost) {
    return cost.reduced_precision ? costs.gpu_step_seconds(cost) : costs.gpu_optimizer_seconds(cost);
  };
  driver_options.shapes = workload::shape_model(kStateElementBytes);

  std::optional<runtime::PlacementError> placement_error;
  Progress progress(progress_out, settings.progress, total_steps);
  simulation.run([&](int unit, platform::Platform& platform) {
    runtime::SyntheticModel<float> model(stack, settings.mode == SimDataMode::data_free ? runtime::ModelData::shapes
                                                                                       : runtime::ModelData::values);
    std::optional<runtime::StepDriver<float>> driver;
    try {
      driver.emplace(platform, model, settings.optimizer, settings.hp, driver_options);
    } catch (const runtime::PlacementError& e) {
      if (unit == 0) placement_error = e;
      return;
    }
    for (int t = 1; t <= total_steps; ++t) {
      driver->run_step();
      if (unit == 0) progress.step(t, platform.clock().now());
    }
    if (unit == 0) out.records = driver->history();
  });

  if (placement_error) {
    out.fits = false;
    out.shortfall = placement_error->shortfalls();
    out.fit_message = placement_error->what();
  } else {
    out.summary = runtime::summarize(out.records);
  }
  out.simulated_seconds = simulation.now();
  out.activities = simulation.activity_counts();
  if (settings.trace) out.timeline = simulation.timeline();
  out.wall_seconds = std::chrono::duration<double>(WallClock::now() - wall_start).count();
  return out;
}

}  // namespace asteria::cli
