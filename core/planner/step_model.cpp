#include "core/planner/step_model.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/planner/placement_baselines.hpp"
#include "core/planner/subgroups.hpp"
#include "core/run/driver_settings.hpp"
#include "core/runtime/driver/step_setup.hpp"
#include "core/runtime/service/shadow_bound.hpp"
#include "core/workload/model_memory.hpp"
#include "hwmodels/cost_model.hpp"
#include "hwmodels/unit_budgets.hpp"

namespace asteria::planner {
namespace {

using platform::Tier;

constexpr std::size_t kElementBytes = sizeof(float);  // state and values in fp32, as asteria sim runs them

std::size_t at(Tier t) { return static_cast<std::size_t>(t); }
double& load(Usage& u, Resource r) { return u[static_cast<std::size_t>(r)]; }

// What the simulator's device stream charges a piece: training kernels at the step's GEMM peak,
// optimizer kernels at fp32 (as asteria sim's device time model charges them).
double device_seconds(const hw::CostModel& costs, const platform::Cost& c) {
  return c.reduced_precision ? costs.gpu_step_seconds(c) : costs.gpu_optimizer_seconds(c);
}

// The loads of moving `bytes` between two tiers (sim_memory.cpp's routes: NVMe to or from the
// device crosses the host link as well).
void charge_transfer(Usage& u, const hw::HardwareProfile& p, Tier from, Tier to, double bytes) {
  const double nvme_latency = p.nvme.latency.value;
  if (from == Tier::nvme) load(u, Resource::nvme_read) += nvme_latency + bytes / p.nvme.read_bandwidth.value;
  if (from == Tier::device && to != Tier::device) load(u, Resource::link_d2h) += hw::CostModel::transfer_seconds(p.device_to_host, bytes);
  if (from != Tier::device && to == Tier::device) load(u, Resource::link_h2d) += hw::CostModel::transfer_seconds(p.host_to_device, bytes);
  if (to == Tier::nvme) load(u, Resource::nvme_write) += nvme_latency + bytes / p.nvme.write_bandwidth.value;
}

// The fixed loads of a block-free step plan: forward and backward on the device, the layers'
// transfers on the link and disk.
Usage step_loads(const plan::StepPlan& plan, const hw::CostModel& costs) {
  Usage u{};
  for (const plan::Op& op : plan.ops) {
    if (op.kind == plan::OpKind::forward || op.kind == plan::OpKind::backward)
      for (const platform::Cost& piece : op.cost.pieces()) load(u, Resource::device_compute) += device_seconds(costs, piece);
    if (op.kind == plan::OpKind::transfer) charge_transfer(u, costs.profile(), op.from, op.to, op.cost.bytes());
  }
  return u;
}

// The device time at which each layer's backward is done: the block-free plan's device ops in
// issue order (the stream runs them in that order).
std::vector<double> backward_done(const plan::StepPlan& plan, const hw::CostModel& costs, std::size_t layers) {
  std::vector<double> done(layers, 0.0);
  double t = 0;
  for (const plan::Op& op : plan.ops) {
    if (op.kind != plan::OpKind::forward && op.kind != plan::OpKind::backward) continue;
    for (const platform::Cost& piece : op.cost.pieces()) t += device_seconds(costs, piece);
    if (op.kind == plan::OpKind::backward) done[static_cast<std::size_t>(op.layer)] = t;
  }
  return done;
}

// The largest state bytes the plan holds acquired at once (every block counted).
double largest_held_set(const plan::StepPlan& plan, const std::vector<BlockDemand>& blocks) {
  double most = 0;
  for (const std::vector<int>& set : plan::blocks_held_together(plan)) {
    double sum = 0;
    for (int b : set) sum += blocks[static_cast<std::size_t>(b)].state_bytes;
    most = std::max(most, sum);
  }
  return most;
}

plan::StepPlan plan_with_sites(const StepModel& m, const std::vector<plan::Resource>& sites, int host_release_delay) {
  std::vector<plan::BlockWork> blocks = m.blocks;
  for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i].update_on = sites[i];
  plan::ScheduleOptions schedule = m.schedule;
  schedule.host_release_delay = host_release_delay;
  return plan::schedule_plan(m.layers, blocks, schedule);
}

}  // namespace

namespace {

// The step driver's set-up of one unit: its layers, blocks (labels, costs, jobs) and schedule. The
// rank's own plan (forward, backward, its blocks' ops) is a single unit's: the collectives are
// not the planner's resources.
runtime::StepSetup unit_setup(const run::RunConfig& spec, const hw::HardwareProfile& profile,
                              std::span<const runtime::LayerSpec> layers) {
  runtime::StepSetupOptions setup_options;
  setup_options.element_bytes = kElementBytes;
  setup_options.staleness = spec.staleness;
  setup_options.schedule = run::driver_options(spec, 0, {}).schedule;
  setup_options.schedule.data_parallel_ranks = 1;
  setup_options.schedule.parallelism = plan::Parallelism::ddp;
  setup_options.host_workers = spec.host_workers > 0 ? spec.host_workers : hw::default_host_workers(profile);
  return runtime::set_up_step(layers, spec.optimizer, spec.hp, setup_options);
}

// The blocks' owners among `ranks`, as the step driver assigns them (-1: replicated, every rank
// holds every block).
std::vector<int> block_owners(const run::RunConfig& spec, const runtime::StepSetup& setup, int ranks) {
  if (ranks < 2 || !plan::shards_state(spec.parallelism)) return std::vector<int>(setup.blocks.size(), -1);
  return setup.block_owners(ranks);
}

StepModel step_model_of(const run::RunConfig& spec, const hw::HardwareProfile& profile,
                        const workload::WorkloadModel& weights, const runtime::StepSetup& whole,
                        const std::vector<int>& owners, RankShare share);

}  // namespace

StepModel build_step_model(const run::RunConfig& spec, const hw::HardwareProfile& profile,
                           const workload::WorkloadModel& weights, std::span<const runtime::LayerSpec> layers,
                           RankShare share) {
  if (share.ranks < 1 || share.rank < 0 || share.rank >= share.ranks)
    throw InputError("plan", "ranks", "a rank in [0, ranks) of ranks >= 1, found rank " + std::to_string(share.rank) +
                                          " of " + std::to_string(share.ranks));
  const runtime::StepSetup setup = unit_setup(spec, profile, layers);
  return step_model_of(spec, profile, weights, setup, block_owners(spec, setup, share.ranks), share);
}

std::vector<StepModel> build_rank_step_models(const run::RunConfig& spec, const hw::HardwareProfile& profile,
                                              const workload::WorkloadModel& weights,
                                              std::span<const runtime::LayerSpec> layers, int ranks) {
  if (ranks < 1) throw InputError("plan", "ranks", "at least 1 rank, found " + std::to_string(ranks));
  const runtime::StepSetup setup = unit_setup(spec, profile, layers);
  const std::vector<int> owners = block_owners(spec, setup, ranks);
  const bool sharded = std::any_of(owners.begin(), owners.end(), [](int o) { return o >= 0; });
  std::vector<StepModel> models;
  for (int r = 0; r < (sharded ? ranks : 1); ++r)
    models.push_back(step_model_of(spec, profile, weights, setup, owners, {ranks, r}));
  return models;
}

namespace {

StepModel step_model_of(const run::RunConfig& spec, const hw::HardwareProfile& profile,
                        const workload::WorkloadModel& weights, const runtime::StepSetup& whole,
                        const std::vector<int>& owners, RankShare share) {
  StepModel m;
  m.hw = profile.name;
  m.model = weights.config.name;
  m.batch = static_cast<int>(weights.config.micro_batch);
  m.share = share;
  const hw::CostModel costs(profile);
  const int workers = spec.host_workers > 0 ? spec.host_workers : hw::default_host_workers(profile);
  const int frequency = std::max(1, spec.hp.precondition_frequency);

  // The rank's blocks: those it owns, or every one when they are replicated.
  runtime::StepSetup setup;  // the whole set-up's layers and schedule, the rank's blocks
  setup.layers = whole.layers;
  setup.schedule = whole.schedule;
  m.all_blocks = whole.blocks.size();
  for (std::size_t i = 0; i < whole.blocks.size(); ++i) {
    if (owners[i] >= 0 && owners[i] != share.rank) continue;
    setup.blocks.push_back(whole.blocks[i]);
    m.block_index.push_back(i);
  }
  m.layers = setup.layers;
  m.schedule = setup.schedule;
  m.blocks = setup.block_work();

  m.problem.rates = {profile.host_to_device.bandwidth.value, profile.device_to_host.bandwidth.value,
                     profile.nvme.read_bandwidth.value, profile.nvme.write_bandwidth.value, false, workers};
  std::vector<double> host_compute_s, host_stream_s;  // per block: a host update's compute, its memory traffic alone
  for (const runtime::BlockSetup& b : setup.blocks) {
    const bool refreshes = !b.warm_refresh.empty();
    BlockDemand d;
    d.label = b.label;
    d.state_bytes = static_cast<double>(b.state_bytes);
    d.gradient_bytes = b.value_bytes;
    d.weight_bytes = b.value_bytes;
    d.device_update_s = device_seconds(costs, b.costs.accumulate) + device_seconds(costs, b.costs.apply) +
                        (refreshes ? device_seconds(costs, b.costs.publish) / frequency : 0.0);
    // The host workers share the host's memory bandwidth (the simulator's DRAM resource): a
    // memory-bound update takes its bytes / bandwidth however many workers run it, so one
    // worker's share is charged at least workers x that (the pool divides it by workers).
    const double scale[3] = {1.0, 1.0, refreshes ? 1.0 / frequency : 0.0};
    const platform::Cost* phases[3] = {&b.costs.accumulate, &b.costs.apply, &b.costs.publish};
    double compute = 0, traffic = 0;
    for (int k = 0; k < 3; ++k) {
      const hw::CostModel::Charge c = costs.host_worker_charge(*phases[k]);
      compute += scale[k] * c.compute_seconds;
      traffic += scale[k] * c.memory_bytes;
    }
    const double stream_s = traffic / costs.host_memory_bandwidth();
    d.host_update_s = std::max(compute + stream_s, workers * stream_s);
    host_compute_s.push_back(compute);
    host_stream_s.push_back(stream_s);
    m.problem.blocks.push_back(d);
    for (const platform::Cost& piece : b.warm_refresh) m.refresh_host_s += costs.cpu_worker_seconds(piece);
  }
  m.refresh_host_s /= static_cast<double>(frequency) * workers;

  // Fixed loads: the step without blocks.
  const plan::StepPlan bare = plan::schedule_plan(m.layers, {}, m.schedule);
  m.fixed_s = step_loads(bare, costs);
  m.issue_s_per_op = profile.cpu.issue_latency.value;

  // Host paths: backward done, gradient down, one piece of the update, weights up.
  const std::vector<double> done = backward_done(bare, costs, m.layers.size());
  const std::vector<bool> deferred = plan::deferred_blocks(m.blocks, m.schedule.defer_fraction, 0);
  for (std::size_t i = 0; i < m.blocks.size(); ++i) {
    const plan::BlockWork& w = m.blocks[i];
    const BlockDemand& d = m.problem.blocks[i];
    const double pieces = std::clamp(std::ceil(w.weight_bytes / m.schedule.host_piece_bytes), 1.0,
                                     static_cast<double>(m.schedule.max_host_pieces));
    // The pieces compute side by side; their traffic shares the memory bandwidth.
    double path = done[static_cast<std::size_t>(w.layer)] +
                  hw::CostModel::transfer_seconds(profile.device_to_host, d.gradient_bytes) +
                  host_compute_s[i] / pieces + host_stream_s[i];
    if (m.schedule.tiers.weights != Tier::host) path += hw::CostModel::transfer_seconds(profile.host_to_device, d.weight_bytes);
    m.host_path_s.push_back(deferred[i] ? 0.0 : path);
    m.nvme_read_s.push_back(deferred[i] ? 0.0 : profile.nvme.latency.value + d.state_bytes / profile.nvme.read_bandwidth.value);
  }

  // Capacities.
  const hw::TierBudgets budgets = hw::budgets_from(profile);
  // One rank's share of the model: the schedule over every rank (fsdp shards the weights).
  plan::ScheduleOptions over_ranks = m.schedule;
  over_ranks.data_parallel_ranks = share.ranks;
  over_ranks.parallelism = spec.parallelism;
  const workload::ModelMemory own = workload::model_memory(weights, over_ranks, Tier::device);
  PlanCapacity& c = m.capacity;
  c.budget = {static_cast<double>(budgets.device), static_cast<double>(budgets.host), static_cast<double>(budgets.nvme)};
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) c.model[at(t)] = static_cast<double>(own.on(t));
  // The model's own memory is reserved as asteria sim reserves it (a unified pool counted once).
  std::vector<runtime::TierShortfall> short_of;
  const hw::TierBudgets room = hw::less_model_memory(budgets, own, short_of);
  if (!short_of.empty()) {
    const runtime::TierShortfall& s = short_of.front();
    throw InputError("plan", "capacities." + std::string(s.shared_pool ? "unified" : platform::to_string(s.tier)),
                     "room for the model's own weights, gradients and activations: they take " +
                         significant(static_cast<double>(s.needed), 4) + " B, the " + s.where() + " holds " +
                         significant(static_cast<double>(s.capacity), 4) +
                         " B (see --weights-on, --gradients-on, --checkpoints-on, --batch)");
  }
  // The shadow pool's in-flight bound, as the step driver sizes it (the refresh and update order
  // is the same wherever the blocks are updated): the pool grows past it only into host room the
  // state leaves free, which the planner gives to the state.
  const std::vector<plan::Resource> all_device(m.blocks.size(), plan::Resource::device);
  runtime::ShadowPoolSizing sizing;
  sizing.host_workers = workers;
  sizing.staleness = spec.staleness;
  // Blocks may rest away from where they are updated (moved), so installs are early only
  // where they touch no values.
  sizing.early_installs =
      runtime::installs_anywhere(spec.numerics, run::warmup_steps_of(spec), /*state_pinned=*/false);
  const double shadow = static_cast<double>(
      runtime::shadow_pool_bounds(setup.shadow_demands(),
                                  plan::blocks_refreshed_before_update(plan_with_sites(m, all_device, 1)), sizing)
          .in_flight);
  c.shadow_host = shadow;
  // The store keeps the shadow room free before it places anything: without it nothing fits.
  if (shadow > static_cast<double>(room.host))
    throw InputError("plan", "capacities.host",
                     "room for the refresh jobs' shadow state: " + significant(shadow, 4) + " B beside the model's " +
                         significant(c.model[at(Tier::host)], 4) + " B, in the host's " +
                         significant(c.budget[at(Tier::host)], 4) +
                         " B (a smaller shadow pool: --staleness 0, fewer --host-workers, or a smaller "
                         "--max-precond-dim)");
  const std::vector<plan::Resource>& on_device = all_device;
  const std::vector<plan::Resource> on_host(m.blocks.size(), plan::Resource::host);
  c.staging[at(Tier::device)] = largest_held_set(plan_with_sites(m, on_device, 1), m.problem.blocks);
  c.staging[at(Tier::host)] = largest_held_set(plan_with_sites(m, on_host, 1), m.problem.blocks);
  std::array<double, platform::kTierCount> left = {static_cast<double>(room.device), static_cast<double>(room.host),
                                                   static_cast<double>(room.nvme)};
  for (Tier t : {Tier::device, Tier::host}) left[at(t)] -= c.staging[at(t)];
  left[at(Tier::host)] -= c.shadow_host;
  if (budgets.unified != 0) {
    // One pool for device and host. State that fits the pool whole fits it however it splits;
    // otherwise the device's budget comes first and the host has the rest.
    const double pool = static_cast<double>(room.unified) - c.staging[at(Tier::device)] - c.staging[at(Tier::host)] -
                        c.shadow_host;
    double state = 0;
    for (const BlockDemand& d : m.problem.blocks) state += d.state_bytes;
    left[at(Tier::device)] = std::min(left[at(Tier::device)], pool);
    left[at(Tier::host)] =
        std::min(left[at(Tier::host)], state <= pool ? pool : pool - std::max(0.0, left[at(Tier::device)]));
  }
  m.problem.capacities = {std::max(0.0, left[at(Tier::device)]), std::max(0.0, left[at(Tier::host)]),
                          std::max(0.0, left[at(Tier::nvme)])};
  validate(m.problem);
  return m;
}

}  // namespace

StepPrediction predict_step(const StepModel& m, const Assignment& assignment) {
  StepPrediction p;
  p.blocks = predict(m.problem, assignment);
  std::vector<plan::Resource> sites;
  for (const BlockChoice& c : assignment)
    sites.push_back(c.site == Site::host ? plan::Resource::host : plan::Resource::device);
  p.issuer_s = static_cast<double>(plan_with_sites(m, sites, 1).ops.size()) * m.issue_s_per_op;
  for (std::size_t i = 0; i < assignment.size(); ++i)
    if (assignment[i].site == Site::host)
      p.host_path_s = std::max(p.host_path_s, m.host_path_s[i] + (assignment[i].tier == Tier::nvme ? m.nvme_read_s[i] : 0.0));
  std::size_t busiest = 0;  // the first of equals, as the planner reports it
  for (std::size_t r = 0; r < p.resource_s.size(); ++r) {
    p.resource_s[r] = m.fixed_s[r] + p.blocks.resource_s[r];
    if (p.resource_s[r] > p.resource_s[busiest]) busiest = r;
  }
  p.step_s = std::max({p.resource_s[busiest], p.issuer_s, p.host_path_s});
  p.binding = p.step_s == p.resource_s[busiest] ? std::string(to_string(static_cast<Resource>(busiest)))
              : p.step_s == p.issuer_s          ? "issuer"
                                                : "host_path";
  return p;
}

PlanMethod parse_plan_method(const std::string& text, const std::string& option) {
  if (text == "optimal") return {PlanMethod::Kind::optimal, 0};
  if (text == "all-device") return {PlanMethod::Kind::all_device, 0};
  if (text == "all-host") return {PlanMethod::Kind::all_host, 0};
  const std::string prefix = "interleaved:";
  if (text.rfind(prefix, 0) == 0) {
    int k = 0;
    const char* first = text.data() + prefix.size();
    const char* last = text.data() + text.size();
    const auto [end, error] = std::from_chars(first, last, k);
    if (error == std::errc{} && end == last && k >= 1) return {PlanMethod::Kind::interleaved, k};
  }
  throw InputError("command line", option,
                   "optimal, all-device, all-host or interleaved:K (K >= 1: every K-th block on the device), found '" +
                       text + "'");
}

std::string to_string(const PlanMethod& method) {
  switch (method.kind) {
    case PlanMethod::Kind::optimal: return "optimal";
    case PlanMethod::Kind::all_device: return "all-device";
    case PlanMethod::Kind::all_host: return "all-host";
    case PlanMethod::Kind::interleaved: return "interleaved:" + std::to_string(method.k);
  }
  return "?";
}

namespace {

double usage_sum(const Usage& u) {
  double sum = 0;
  for (double x : u) sum += x;
  return sum;
}

// Moves blocks, one at a time, to the option of least summed usage that makes no resource
// busier than the busiest is now, keeps every tier within its capacity and no host path longer
// than the step: among equally fast placements, the one that moves and computes least.
Assignment polish(const StepModel& m, Assignment a) {
  const StepPrediction before = predict_step(m, a);
  Usage totals = before.resource_s;
  const double limit = *std::max_element(totals.begin(), totals.end()) * (1 + 1e-12);
  std::array<double, platform::kTierCount> resting = before.blocks.resting_bytes;
  const Assignment original = a;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const BlockDemand& d = m.problem.blocks[i];
    Usage current = option_usage(d, m.problem.rates, a[i]);
    double best_sum = usage_sum(current);
    for (const BlockChoice& option : kOptions) {
      const Usage use = option_usage(d, m.problem.rates, option);
      if (option == a[i] || usage_sum(use) >= best_sum) continue;
      bool ok = true;
      for (std::size_t r = 0; r < totals.size(); ++r) ok = ok && totals[r] - current[r] + use[r] <= limit;
      if (option.tier != a[i].tier)
        ok = ok && resting[at(option.tier)] + d.state_bytes <= m.problem.capacities.of(option.tier);
      if (option.site == Site::host)
        ok = ok && m.host_path_s[i] + (option.tier == Tier::nvme ? m.nvme_read_s[i] : 0.0) <= before.step_s;
      if (!ok) continue;
      for (std::size_t r = 0; r < totals.size(); ++r) totals[r] += use[r] - current[r];
      resting[at(a[i].tier)] -= d.state_bytes;
      resting[at(option.tier)] += d.state_bytes;
      a[i] = option;
      current = use;
      best_sum = usage_sum(use);
    }
  }
  // The issuer's ops change with the sites: keep the polish only when the step is no longer (but
  // for rounding: the sums run in another order).
  return predict_step(m, a).step_s <= before.step_s * (1 + 1e-9) ? a : original;
}

struct Optimum {
  Assignment assignment;
  std::string note;
};

// The solver over `unit` (blocks, or the subgroups `groups`) with the step's fixed loads as
// forced pseudo-blocks, the host option priced out of units whose host path exceeds `threshold`.
Solution solve_units(const StepModel& m, const PlacementProblem& unit,
                              const std::vector<double>& unit_path, double threshold, const ChooseOptions& options) {
  PlacementProblem full = unit;
  for (std::size_t u = 0; u < unit.blocks.size(); ++u)
    if (unit_path[u] > threshold) full.blocks[u].host_update_s = 1e9;  // never worth it
  const ResourceRates& r = unit.rates;
  auto fixed = [&](Resource res) { return m.fixed_s[static_cast<std::size_t>(res)]; };
  SolverOptions solver;
  solver.time_limit_s = options.time_limit_s;
  solver.mip_gap = options.mip_gap;
  solver.fixed.assign(unit.blocks.size(), std::nullopt);
  full.blocks.push_back({"(step: device)", 0, 0, 0, fixed(Resource::device_compute), 0});
  solver.fixed.push_back(BlockChoice{Tier::device, Site::device});
  full.blocks.push_back({"(step: link and host)", 0, fixed(Resource::link_d2h) * r.link_d2h_bytes_per_s,
                         fixed(Resource::link_h2d) * r.link_h2d_bytes_per_s, 0,
                         fixed(Resource::host_compute) * r.host_workers});
  solver.fixed.push_back(BlockChoice{Tier::host, Site::host});
  const double disk = std::max(fixed(Resource::nvme_read) * r.nvme_read_bytes_per_s,
                               fixed(Resource::nvme_write) * r.nvme_write_bytes_per_s);
  if (disk > 0) {
    full.blocks.push_back({"(step: nvme)", disk, 0, 0, 0, 0});
    full.capacities.nvme += disk;  // its pseudo-state takes no real room
    solver.fixed.push_back(BlockChoice{Tier::nvme, Site::host});
  }
  Solution s = solve(full, solver);
  s.assignment.resize(unit.blocks.size());
  return s;
}

Optimum optimum(const StepModel& m, const PlacementProblem& unit, const Subgroups* groups,
                const ChooseOptions& options) {
  std::vector<double> unit_path(unit.blocks.size(), 0.0);
  for (std::size_t u = 0; u < unit.blocks.size(); ++u) {
    const std::size_t first = groups != nullptr ? groups->first[u] : u;
    const std::size_t last = groups != nullptr ? groups->first[u + 1] : u + 1;
    for (std::size_t b = first; b < last; ++b) unit_path[u] = std::max(unit_path[u], m.host_path_s[b]);
  }
  auto expand = [&](const Assignment& a) { return groups != nullptr ? planner::expand(*groups, a) : a; };
  std::optional<Optimum> best;
  double best_step = std::numeric_limits<double>::infinity();
  double threshold = std::numeric_limits<double>::infinity();
  std::vector<double> tried;
  for (int round = 0; round < 6; ++round) {
    const Solution s = solve_units(m, unit, unit_path, threshold, options);
    const Assignment a = polish(m, expand(s.assignment));
    const StepPrediction p = predict_step(m, a);
    if (p.step_s < best_step) {
      best_step = p.step_s;
      std::string note = std::string(to_string(s.method)) + " solver, " + std::string(to_string(s.status));
      if (s.mip_gap > 0) note += " (gap " + significant(100 * s.mip_gap, 3) + " %)";
      if (round > 0) note += ", host paths over " + significant(threshold, 4) + " s kept off the host";
      best = Optimum{a, note};
    }
    // The next threshold: what this placement's resources need. Lower when host paths bound it
    // (keep them off the host); higher when pricing them out made the resources busier (let
    // back the paths that fit). Stops at a threshold tried before.
    const double resources = std::max(*std::max_element(p.resource_s.begin(), p.resource_s.end()), p.issuer_s);
    if (round == 0 && p.host_path_s <= resources) break;
    if (std::find(tried.begin(), tried.end(), resources) != tried.end()) break;
    tried.push_back(resources);
    threshold = resources;
  }
  return *best;
}

}  // namespace

ChosenPlan choose_plan(const StepModel& m, const PlanMethod& method, const ChooseOptions& options) {
  if (options.subgroups < 1) throw InputError("command line", "--subgroups", "expected an integer >= 1");
  ChosenPlan out;
  out.method = method;
  const std::size_t n = m.problem.blocks.size();
  const bool grouped = n > static_cast<std::size_t>(options.subgroups);
  const Subgroups groups =
      grouped ? subgroups(m.problem.blocks, options.subgroups) : Subgroups{};
  PlacementProblem unit = m.problem;  // the units of placement: blocks or subgroups
  if (grouped) unit.blocks = groups.demands;
  auto expand = [&](const Assignment& a) { return grouped ? planner::expand(groups, a) : a; };
  const std::string granularity =
      grouped ? std::to_string(groups.demands.size()) + " subgroups of " + std::to_string(n) + " blocks"
              : std::to_string(n) + " blocks";
  switch (method.kind) {
    case PlanMethod::Kind::all_device:
      out.assignment = all_device_site(m.problem).assignment;
      out.note = "every update on the device, state by fill order (" + std::to_string(n) + " blocks)";
      break;
    case PlanMethod::Kind::all_host:
      out.assignment = all_host_site(m.problem).assignment;
      out.note = "every update on the host, state by fill order (" + std::to_string(n) + " blocks)";
      break;
    case PlanMethod::Kind::interleaved:
      out.assignment = expand(interleaved(unit, method.k).assignment);
      out.note = "every " + std::to_string(method.k) + "-th unit updated on the device (" + granularity + ")";
      break;
    case PlanMethod::Kind::optimal: {
      const Optimum o = optimum(m, unit, grouped ? &groups : nullptr, options);
      out.assignment = o.assignment;
      out.note = o.note + ", " + granularity;
      break;
    }
  }
  out.prediction = predict_step(m, out.assignment);
  return out;
}

}  // namespace asteria::planner
