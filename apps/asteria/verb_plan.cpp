// asteria plan: where each optimizer block's state rests and where its update runs, chosen by
// the placement planner (core/planner/) on a hardware profile's cost model; printed with its
// predicted step, written as a plan file (--out), and checked against the simulator (--check).
#include <algorithm>
#include <array>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>
#include <ostream>
#include <string>

#include "apps/asteria/options.hpp"
#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/plan_file.hpp"
#include "core/run/run_arguments.hpp"
#include "core/plan/schedule.hpp"
#include "core/planner/step_model.hpp"
#include "apps/asteria/progress.hpp"
#include "apps/asteria/run_report.hpp"
#include "apps/asteria/sim_verb.hpp"
#include "apps/asteria/table.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "hwmodels/profile_loader.hpp"
#include "sim/child_process.hpp"

namespace asteria::cli {
namespace {

using platform::Tier;
using planner::ChooseOptions;
using planner::ChosenPlan;
using planner::PlanMethod;
using planner::StepPrediction;
using planner::choose_plan;
using planner::parse_plan_method;
using planner::predict_step;

constexpr std::string_view kAbout =
    "Chooses, for every optimizer block, the tier its state rests on (device, host, nvme) and where its\n"
    "update runs (device, or the host's CPU workers), so that the predicted step is shortest: the\n"
    "placement planner (core/planner/) over the blocks of --model under --optimizer, with the costs and\n"
    "capacities of the --hw profile, beside the step's own loads (forward and backward, the model's\n"
    "transfers, the refreshes). Prints the plan, every resource's predicted seconds and the baselines\n"
    "side by side; --out FILE writes the plan for asteria sim|synth|train --placement-file FILE, and\n"
    "--check simulates the plan (asteria sim, data-free) and reports predicted against simulated step time.";

constexpr std::string_view kDetails =
    "Methods: optimal (the solver: exact branch and bound up to 20 units, GLPK's MIP above), all-device\n"
    "  (every update on the device), all-host (every update on the host: ZeRO-Offload), interleaved:K\n"
    "  (every K-th unit updated on the device: Deep Optimizer States); the baselines rest state on the\n"
    "  first tier with room, device first. Units: blocks, or --subgroups consecutive blocks merged.\n"
    "Data-parallel ranks (--units/--nodes, --parallelism): each rank's memory holds its share of the model\n"
    "  (fsdp: its weight shards); with sharded state (zero1, zero2, fsdp) each rank places the blocks it\n"
    "  owns in its own memory, every rank is planned, the plan file holds every block as its owner placed\n"
    "  it, and the step shown is the slowest rank's.\n"
    "The prediction is a lower bound of the step: the busiest resource's summed seconds (apps/asteria/\n"
    "  core/planner/step_model.hpp); waits between dependent ops make the simulated step longer.\n";

// Run options that make no sense for a plan: it chooses the placement and checks it data-free,
// every rank simulated.
constexpr std::array<const char*, 13> kNotForPlan = {
    "placement",       "placement-file",      "trace",                  "trace-steps",
    "trace-units",     "numerics",            "time",                   "straggler",
    "simulated-nodes", "coalesce-ring-steps", "concurrent-collectives", "collective-algorithm",
    "collective-flows"};

po::options_description plan_options() {
  po::options_description o("Options (those of asteria sim that a plan uses)");
  const po::options_description run = run_config_options(RunVerb::sim);
  for (const auto& option : run.options())
    if (option->long_name() != "out") o.add(option);
  po::options_description own("Plan");
  own.add_options()
      ("method", po::value<std::string>()->default_value("optimal")->value_name("METHOD"),
       "optimal | all-device | all-host | interleaved:K")
      ("subgroups", po::value<int>()->default_value(256)->value_name("N"),
       "place consecutive blocks in at most N subgroups (block by block when there are fewer blocks)")
      ("time-limit", po::value<double>()->default_value(30.0)->value_name("SECONDS"), "the MIP solver's time limit")
      ("mip-gap", po::value<double>()->default_value(1e-3)->value_name("FRACTION"),
       "the MIP solver stops within this relative gap of its bound (0: proven optimal)")
      ("out", po::value<std::string>()->value_name("FILE"), "write the plan file here (YAML)")
      ("check", "simulate the plan (--steps, default 3, after the warm-up) and report predicted vs simulated")
      ("search-schedule",
       "also choose the micro-batch count (divisors of the batch up to 16) and, for the vertical schedule, the "
       "deferred fraction (0, 0.1, 0.2, 0.3: GreedySnake's range): each candidate's placement by --method, then "
       "every candidate simulated (data-free, --steps) and the fastest kept");
  o.add(own);
  return o;
}

std::string seconds_text(double s) { return significant(s, 4); }

// Blocks per (tier, site), and their state.
std::string choice_counts(const planner::StepModel& m, const planner::Assignment& a) {
  std::array<std::array<int, 2>, platform::kTierCount> count{};
  std::array<double, platform::kTierCount> bytes{};
  for (std::size_t i = 0; i < a.size(); ++i) {
    ++count[static_cast<std::size_t>(a[i].tier)][a[i].site == planner::Site::host ? 1 : 0];
    bytes[static_cast<std::size_t>(a[i].tier)] += m.problem.blocks[i].state_bytes;
  }
  Table t{{"state on", "blocks updated on device", "on host", "state"}, {false, true, true, true}, {}};
  for (Tier tier : {Tier::device, Tier::host, Tier::nvme}) {
    const auto i = static_cast<std::size_t>(tier);
    t.add_row({std::string(platform::to_string(tier)), std::to_string(count[i][0]),
               tier == Tier::device ? "-" : std::to_string(count[i][1]), bytes_text(bytes[i])});
  }
  return table_text(t);
}

std::string resource_table(const planner::StepModel& m, const StepPrediction& p) {
  Table t{{"resource", "fixed s", "blocks s", "total s", ""}, {false, true, true, true, false}, {}};
  for (int r = 0; r < planner::kResourceCount; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const std::string name(planner::to_string(static_cast<planner::Resource>(r)));
    t.add_row({name, seconds_text(m.fixed_s[i]), seconds_text(p.blocks.resource_s[i]), seconds_text(p.resource_s[i]),
               name == p.binding ? "<- binding" : ""});
  }
  t.add_row({"issuer", "", "", seconds_text(p.issuer_s), p.binding == "issuer" ? "<- binding" : ""});
  return table_text(t);
}

std::string placement_summary(const planner::Assignment& a) {
  std::array<int, planner::kOptionCount> n{};
  for (const planner::BlockChoice& c : a) ++n[static_cast<std::size_t>(planner::option_index(c))];
  std::string s;
  for (int o = 0; o < planner::kOptionCount; ++o)
    if (n[static_cast<std::size_t>(o)] > 0)
      s += (s.empty() ? "" : ", ") + std::to_string(n[static_cast<std::size_t>(o)]) + " " +
           planner::to_string(planner::kOptions[static_cast<std::size_t>(o)]);
  return s.empty() ? "none" : s;
}

std::string baselines_table(const planner::StepModel& m, const ChosenPlan& chosen, const ChooseOptions& options) {
  Table t{{"method", "step s", "update s", "binding", "placement (tier/site)"}, {false, true, true, false, false}, {}};
  const std::array<PlanMethod, 4> methods = {{{PlanMethod::Kind::all_device, 0},
                                              {PlanMethod::Kind::all_host, 0},
                                              {PlanMethod::Kind::interleaved, 2},
                                              {PlanMethod::Kind::optimal, 0}}};
  for (const PlanMethod& method : methods) {
    const std::string name = to_string(method);
    try {
      const ChosenPlan p = name == to_string(chosen.method) ? chosen : choose_plan(m, method, options);
      t.add_row({name, seconds_text(p.prediction.step_s), seconds_text(p.prediction.blocks.time_s),
                 p.prediction.binding, placement_summary(p.assignment)});
    } catch (const InputError& e) {
      t.add_row({name, "-", "-", "-", std::string("does not fit: ") + e.what()});
    }
  }
  return table_text(t);
}

void print_plan(const planner::StepModel& m, const RunConfig& spec, const ChosenPlan& chosen, const ChooseOptions& options,
                std::ostream& out) {
  const planner::Capacities& cap = m.problem.capacities;
  double state = 0;
  for (const planner::BlockDemand& b : m.problem.blocks) state += b.state_bytes;
  out << "plan: " << m.model << " on " << m.hw << ", " << optim::to_string(spec.optimizer) << " (max_precond_dim "
      << spec.hp.max_precond_dim << "), " << plan::to_string(spec.schedule) << " schedule, batch " << m.batch << " in "
      << spec.micro_batches << " micro-batch(es), " << m.problem.blocks.size() << " blocks, state "
      << bytes_text(state) << ", " << m.problem.rates.host_workers << " host workers\n";
  out << "room for resting state: device " << bytes_text(cap.device) << ", host " << bytes_text(cap.host) << ", nvme "
      << bytes_text(cap.nvme) << " (budgets less the model's own memory "
      << bytes_text(m.capacity.model[0]) << " / " << bytes_text(m.capacity.model[1]) << " / "
      << bytes_text(m.capacity.model[2]) << ", staging " << bytes_text(m.capacity.staging[0]) << " / "
      << bytes_text(m.capacity.staging[1]) << ", refresh shadow " << bytes_text(m.capacity.shadow_host)
      << " on the host)\n\n";
  out << "method " << to_string(chosen.method) << ": " << chosen.note << "\n" << choice_counts(m, chosen.assignment)
      << "\n";
  out << "per resource: fixed = the step's own loads (forward, backward, the model's transfers), blocks = the "
         "optimizer updates as placed\n"
      << resource_table(m, chosen.prediction) << "\n";
  out << "predicted step " << seconds_text(chosen.prediction.step_s) << " s (binding " << chosen.prediction.binding
      << "); the blocks' update alone " << seconds_text(chosen.prediction.blocks.time_s) << " s\n";
  if (m.refresh_host_s > 0)
    out << "refreshes (not in the step: every " << spec.hp.precondition_frequency << " steps, beside them): "
        << seconds_text(m.refresh_host_s) << " s of the host workers per step, amortized\n";
  out << '\n';
  out << "methods side by side:\n" << baselines_table(m, chosen, options);
}

// Every rank's plan (one when the ranks hold the same blocks) and the rank whose predicted step is
// the longest: the step of all of them.
struct RankPlans {
  std::vector<planner::StepModel> models;
  std::vector<ChosenPlan> chosen;
  std::size_t slowest = 0;
  const planner::StepModel& model() const { return models[slowest]; }
  const ChosenPlan& plan() const { return chosen[slowest]; }
};

RankPlans plan_ranks(const RunConfig& spec, const hw::HardwareProfile& profile, const SimWorkload& workload,
                     const PlanMethod& method, const ChooseOptions& options, int ranks) {
  RankPlans p;
  p.models = planner::build_rank_step_models(spec, profile, workload.weights, workload.stack.layers, ranks);
  for (const planner::StepModel& m : p.models) {
    try {
      p.chosen.push_back(choose_plan(m, method, options));
    } catch (const InputError& e) {
      if (p.models.size() == 1) throw;
      throw InputError(e.source(), e.field(), e.expectation() + " (rank " + std::to_string(m.share.rank) + " of " +
                                                  std::to_string(ranks) + ")");
    }
    if (p.chosen.back().prediction.step_s > p.chosen[p.slowest].prediction.step_s) p.slowest = p.chosen.size() - 1;
  }
  return p;
}

PlanFile plan_file(const RankPlans& plans, const RunConfig& spec) {
  const planner::StepModel& m = plans.model();
  const ChosenPlan& chosen = plans.plan();
  PlanFile f;
  f.hw = *spec.hw;
  f.model = *spec.model;
  f.optimizer = std::string(optim::to_string(spec.optimizer));
  f.batch = m.batch;
  f.settings = run::planned_values(spec);
  f.host_workers = m.problem.rates.host_workers;
  f.method = to_string(chosen.method);
  f.predicted = PlanPredicted{chosen.prediction.blocks.time_s, chosen.prediction.step_s, chosen.prediction.binding};
  f.blocks.resize(m.all_blocks);
  for (std::size_t r = 0; r < plans.models.size(); ++r) {
    const planner::StepModel& rank = plans.models[r];
    const planner::Assignment& a = plans.chosen[r].assignment;
    for (std::size_t i = 0; i < a.size(); ++i)
      f.blocks[rank.block_index[i]] = {rank.problem.blocks[i].label, a[i].tier, a[i].site == planner::Site::device};
  }
  return f;
}

// Ranks planned apart: how their blocks, state and predicted steps spread.
void print_ranks(const RankPlans& plans, const RunConfig& spec, std::ostream& out) {
  const planner::StepModel& shown = plans.model();
  out << "data-parallel: " << shown.share.ranks << " ranks, " << plan::to_string(spec.parallelism);
  if (plans.models.size() == 1) {
    out << " (every rank holds every block and places it alike; the gradient collectives are not among the "
           "planner's resources: --check simulates them)\n\n";
    return;
  }
  double least_state = 0, most_state = 0, least_step = 0;
  std::size_t least_blocks = 0, most_blocks = 0;
  for (std::size_t r = 0; r < plans.models.size(); ++r) {
    double state = 0;
    for (const planner::BlockDemand& b : plans.models[r].problem.blocks) state += b.state_bytes;
    const std::size_t blocks = plans.models[r].problem.blocks.size();
    const double step = plans.chosen[r].prediction.step_s;
    least_state = r == 0 ? state : std::min(least_state, state);
    most_state = std::max(most_state, state);
    least_blocks = r == 0 ? blocks : std::min(least_blocks, blocks);
    most_blocks = std::max(most_blocks, blocks);
    least_step = r == 0 ? step : std::min(least_step, step);
  }
  out << ": each rank places the blocks it owns; per rank " << least_blocks << " to " << most_blocks
      << " blocks, state " << bytes_text(least_state) << " to " << bytes_text(most_state) << ", predicted step "
      << seconds_text(least_step) << " to " << seconds_text(plans.plan().prediction.step_s) << " s\n"
      << "shown: rank " << shown.share.rank << " (the longest predicted step, the step of every rank)\n";
  out << "the gradient and weight collectives are not among the planner's resources: --check simulates them\n\n";
}

// The simulated p50 step of a plan (data-free, one unit); nullopt when it does not fit.
std::optional<double> simulated_step(const RunConfig& plan_spec, const PlanFile& file,
                                     const hw::HardwareProfile& profile, const SimWorkload& workload,
                                     std::ostream& err) {
  RunConfig settings = plan_spec;
  settings.placement = runtime::PlacementPolicy::planned;
  settings.planned_blocks = file.blocks;
  if (!settings.placement_file) settings.placement_file = "(asteria plan)";
  // One simulation per process (SimGrid's engine cannot be reset): each candidate in a child.
  const sim::ChildOutcome outcome = sim::run_in_child_process([&](sim::ChildReport& report) {
    std::ostringstream quiet;
    const RunReport run = simulate(settings, profile, workload, quiet);
    report.write(run.fits ? exact_number(run.summary.p50_step_s) : std::string("does not fit"));
  });
  if (!outcome.succeeded()) {
    err << "asteria plan: a candidate's simulation failed: " << outcome.describe() << '\n';
    return std::nullopt;
  }
  if (outcome.report == "does not fit") return std::nullopt;
  return std::stod(outcome.report);
}

// --search-schedule: micro-batch counts (divisors of the batch up to 16) x deferred fractions
// (vertical only); each candidate placed by `method`, simulated, the fastest returned. The
// placement model cannot see what a deferred fraction overlaps, so the schedule's two numbers
// are chosen by simulation (an exact search over a small grid).
RunConfig search_schedule(const RunConfig& spec, const hw::HardwareProfile& profile,
                        const SimWorkload& workload, const PlanMethod& method, const ChooseOptions& options, int ranks,
                        bool show_progress, std::ostream& out, std::ostream& err) {
  const auto sequences = static_cast<int>(workload.weights.config.micro_batch);
  std::vector<double> fractions = {0.0};
  if (spec.schedule == plan::ScheduleOrder::vertical) fractions = {0.0, 0.1, 0.2, 0.3};
  Table t{{"micro-batches", "defer", "predicted s", "simulated s"}, {true, true, true, true}, {}};
  std::optional<std::pair<double, RunConfig>> best;
  std::vector<int> counts;
  for (int m = 1; m <= std::min(sequences, 16); ++m)
    if (sequences % m == 0) counts.push_back(m);
  const std::size_t total = counts.size() * fractions.size();
  // Each candidate is a whole simulation: say so, then how they go.
  ItemProgress progress(err, "plan", show_progress, total,
                        std::to_string(total) + " schedule candidates, each placed and simulated");
  std::size_t done = 0;
  for (int m : counts) {
    for (double alpha : fractions) {
      const std::string which = std::to_string(m) + " micro-batches, defer " + significant(alpha, 2);
      RunConfig candidate = spec;
      candidate.micro_batches = m;
      candidate.defer_fraction = alpha;
      std::optional<RankPlans> plans;
      try {
        plans = plan_ranks(candidate, profile, workload, method, options, ranks);
      } catch (const InputError& e) {  // this candidate cannot be placed: say why, try the next
        t.add_row({std::to_string(m), significant(alpha, 2), "-", "does not fit: " + e.field()});
        progress.done(++done, which + ": does not fit");
        continue;
      }
      const ChosenPlan& chosen = plans->plan();
      const std::optional<double> simulated =
          simulated_step(candidate, plan_file(*plans, candidate), profile, workload, err);
      t.add_row({std::to_string(m), significant(alpha, 2), seconds_text(chosen.prediction.step_s),
                 simulated ? seconds_text(*simulated) : std::string("does not fit")});
      progress.done(++done, which + ": " + (simulated ? seconds_text(*simulated) + " s simulated" : "does not fit"));
      if (simulated && (!best || *simulated < best->first)) best = std::pair{*simulated, candidate};
    }
  }
  out << "schedule search (" << to_string(spec.schedule) << ", " << sequences << " sequences per step):\n"
      << table_text(t);
  if (!best) throw InputError("command line", "--search-schedule", "a micro-batch count whose plan fits; none did");
  out << "chosen: " << best->second.micro_batches << " micro-batches, defer fraction "
      << significant(best->second.defer_fraction, 2) << " (simulated " << seconds_text(best->first) << " s)\n\n";
  return best->second;
}

// Simulates the plan (data-free, one unit) and prints predicted against simulated.
int check_plan(const RunConfig& plan_spec, const PlanFile& file, const hw::HardwareProfile& profile,
               const SimWorkload& workload, std::ostream& out, std::ostream& err) {
  RunConfig s = plan_spec;
  s.placement = runtime::PlacementPolicy::planned;
  s.planned_blocks = file.blocks;
  if (!s.placement_file) s.placement_file = "(asteria plan --check)";
  const RunReport report = simulate(s, profile, workload, err);
  if (!report.fits) {
    err << "asteria plan: the simulation could not place the plan: " << report.fit_message << '\n';
    return 1;
  }
  // The prediction is a step between refreshes: the median step, when refreshes are rarer than
  // every other step (the mean carries the refresh steps' waits).
  const double predicted = file.predicted->step_s;
  const double simulated = report.summary.p50_step_s;
  out << "\ncheck (asteria sim, data-free): " << report.summary.steps << " steps after " << report.warmup_steps
      << " warm-up steps\n";
  Table t{{"", "step s"}, {false, true}, {}};
  t.add_row({"predicted", seconds_text(predicted)});
  t.add_row({"simulated (p50)", seconds_text(simulated)});
  t.add_row({"simulated (mean)", seconds_text(report.summary.mean_step_s)});
  out << table_text(t);
  out << "gap (predicted - simulated p50) / simulated p50: "
      << significant(100.0 * (predicted - simulated) / simulated, 3) << " %\n";
  return 0;
}

}  // namespace

int plan_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const auto values = parse_verb_options({"plan", "--hw PROFILE --model MODEL --optimizer NAME [options]", kAbout,
                                          kDetails},
                                         plan_options(), args, out, err, exit_code);
  if (!values) return exit_code;
  const po::variables_map& v = *values;
  for (const char* option : kNotForPlan)
    if (v.count(option) != 0 && !v[option].defaulted())
      throw InputError("command line", std::string("--") + option,
                       "not an option of plan (it chooses the placement and runs one unit data-free)");
  RunConfig spec = read_run_config(RunVerb::sim, v);
  if (v["steps"].defaulted()) spec.steps = 3;
  const bool show_progress = spec.progress;  // the plan's own lines; its simulations stay quiet
  spec.progress = false;
  validate(spec);
  ChooseOptions options;
  options.subgroups = v["subgroups"].as<int>();
  options.time_limit_s = v["time-limit"].as<double>();
  options.mip_gap = v["mip-gap"].as<double>();
  if (!(options.time_limit_s > 0)) throw InputError("command line", "--time-limit", "expected seconds > 0");
  if (!(options.mip_gap >= 0 && options.mip_gap < 1)) throw InputError("command line", "--mip-gap", "expected a fraction in [0, 1)");
  const PlanMethod method = parse_plan_method(v["method"].as<std::string>(), "--method");
  std::optional<std::filesystem::path> out_file;
  if (v.count("out") != 0) out_file = v["out"].as<std::string>();
  if (out_file) prepare_output_file(*out_file, spec.overwrite, "plan");

  const hw::HardwareProfile profile = hw::load_profile(hw::find_profile(*spec.hw));
  const SimWorkload workload = workload_from_config(*spec.model, spec.seed, spec.batch);
  if (workload.weights.config.micro_batch % static_cast<workload::count>(spec.micro_batches) != 0)
    throw InputError("command line", "--micro-batches",
                     "a divisor of the step's " + std::to_string(workload.weights.config.micro_batch) +
                         " sequences (--batch, or the model config's micro_batch), found " +
                         std::to_string(spec.micro_batches));
  // Data-parallel ranks: those of --units/--nodes (one unit without them).
  int ranks = 1;
  if (spec.sim.units || spec.sim.nodes)
    ranks = resolve_unit_count(spec.sim.units, spec.sim.nodes, profile.units_per_node(), profile.name).units;
  if (plan::shards_state(spec.parallelism) && ranks < 2)
    throw InputError("command line", "--parallelism",
                     "ddp on one GPU (" + std::string(plan::to_string(spec.parallelism)) +
                         " shards among data-parallel ranks: give --units or --nodes for 2 GPUs or more)");
  if (v.count("search-schedule") != 0)
    spec = search_schedule(spec, profile, workload, method, options, ranks, show_progress, out, err);
  const RankPlans plans = plan_ranks(spec, profile, workload, method, options, ranks);
  if (ranks > 1) print_ranks(plans, spec, out);
  print_plan(plans.model(), spec, plans.plan(), options, out);
  const PlanFile file = plan_file(plans, spec);
  if (out_file) {
    write_plan_file(*out_file, file);
    out << "\nwrote " << out_file->string() << " (use: asteria sim --placement-file " << out_file->string() << ")\n";
    spec.placement_file = std::filesystem::absolute(*out_file);
  }
  if (v.count("check") != 0) return check_plan(spec, file, profile, workload, out, err);
  return 0;
}

}  // namespace asteria::cli
