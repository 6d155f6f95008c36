// asteria sim: builds the workload, the simulated platform and one step driver per unit (the
// data-parallel ranks: every step's gradients are all-reduced among the units), runs them, and
// keeps unit 0's per-step records.
#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <memory>
#include <ostream>

#include "apps/asteria/memory_check.hpp"
#include "apps/asteria/progress.hpp"
#include "apps/asteria/replay_metadata.hpp"
#include "apps/asteria/run_loop.hpp"
#include "apps/asteria/sim_training.hpp"
#include "apps/asteria/run_trace.hpp"
#include "apps/asteria/sim_verb.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "traces/busy_meter.hpp"
#include "core/runtime/driver/shared_step_setup.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "core/runtime/driver/warmup.hpp"
#include "core/runtime/driver/step_setup.hpp"
#include "core/workload/runtime_stack.hpp"
#include "hwmodels/energy.hpp"
#include "hwmodels/profile_loader.hpp"
#include "sim/simulation.hpp"

namespace asteria::cli {
namespace {

using platform::Tier;
using WallClock = std::chrono::steady_clock;

constexpr std::size_t kStateElementBytes = sizeof(float);  // optimizer state is fp32

// What the run holds on every running unit (the weights with values, the blocks' bookkeeping
// data-free) against the machine's memory, before the workload is built: a config of 10^8
// layers or a d_model of 4194304 would otherwise take minutes to exhaust it.
void check_sim_memory(const RunConfig& spec, const hw::HardwareProfile& profile) {
  const run::SimConfig& machine = spec.sim;
  workload::ModelConfig config = workload::find_model_config(*spec.model);
  if (spec.batch >= 1) config.micro_batch = spec.batch;
  const UnitCount count = resolve_unit_count(machine.units, machine.nodes, profile.units_per_node(), profile.name);
  // The platform's own bound first: fewer ranks running would not help there.
  sim::check_platform_units(count.units, profile, "command line", machine.nodes ? "--nodes" : "--units");
  long long running = count.units;
  if (machine.simulated_nodes && *machine.simulated_nodes >= 1)
    running = std::min(running, static_cast<long long>(*machine.simulated_nodes) * profile.units_per_node());
  const sim::TierBudgets budgets = sim::budgets_from(profile);
  StackRun run;
  run.units = static_cast<int>(running);
  run.numerics = spec.numerics;
  run.optimizer = spec.optimizer;
  run.hp = spec.hp;
  run.state_budget = static_cast<double>(budgets.device) + static_cast<double>(budgets.host) +
                     static_cast<double>(budgets.nvme);
  run.model_source = *spec.model;
  run.units_option = machine.nodes ? "--nodes" : "--units";
  run.units_note = "the units that run: --units or --nodes, or --simulated-nodes K for K nodes' worth";
  check_stack_memory(config, run);
}

// The simulated machine of `units` units, with the shortcuts and the straggler asked for.
// Whether every rank of the run does the same work at the same times, so that the first node's
// ranks stand for all (representative ranks, exact bit for bit): nothing tells the ranks apart
// when the run is data-free, no rank is slowed, no block has an owner (no sharded state, refreshes
// replicated), the nodes are whole and alike, and no trace wants every rank's activities. The
// simulator checks it as the run goes: the simulated ranks reach every collective together
// (collectives_asymmetric in summary.json counts those where they did not).
bool symmetric_ranks(const RunConfig& spec, int units, int per_node) {
  return spec.numerics == platform::Numerics::shapes && spec.straggler.rank < 0 &&
         !plan::shards_state(spec.parallelism) && !spec.share_refreshes && !spec.trace.enabled && per_node >= 1 &&
         units % per_node == 0 && units / per_node >= 2;
}

sim::SimulationOptions simulation_options(const RunConfig& spec, const hw::HardwareProfile& profile, int units) {
  const run::SimConfig& machine = spec.sim;
  sim::SimulationOptions options;
  options.profile = profile;
  options.units = units;
  options.host_workers_per_unit = spec.host_workers;
  options.numerics = spec.numerics;
  if (machine.simulated_nodes) {
    if (*machine.simulated_nodes < 1) throw InputError("command line", "--simulated-nodes", "expected an integer >= 1");
    options.simulated_units =
        static_cast<int>(std::min<long long>(units, static_cast<long long>(*machine.simulated_nodes) * profile.units_per_node()));
    // Representative ranks stand for ranks doing the same work; owners and stragglers differ.
    if (options.simulated_units < units && spec.share_refreshes && !plan::shards_state(spec.parallelism))
      throw InputError("command line", "--simulated-nodes",
                       "ranks that do the same work: with --refresh-sharing owners each rank refreshes other blocks "
                       "(use --refresh-sharing replicated, or simulate every node)");
    if (options.simulated_units < units && spec.straggler.rank >= 0)
      throw InputError("command line", "--simulated-nodes",
                       "ranks that do the same work: --straggler makes one rank differ (simulate every node)");
  }
  else if (const int per_node = profile.units_per_node(); symmetric_ranks(spec, units, per_node))
    options.simulated_units = per_node;  // exact: every node's ranks do what the first node's do
  options.coalesce_ring_steps = machine.coalesce_ring_steps;
  options.serial_collectives = machine.serial_collectives;
  options.predicted_collectives = machine.predicted_collectives;
  if (machine.collective_algorithm != "auto")
    options.collective_algorithm = sim::collective::parse_algorithm(machine.collective_algorithm, "--collective-algorithm");
  if (spec.straggler.rank >= 0) {
    if (spec.straggler.rank >= units)
      throw InputError("command line", "--straggler",
                       "a rank below the " + std::to_string(units) + " simulated units, found " +
                           std::to_string(spec.straggler.rank));
    options.host_slowdown.assign(static_cast<std::size_t>(units), 1.0);
    options.host_slowdown[static_cast<std::size_t>(spec.straggler.rank)] = spec.straggler.factor;
  }
  return options;
}

}  // namespace

UnitCount resolve_unit_count(std::optional<int> units, std::optional<int> nodes, int units_per_node,
                             const std::string& hw_name) {
  if (units_per_node < 1) throw InputError(hw_name, "node.units_per_node", "expected an integer >= 1");
  if (units && *units < 1) throw InputError("command line", "--units", "expected an integer >= 1");
  if (nodes && *nodes < 1) throw InputError("command line", "--nodes", "expected an integer >= 1");
  if (!nodes) {
    const int u = units.value_or(1);
    return {u, (u + units_per_node - 1) / units_per_node};
  }
  // 64-bit: nodes x units_per_node may exceed an int.
  const long long most = static_cast<long long>(*nodes) * units_per_node;
  if (most > std::numeric_limits<int>::max())
    throw InputError("command line", "--nodes",
                     "expected at most " + std::to_string(std::numeric_limits<int>::max() / units_per_node) +
                         " nodes of " + hw_name + " (" + std::to_string(units_per_node) + " units per node)");
  if (!units) return {static_cast<int>(most), *nodes};
  const long long fewest = most - units_per_node + 1;
  if (*units < fewest || *units > most)
    throw InputError("command line", "--nodes",
                     "--nodes " + std::to_string(*nodes) + " of " + hw_name + " (" + std::to_string(units_per_node) +
                         " units per node) holds " + std::to_string(fewest) + " to " + std::to_string(most) +
                         " units, found --units " + std::to_string(*units) +
                         "; give one of --nodes and --units, or make them agree");
  return {*units, *nodes};
}

SimWorkload workload_from_config(const std::string& model, std::uint64_t seed, int batch) {
  workload::ModelConfig config = workload::find_model_config(model);
  if (batch < 0) throw InputError("command line", "--batch", "expected an integer >= 0 (0: the config's micro_batch)");
  if (batch > 0) config.micro_batch = static_cast<workload::count>(batch);
  workload::WorkloadModel wl = workload::build_workload(config);
  SimWorkload w;
  w.name = config.name;
  w.parameters = static_cast<std::size_t>(wl.totals.parameters);
  w.stack = workload::runtime_stack(wl, runtime::GradientSpec{seed});
  w.weights = std::move(wl);
  return w;
}

RunReport run_sim(const RunConfig& spec, std::ostream& progress_out) {
  validate(spec);
  const hw::HardwareProfile profile = hw::load_profile(hw::find_profile(*spec.hw));
  check_sim_memory(spec, profile);
  return simulate(spec, profile, workload_from_config(*spec.model, spec.seed, spec.batch), progress_out);
}

RunReport simulate(const RunConfig& spec, const hw::HardwareProfile& profile, const SimWorkload& workload,
                   std::ostream& progress_out) {
  validate(spec);
  const auto wall_start = WallClock::now();
  RunReport out;
  out.spec = spec;
  out.hw = profile.name;
  out.model = workload.name;
  const UnitCount count = resolve_unit_count(spec.sim.units, spec.sim.nodes, profile.units_per_node(), profile.name);
  if (workload.weights.config.micro_batch % static_cast<workload::count>(spec.micro_batches) != 0)
    throw InputError("command line", "--micro-batches",
                     "a divisor of the step's " + std::to_string(workload.weights.config.micro_batch) +
                         " sequences (--batch, or the model config's micro_batch), found " +
                         std::to_string(spec.micro_batches));
  out.units = count.units;
  out.tokens_per_step = static_cast<double>(count.units) * static_cast<double>(workload.weights.config.micro_batch) *
                        static_cast<double>(workload.weights.config.sequence_length);
  out.nodes = count.nodes;
  out.parameters = workload.parameters;
  // The blocks every unit's driver sets up (one state per unit, unsharded).
  runtime::StepSetupOptions setup_options;
  setup_options.element_bytes = kStateElementBytes;
  setup_options.staleness = spec.staleness;
  const runtime::StepSetup step_setup =
      runtime::set_up_step(workload.stack.layers, spec.optimizer, spec.hp, setup_options);
  out.blocks = step_setup.blocks.size();
  out.state_bytes = step_setup.state_bytes();
  plan::ScheduleOptions schedule = driver_options(spec, 0, {}).schedule;
  schedule.data_parallel_ranks = out.units;
  const workload::ModelMemory model_memory =
      workload.model_memory
          ? *workload.model_memory
          : workload::model_memory(workload.weights, schedule,
                                   spec.placement == runtime::PlacementPolicy::host ||
                                           spec.placement == runtime::PlacementPolicy::nvme
                                       ? Tier::host
                                       : Tier::device);
  const std::size_t model_device_bytes = model_memory.on(Tier::device);
  out.host_workers = spec.host_workers > 0 ? spec.host_workers : sim::default_host_workers(profile);
  out.platform = "SimGrid model of " + std::to_string(out.units) + " x " + profile.name + " (" +
                 std::to_string(out.nodes) + (out.nodes == 1 ? " node" : " nodes") + "), " +
                 std::to_string(out.host_workers) + " host worker(s) per unit";
  out.extra.emplace_back("model_device_bytes", model_device_bytes);
  out.extra.emplace_back("model_host_bytes", model_memory.on(Tier::host));
  out.extra.emplace_back("model_nvme_bytes", model_memory.on(Tier::nvme));

  sim::SimulationOptions options = simulation_options(spec, profile, out.units);
  out.extra.emplace_back("simulated_units", sim::running_units(options));
  out.extra.emplace_back("coalesce_ring_steps", options.coalesce_ring_steps);
  out.extra.emplace_back("serial_collectives", options.serial_collectives);
  sim::TierBudgets budgets = sim::budgets_from(profile);
  if (workload.state_budgets) {
    budgets.device = std::min(budgets.device, workload.state_budgets->device);
    budgets.host = std::min(budgets.host, workload.state_budgets->host);
    budgets.nvme = std::min(budgets.nvme, workload.state_budgets->nvme);
  } else {
    std::vector<runtime::TierShortfall> short_of;
    budgets = hw::less_model_memory(budgets, model_memory, short_of);
    if (!short_of.empty()) {
      out.fits = false;
      out.fit_message = "the model's weights, gradients and activations alone exceed the " + short_of.front().where() +
                        " memory (see --weights-on, --gradients-on, --checkpoints-on)";
      out.shortfall = std::move(short_of);
      out.capacity_bytes = {0, budgets.host, budgets.nvme};
      out.wall_seconds = std::chrono::duration<double>(WallClock::now() - wall_start).count();
      return out;
    }
  }
  options.budgets = budgets;
  out.capacity_bytes = {budgets.device, budgets.host, budgets.nvme};

  const runtime::SyntheticModelSpec& stack = workload.stack;
  const int warmup = warmup_steps_of(spec);
  out.warmup_steps = warmup;
  const int total_steps = warmup + spec.steps;

  TraceSession trace(spec, out.units, warmup + 1, total_steps);
  // Each unit's busy resources over the measured steps (for the energy), its activities passed
  // on to the trace.
  std::vector<std::unique_ptr<traces::BusyMeter>> meters;
  if (profile.power.has_power())
    for (int u = 0; u < out.units; ++u)
      meters.push_back(std::make_unique<traces::BusyMeter>(u, warmup + 1, trace.sink(u)));
  std::vector<char> simulated(static_cast<std::size_t>(out.units), 0);  // the units whose activities come
  options.activities = [&](int unit) -> platform::ActivitySink* {
    if (meters.empty()) return trace.sink(unit);
    simulated.at(static_cast<std::size_t>(unit)) = 1;
    return meters.at(static_cast<std::size_t>(unit)).get();
  };
  // --gradients corpus: every unit trains a replica of the model on its slice of the batch.
  std::unique_ptr<SimTraining> training;
  if (spec.sim.gradients == run::SimGradients::corpus) {
    if (sim::running_units(options) < out.units)
      throw InputError("command line", "--simulated-nodes",
                       "every unit simulated: with --gradients corpus each unit trains on its own slice of the batch");
    training = std::make_unique<SimTraining>(spec, workload.weights.config, out.units, total_steps, &progress_out);
  }
  sim::Simulation simulation(options);
  const hw::CostModel& costs = simulation.cost_model();
  const runtime::DriverOptions options_per_unit =
      [&] {
        runtime::DriverOptions o = driver_options(spec, warmup, [&costs](const platform::Cost& cost) {
          return cost.reduced_precision ? costs.gpu_step_seconds(cost) : costs.gpu_optimizer_seconds(cost);
        });
        o.issue_seconds_per_op = profile.cpu.issue_latency.value;
        o.numerics_site = workload.numerics_site;
        // Every unit is a data-parallel rank: each step's gradients are averaged over all of them.
        o.schedule.data_parallel_ranks = out.units;
        o.shared_setup = std::make_shared<runtime::SharedStepSetup>();  // every unit runs the same model
        return o;
      }();

  std::optional<runtime::PlacementError> placement_error;
  // Wall time until every unit has built its driver (placement included): what a run costs
  // before its first step, kept apart so that the wall time per step measures the stepping.
  int drivers_built = 0;
  std::optional<WallClock::time_point> setup_done;
  // ... and until every unit's first and last step calls have returned. A step call returns once
  // the step before it has ended (the driver keeps a step open until the next one), so the time
  // between the two is that of total_steps - 1 whole steps: the steady stepping, without the
  // set-up, the first step's own work and the run's end (the last step's tail, the last gathers,
  // the drivers torn down).
  std::array<int, 2> units_at{};  // units past their first, their last step call
  std::array<std::optional<WallClock::time_point>, 2> stepped;
  Progress progress(progress_out, "sim", spec.progress, total_steps);
  simulation.run([&](int unit, platform::Platform& platform) {
    // Each rank's own data: its gradients differ until the reduce averages them.
    runtime::SyntheticModelSpec rank_stack = stack;
    rank_stack.gradients.data_rank = unit;
    std::optional<runtime::SyntheticModel<float>> synthetic;
    if (!training) synthetic.emplace(rank_stack, spec.numerics);
    runtime::TrainingModel<float>& model = training ? training->model(unit) : *synthetic;
    std::optional<runtime::StepDriver<float>> driver;
    try {
      driver.emplace(platform, model, spec.optimizer, spec.hp, options_per_unit);
    } catch (const runtime::PlacementError& e) {
      if (unit == 0) placement_error = e;
      return;
    }
    if (++drivers_built == simulation.simulated_units()) setup_done = WallClock::now();
    // Every unit runs the loop; unit 0 reports.
    RunReport* report = unit == 0 ? &out : nullptr;
    start_run(*driver, trace, unit, options_per_unit.numerics_site, report);
    StepHooks hooks;
    if (training) hooks.before = [&, unit](int t) { training->before_step(unit, t); };
    hooks.after = [&, unit](int t, const runtime::StepRecord&) {
      for (const int k : {0, 1})
        if (t == (k == 0 ? 1 : total_steps) && ++units_at[k] == simulation.simulated_units()) stepped[k] = WallClock::now();
      const std::string learned = training ? training->after_step(unit, t, *driver) : std::string();
      return unit == 0 ? "simulated " + significant(platform.clock().now(), 4) + " s" +
                             (learned.empty() ? "" : ", " + learned)
                       : std::string();
    };
    run_steps(*driver, 1, total_steps, unit == 0 ? &progress : nullptr, hooks, report);
  });

  if (placement_error) {
    out.fits = false;
    out.shortfall = placement_error->shortfalls();
    out.fit_message = placement_error->what();
  }
  if (!meters.empty() && out.fits && out.summary.steps > 0) {
    // The simulated units' energy, scaled to every unit where representative ranks stand for
    // the others.
    hw::Energy total;
    int counted = 0;
    for (std::size_t u = 0; u < meters.size(); ++u)
      if (simulated[u] != 0) {
        total += hw::unit_energy(profile, out.summary.total_step_s, meters[u]->busy(), out.nodes);
        ++counted;
      }
    const double scale = static_cast<double>(out.units) / static_cast<double>(std::max(1, counted));
    for (double* part : {&total.device_j, &total.host_j, &total.memory_j, &total.storage_j, &total.network_j, &total.over_cap_j})
      *part *= scale;
    out.energy = total;
  }
  if (training && out.fits) training->report(out);
  const sim::ActivityCounts activities = simulation.activity_counts();
  out.extra.emplace_back("simulated_seconds", simulation.now());
  out.extra.emplace_back("activities", activities.total());
  out.extra.emplace_back("activities_communications", activities.communications);  // copies and collective flows
  out.extra.emplace_back("activities_executions", activities.executions);
  out.extra.emplace_back("activities_ios", activities.ios);
  out.extra.emplace_back("collectives_predicted", activities.collectives_predicted);
  out.extra.emplace_back("collectives_overlapped", activities.collectives_overlapped);
  out.extra.emplace_back("collectives_asymmetric", activities.collectives_asymmetric);
  if (activities.collectives_asymmetric > 0)
    progress_out << "sim: representative ranks: in " << activities.collectives_asymmetric
                 << " collectives the simulated ranks arrived apart, so they are not alike and the mirrored ranks' "
                    "times are approximate (simulate every node for exact ones)\n";
  if (trace.enabled() && spec.out && out.fits) {
    std::map<std::string, std::string> metadata = workload.trace_metadata;
    metadata.merge(replay_metadata(spec, {"sim", "", out.units, {{"hw", out.hw}}}, stack.layers, out.host_workers,
                                   warmup, model_device_bytes, false, runtime::ModelPass::layer_by_layer));
    out.trace = trace.write(*spec.out, std::move(metadata));
  }
  out.wall_seconds = std::chrono::duration<double>(WallClock::now() - wall_start).count();
  out.extra.emplace_back("wall_seconds_per_step",
                         out.wall_seconds / static_cast<double>(std::max(1, total_steps)));
  if (setup_done && stepped[0] && stepped[1]) {
    const auto since_start = [&](WallClock::time_point t) { return std::chrono::duration<double>(t - wall_start).count(); };
    out.extra.emplace_back("wall_seconds_setup", since_start(*setup_done));
    out.extra.emplace_back("wall_seconds_first_step", since_start(*stepped[0]) - since_start(*setup_done));
    if (total_steps > 1)
      out.extra.emplace_back("wall_seconds_per_step_steady", (since_start(*stepped[1]) - since_start(*stepped[0])) /
                                                                 static_cast<double>(total_steps - 1));
    out.extra.emplace_back("wall_seconds_teardown", out.wall_seconds - since_start(*stepped[1]));
  }
  return out;
}

}  // namespace asteria::cli
