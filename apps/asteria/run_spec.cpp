#include "apps/asteria/run_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/option_values.hpp"
#include "core/runtime/driver/warmup.hpp"
#include "apps/asteria/plan_file.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/real/blas_kernel_choice.hpp"

namespace asteria::cli {
namespace {

std::string size_text(std::size_t bytes) {
  if (bytes % (std::size_t{1} << 30) == 0) return std::to_string(bytes >> 30) + "GiB";
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  return std::to_string(bytes);
}

}  // namespace

std::string_view to_string(RunVerb verb) noexcept {
  switch (verb) {
    case RunVerb::synth: return "synth";
    case RunVerb::sim: return "sim";
    case RunVerb::train: return "train";
  }
  return "sim";
}

RunSpec default_run_spec(RunVerb verb) {
  RunSpec s;
  s.verb = verb;
  switch (verb) {
    case RunVerb::synth:
      s.optimizer = optim::OptimizerKind::shampoo;
      s.numerics = platform::Numerics::refresh;
      s.time = platform::TimeSource::modelled;
      s.steps = 40;
      break;
    case RunVerb::sim:
      s.hw = "gh200";
      s.model = "tiny";
      s.numerics = platform::Numerics::shapes;
      s.time = platform::TimeSource::simulated;
      s.steps = 30;
      break;
    case RunVerb::train:
      s.model = "gpt-mini";
      s.numerics = platform::Numerics::values;
      s.time = platform::TimeSource::measured;
      s.steps = 200;
      s.warmup_steps = 0;  // every training step counts
      s.host_workers = 1;  // the model's GEMMs use the other cores
      s.device_budget = std::size_t{8} << 30;
      s.host_budget = std::size_t{16} << 30;
      break;
  }
  s.hp = optim::default_hyperparameters(s.optimizer);
  return s;
}

po::options_description run_spec_options(RunVerb verb) {
  const RunSpec d = default_run_spec(verb);
  po::options_description o("Run options (shared by synth, sim and train)");
  auto text = [](const std::optional<std::string>& value, const char* none) { return value.value_or(none); };
  o.add_options()
      ("hw", po::value<std::string>()->value_name("PROFILE"),
       verb == RunVerb::train ? "not for train: measured time needs no hardware profile"
                              : ("hardware profile name or path (default: " + text(d.hw, "none: built-in device model") + ")").c_str())
      ("model", po::value<std::string>()->value_name("MODEL"),
       ("model config name or path (default: " + text(d.model, "the --shape stack") + ")").c_str())
      ("optimizer", po::value<std::string>()->default_value(std::string(optim::to_string(d.optimizer)))->value_name("NAME"),
       "adamw | shampoo | soap | kl-shampoo | muon")
      ("placement", po::value<std::string>()->default_value("device")->value_name("POLICY"),
       "optimizer state placement: device | host | tiered | nvme (planned: with --placement-file)")
      ("placement-file", po::value<std::string>()->value_name("FILE"),
       "place and update every optimizer block as this plan (asteria plan --out FILE) says; its schedule "
       "settings (and model, optimizer) apply unless given here")
      ("lookahead", po::value<int>()->default_value(d.lookahead)->value_name("N"), "uses ahead the store prefetches state")
      ("staleness", po::value<int>()->default_value(0)->value_name("S"),
       "steps a refresh may be published after the synchronous schedule (0: synchronous)")
      ("publish", po::value<std::string>()->default_value("deterministic")->value_name("POLICY"),
       "deterministic (results depend on S only) | opportunistic (newest finished refresh within S)")
      ("refresh-on", po::value<std::string>()->default_value("host")->value_name("WHERE"),
       "host (refreshes on the host workers, published under the staleness bound) | device (on the "
       "device stream in order with the step, on the device's solver: cuSOLVER on a GPU; the synchronous "
       "baseline, with --staleness 0)")
      ("refresh-sharing", po::value<std::string>()->default_value("owners")->value_name("HOW"),
       "data-parallel ranks: owners (each block's refreshes run on one rank, chosen by cost, and the "
       "results travel hierarchically) | replicated (every rank runs every refresh)")
      ("sync-period", po::value<int>()->default_value(1)->value_name("K"),
       "data-parallel ranks: each refresh result is sent at the first step end on a multiple of K from "
       "its snapshot on (as soon as its owner has it), at the latest at the last step end before it is due")
      ("straggler", po::value<std::string>()->value_name("RANK:FACTOR"),
       "data-parallel ranks: rank RANK's host workers (its refreshes) run FACTOR (>= 1) times slower")
      ("shard-state", "data-parallel ranks: shard the optimizer state (each block's state, refreshes and update "
       "on one rank; new weights sent to the others at the step's end)")
      ("schedule", po::value<std::string>()->default_value("horizontal")->value_name("ORDER"),
       "horizontal (micro-batch after micro-batch) | vertical (all micro-batches of a layer before the next, "
       "in snake order: GreedySnake)")
      ("micro-batches", po::value<int>()->default_value(1)->value_name("M"),
       "micro-batches per step (gradient accumulation; the step's batch is split evenly)")
      ("defer-fraction", po::value<double>()->default_value(0.0)->value_name("ALPHA"),
       "fraction of the optimizer update (by weight bytes) deferred into the next step's forward, in [0, 1)")
      ("weights-on", po::value<std::string>()->default_value("device")->value_name("TIER"),
       "where the model's weights rest between uses: device | host | nvme (fetched before each use)")
      ("gradients-on", po::value<std::string>()->default_value("device")->value_name("TIER"),
       "where gradients are accumulated: device | host | nvme")
      ("checkpoints-on", po::value<std::string>()->default_value("device")->value_name("TIER"),
       "where activation checkpoints rest: device | host | nvme (off the device implies --recompute-activations)")
      ("recompute-activations", "activation checkpointing: each backward recomputes its layer's forward")
      ("host-workers", po::value<int>()->default_value(d.host_workers)->value_name("N"),
       "refresh workers per unit (0: the cores but one, by the profile's threads per worker)")
      ("steps", po::value<int>()->default_value(d.steps)->value_name("N"), "measured steps")
      ("warmup-steps", po::value<int>()->value_name("N"),
       verb == RunVerb::train ? "steps run first and left out of the summary (default 0)"
                              : "steps run first and left out of the summary (default: until the first refresh is "
                                "published, so measured steps are steady state)")
      ("seed", po::value<std::string>()->default_value(std::to_string(d.seed))->value_name("N"), "seed of weights, gradients, batches")
      ("numerics", po::value<std::string>()->default_value(std::string(platform::to_string(d.numerics)))->value_name("WHAT"),
       "values (every op computes) | refresh (only refreshes compute after the warm-up) | shapes (nothing does)")
      ("time", po::value<std::string>()->default_value(std::string(platform::to_string(d.time)))->value_name("SOURCE"),
       verb == RunVerb::synth ? "modelled (real clock, emulated device kernels) | measured (real clock, device work on "
                                "a CPU thread) | simulated (one-thread discrete-event backend)"
                              : (verb == RunVerb::sim ? "simulated (the only one here)" : "measured (the only one here)"))
      ("out", po::value<std::string>()->value_name("DIR"),
       "write steps.csv, plan.txt, summary.json (and trace.csv, trace.json) here; checked before the run")
      ("overwrite", "replace the results of an earlier run in --out (refused otherwise)")
      ("trace", "record the executed plan: trace.csv (native) and trace.json (Chrome/Perfetto) in --out")
      ("trace-steps", po::value<std::string>()->value_name("FIRST:LAST"),
       "steps the trace keeps (default: the first measured steps that fit --trace-max-bytes)")
      ("trace-units", po::value<int>()->value_name("N"),
       "units (GPUs) the trace keeps: 0..N-1 (default: all, or as many as one step fits in --trace-max-bytes)")
      ("trace-max-bytes", po::value<std::string>()->default_value("100MB")->value_name("SIZE"),
       "bound on the trace files; records past it are counted, not kept")
      ("no-progress", "no progress lines on stderr");
  if (verb != RunVerb::sim) {
    o.add_options()
        ("device-budget", po::value<std::string>()->default_value(size_text(d.device_budget))->value_name("SIZE"),
         "device tier budget")
        ("host-budget", po::value<std::string>()->default_value(size_text(d.host_budget))->value_name("SIZE"),
         "host tier budget")
        ("nvme-budget", po::value<std::string>()->default_value(size_text(d.nvme_budget))->value_name("SIZE"),
         "NVMe tier budget")
        ("nvme-dir", po::value<std::string>()->value_name("DIR"), "NVMe tier files go here (real backend)");
  }
  o.add(hyperparameter_options());
  return o;
}

runtime::DriverOptions driver_options(const RunSpec& spec, int warmup_steps, runtime::DeviceSeconds device_seconds) {
  runtime::DriverOptions o;
  o.numerics = spec.numerics;
  o.warmup_steps = warmup_steps;
  o.store.policy = spec.placement;
  o.planned_blocks = spec.planned_blocks;
  o.store.lookahead = spec.lookahead;
  o.service = runtime::service_options(spec.hp, spec.staleness, spec.publish);
  o.service.refresh_site = spec.refresh_on;
  o.device_seconds = std::move(device_seconds);
  o.share_refreshes = spec.share_refreshes;
  o.sync_period = spec.sync_period;
  o.shard_state = spec.shard_state;
  o.schedule.order = spec.schedule;
  o.schedule.micro_batches = spec.micro_batches;
  o.schedule.defer_fraction = spec.defer_fraction;
  o.schedule.tiers = spec.model_tiers;
  o.schedule.recompute_activations = spec.recompute_activations;
  // Computing values on the real backend, each hook's device launch computes every optimizer op
  // of the hook, host-placed ones too (the preconditioner service is single-threaded): their
  // time goes there, and the trace says so.
  if (spec.time != platform::TimeSource::simulated && spec.numerics == platform::Numerics::values)
    o.numerics_site = plan::NumericsSite::hook_launch;
  return o;
}

int warmup_steps_of(const RunSpec& spec, int at_least) {
  if (spec.warmup_steps) return *spec.warmup_steps;
  const optim::Step first = runtime::first_publication_step(spec.optimizer, spec.hp, spec.staleness);
  const optim::Step longest = std::max<optim::Step>(1000, 10 * static_cast<optim::Step>(spec.steps));
  if (first > longest)
    throw InputError("command line", "--staleness",
                     "a warm-up of at most " + std::to_string(longest) +
                         " steps (the larger of 1000 and 10 x --steps) before the first measured step; at --staleness " +
                         std::to_string(spec.staleness) + " the first refresh is published at step " +
                         std::to_string(first) + " (give --warmup-steps to run that anyway)");
  return std::max(at_least, static_cast<int>(first));
}

std::pair<std::int64_t, std::int64_t> parse_step_range(const std::string& text, const std::string& option) {
  const std::size_t colon = text.find(':');
  auto number = [&](std::string_view part, std::int64_t& out) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), out);
    return error == std::errc{} && end == part.data() + part.size() && out >= 1;
  };
  std::int64_t first = 0, last = 0;
  if (colon == std::string::npos || !number(std::string_view(text).substr(0, colon), first) ||
      !number(std::string_view(text).substr(colon + 1), last) || last < first)
    throw InputError(option, option, "expected FIRST:LAST, steps >= 1 with FIRST <= LAST, found \"" + text + "\"");
  return {first, last};
}

namespace {
platform::Tier parse_tier(const std::string& text, const std::string& option) {
  for (platform::Tier t : {platform::Tier::device, platform::Tier::host, platform::Tier::nvme})
    if (text == platform::to_string(t)) return t;
  throw InputError("command line", option, "device, host or nvme, found '" + text + "'");
}

// A plan file's setting applies to the run unless the command line gives the option with another
// value: a plan predicted for one schedule says nothing about another.
template <class T>
void take_from_plan(T& setting, const std::optional<T>& planned, const po::variables_map& v, const char* option,
                    const std::string& file, const char* field, const std::string& planned_text,
                    const std::string& given_text) {
  if (!planned) return;
  const bool given = v.count(option) != 0 && !v[option].defaulted();
  if (given && setting != *planned)
    throw InputError("command line", std::string("--") + option,
                     "the plan file's value " + planned_text + " (" + file + ": " + field + ") or no --" + option +
                         ", found " + given_text);
  setting = *planned;
}

std::string tier_text(const std::optional<platform::Tier>& t) {
  return t ? std::string(platform::to_string(*t)) : std::string();
}

// Model, hardware and optimizer of the plan: taken when not given; a model or optimizer other
// than the plan's is refused (its blocks would not be the run's). --hw may differ (a what-if on
// another machine); sim takes the plan's when none is given.
void apply_plan_identity(RunSpec& s, const po::variables_map& v, const PlanFile& plan) {
  const std::string file = s.placement_file->string();
  if (v.count("model") != 0 && *s.model != plan.model)
    throw InputError("command line", "--model",
                     "the plan file's model '" + plan.model + "' (" + file + ": model) or no --model, found '" +
                         *s.model + "'");
  s.model = plan.model;
  if (!v["optimizer"].defaulted() && v["optimizer"].as<std::string>() != plan.optimizer)
    throw InputError("command line", "--optimizer",
                     "the plan file's optimizer '" + plan.optimizer + "' (" + file +
                         ": optimizer) or no --optimizer, found '" + v["optimizer"].as<std::string>() + "'");
  if (s.verb == RunVerb::sim && v.count("hw") == 0 && plan.hw) s.hw = plan.hw;
}

void apply_plan_schedule(RunSpec& s, const po::variables_map& v, const PlanFile& plan) {
  const std::string file = s.placement_file->string();
  if (plan.schedule)
    take_from_plan(s.schedule, plan.schedule, v, "schedule", file, "schedule",
                   std::string(plan::to_string(*plan.schedule)), std::string(plan::to_string(s.schedule)));
  take_from_plan(s.micro_batches, plan.micro_batches, v, "micro-batches", file, "micro_batches",
                 std::to_string(plan.micro_batches.value_or(0)), std::to_string(s.micro_batches));
  take_from_plan(s.defer_fraction, plan.defer_fraction, v, "defer-fraction", file, "defer_fraction",
                 exact_number(plan.defer_fraction.value_or(0.0)), exact_number(s.defer_fraction));
  take_from_plan(s.model_tiers.weights, plan.weights_on, v, "weights-on", file, "weights_on", tier_text(plan.weights_on),
                 tier_text(s.model_tiers.weights));
  take_from_plan(s.model_tiers.gradients, plan.gradients_on, v, "gradients-on", file, "gradients_on",
                 tier_text(plan.gradients_on), tier_text(s.model_tiers.gradients));
  take_from_plan(s.model_tiers.checkpoints, plan.checkpoints_on, v, "checkpoints-on", file, "checkpoints_on",
                 tier_text(plan.checkpoints_on), tier_text(s.model_tiers.checkpoints));
  if (plan.recompute_activations) {
    if (!*plan.recompute_activations && v.count("recompute-activations") != 0)
      throw InputError("command line", "--recompute-activations",
                       "the plan file's value false (" + file + ": recompute_activations) or no --recompute-activations");
    s.recompute_activations = *plan.recompute_activations;
  }
  s.recompute_activations = s.recompute_activations || s.model_tiers.checkpoints != platform::Tier::device;
}
}  // namespace

RunSpec read_run_spec(RunVerb verb, const po::variables_map& v) {
  RunSpec s = default_run_spec(verb);
  if (v.count("hw") != 0) s.hw = v["hw"].as<std::string>();
  if (v.count("model") != 0) s.model = v["model"].as<std::string>();
  std::optional<PlanFile> plan;
  if (v.count("placement-file") != 0) {
    s.placement_file = std::filesystem::absolute(v["placement-file"].as<std::string>());
    plan = read_plan_file(*s.placement_file);
    apply_plan_identity(s, v, *plan);
  }
  s.optimizer = optim::parse_optimizer_kind(
      plan && v["optimizer"].defaulted() ? plan->optimizer : v["optimizer"].as<std::string>(), "--optimizer");
  s.hp = optim::default_hyperparameters(s.optimizer);
  if (verb != RunVerb::train) s.hp.precondition_frequency = 10;  // the runtime's setting of interest, unless given
  if (verb == RunVerb::sim) s.hp.max_precond_dim = 2048;
  apply_hyperparameter_options(v, s.hp);
  s.placement = runtime::parse_placement_policy(v["placement"].as<std::string>(), "--placement");
  if (plan) {
    if (!v["placement"].defaulted() && s.placement != runtime::PlacementPolicy::planned)
      throw InputError("command line", "--placement",
                       "planned (or no --placement) with --placement-file, found " +
                           std::string(runtime::to_string(s.placement)));
    s.placement = runtime::PlacementPolicy::planned;
    s.planned_blocks = std::move(plan->blocks);
  }
  s.lookahead = v["lookahead"].as<int>();
  s.staleness = v["staleness"].as<int>();
  s.publish = runtime::parse_publish_policy(v["publish"].as<std::string>(), "--publish");
  s.refresh_on = runtime::parse_refresh_site(v["refresh-on"].as<std::string>(), "--refresh-on");
  if (const std::string how = v["refresh-sharing"].as<std::string>(); how == "owners" || how == "replicated")
    s.share_refreshes = how == "owners";
  else
    throw InputError("command line", "--refresh-sharing", "owners or replicated, found '" + how + "'");
  s.sync_period = v["sync-period"].as<int>();
  s.shard_state = v.count("shard-state") != 0;
  if (v.count("straggler") != 0) {
    const std::string text = v["straggler"].as<std::string>();
    const auto colon = text.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument("no colon");
      std::size_t used = 0;
      s.straggler.rank = std::stoi(text.substr(0, colon), &used);
      if (used != colon) throw std::invalid_argument("rank");
      const std::string factor = text.substr(colon + 1);
      s.straggler.factor = std::stod(factor, &used);
      if (used != factor.size()) throw std::invalid_argument("factor");
    } catch (const std::exception&) {
      throw InputError("command line", "--straggler", "RANK:FACTOR (e.g. 3:2.5), found '" + text + "'");
    }
  }
  s.schedule = plan::parse_schedule_order(v["schedule"].as<std::string>(), "command line", "--schedule");
  s.micro_batches = v["micro-batches"].as<int>();
  s.defer_fraction = v["defer-fraction"].as<double>();
  s.model_tiers.weights = parse_tier(v["weights-on"].as<std::string>(), "--weights-on");
  s.model_tiers.gradients = parse_tier(v["gradients-on"].as<std::string>(), "--gradients-on");
  s.model_tiers.checkpoints = parse_tier(v["checkpoints-on"].as<std::string>(), "--checkpoints-on");
  s.recompute_activations = v.count("recompute-activations") != 0 || s.model_tiers.checkpoints != platform::Tier::device;
  if (plan) apply_plan_schedule(s, v, *plan);
  s.host_workers = v["host-workers"].as<int>();
  s.steps = v["steps"].as<int>();
  if (v.count("warmup-steps") != 0) s.warmup_steps = v["warmup-steps"].as<int>();
  s.seed = parse_seed(v["seed"].as<std::string>(), "--seed");
  s.numerics = platform::parse_numerics(v["numerics"].as<std::string>(), "--numerics");
  s.time = platform::parse_time_source(v["time"].as<std::string>(), "--time");
  if (v.count("out") != 0) s.out = v["out"].as<std::string>();
  s.overwrite = v.count("overwrite") != 0;
  s.trace.enabled = v.count("trace") != 0;
  if (v.count("trace-steps") != 0) s.trace.steps = parse_step_range(v["trace-steps"].as<std::string>(), "--trace-steps");
  if (v.count("trace-units") != 0) s.trace.units = v["trace-units"].as<int>();
  s.trace.max_bytes = parse_size(v["trace-max-bytes"].as<std::string>(), "--trace-max-bytes");
  s.progress = v.count("no-progress") == 0;
  if (verb != RunVerb::sim) {
    s.device_budget = parse_size(v["device-budget"].as<std::string>(), "--device-budget");
    s.host_budget = parse_size(v["host-budget"].as<std::string>(), "--host-budget");
    s.nvme_budget = parse_size(v["nvme-budget"].as<std::string>(), "--nvme-budget");
    if (v.count("nvme-dir") != 0) s.nvme_dir = v["nvme-dir"].as<std::string>();
  }
  return s;
}

void validate(const RunSpec& s) {
  const std::string source = "command line";  // the verb prefixes the message already
  optim::validate(s.hp, source);
  if (s.steps < 1) throw InputError(source, "--steps", "expected an integer >= 1");
  if (s.warmup_steps && *s.warmup_steps < 0) throw InputError(source, "--warmup-steps", "expected an integer >= 0");
  if (s.staleness < 0) throw InputError(source, "--staleness", "expected an integer >= 0");
  if (s.refresh_on == runtime::RefreshSite::device && s.staleness != 0)
    throw InputError(source, "--staleness", "0 with --refresh-on device (the synchronous baseline), found " +
                                                std::to_string(s.staleness));
  if (s.sync_period < 1) throw InputError(source, "--sync-period", "expected an integer >= 1");
  if (s.straggler.rank != -1 && (s.straggler.rank < 0 || !(s.straggler.factor >= 1.0) ||
                                 !std::isfinite(s.straggler.factor) || s.straggler.factor > 1000.0))
    throw InputError(source, "--straggler", "a rank >= 0 and a slowdown factor in [1, 1000]");
  if (s.lookahead < 0) throw InputError(source, "--lookahead", "expected an integer >= 0");
  if (s.micro_batches < 1) throw InputError(source, "--micro-batches", "expected an integer >= 1");
  if (!(s.defer_fraction >= 0.0 && s.defer_fraction < 1.0))
    throw InputError(source, "--defer-fraction", "expected a fraction in [0, 1)");
  if (s.defer_fraction > 0.0 && s.shard_state)
    throw InputError(source, "--defer-fraction",
                     "0 with --shard-state (a deferred update's weights would be gathered during the next forward)");
  if (s.host_workers < 0) throw InputError(source, "--host-workers", "expected an integer >= 0");
  if (s.device_budget == 0) throw InputError(source, "--device-budget", "expected a size > 0");
  if (s.host_budget == 0) throw InputError(source, "--host-budget", "expected a size > 0");
  switch (s.verb) {
    case RunVerb::sim:
      if (s.time != platform::TimeSource::simulated)
        throw InputError(source, "--time", "simulated (the simulator's clock); use asteria synth for a real clock");
      if (s.nvme_dir) throw InputError(source, "--nvme-dir", "no NVMe directory: the simulated NVMe tier is a model");
      break;
    case RunVerb::train:
      if (s.time != platform::TimeSource::measured)
        throw InputError(source, "--time", "measured: train runs a real model (use sim or synth for other time sources)");
      if (s.numerics != platform::Numerics::values)
        throw InputError(source, "--numerics", "values: training needs every number");
      if (s.hw) throw InputError(source, "--hw", "no hardware profile: train measures the machine it runs on");
      break;
    case RunVerb::synth: break;
  }
  platform::validate(s.numerics, s.time, source);
  // Runs that compute on this CPU do so with its proper BLAS kernels (or say why not).
  if (s.numerics != platform::Numerics::shapes) real::require_cpu_blas_kernels(source);
  const bool real_backend = s.verb == RunVerb::train || (s.verb == RunVerb::synth && s.time != platform::TimeSource::simulated);
  if (real_backend && s.placement == runtime::PlacementPolicy::nvme && !s.nvme_dir)
    throw InputError(source, "--placement", "nvme placement on the real backend needs --nvme-dir DIR");
  if (real_backend && !s.nvme_dir)
    for (std::size_t i = 0; i < s.planned_blocks.size(); ++i)
      if (s.planned_blocks[i].home == platform::Tier::nvme)
        throw InputError(source, "--placement-file",
                         "--nvme-dir DIR on the real backend as well: the plan rests blocks on NVMe (blocks[" +
                             std::to_string(i) + "]: '" + s.planned_blocks[i].label + "')");
  if (s.nvme_dir) {
    // The NVMe tier creates its directory, never the path to it: a mistyped parent is an error.
    std::filesystem::path dir = std::filesystem::absolute(*s.nvme_dir).lexically_normal();
    if (!dir.has_filename()) dir = dir.parent_path();  // "a/b/": the directory b
    const std::filesystem::path parent = dir.parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(parent, ec))
      throw InputError(source, "--nvme-dir",
                       "a directory whose parent exists, found '" + s.nvme_dir->string() + "' (" + parent.string() +
                           " is not a directory)");
  }
  if (!real_backend && s.nvme_dir)
    throw InputError(source, "--nvme-dir", "only the real backend writes NVMe files (--time measured or modelled)");
  if (s.placement == runtime::PlacementPolicy::planned && !s.placement_file)
    throw InputError(source, "--placement", "planned only with --placement-file FILE (a plan of asteria plan)");
  if (s.placement_file && s.placement != runtime::PlacementPolicy::planned)
    throw InputError(source, "--placement-file", "placement planned with a plan file, found --placement " +
                                                    std::string(runtime::to_string(s.placement)));
  if (s.trace.steps && !s.trace.enabled) throw InputError(source, "--trace-steps", "--trace as well");
  if (s.trace.units && !s.trace.enabled) throw InputError(source, "--trace-units", "--trace as well");
  if (s.trace.units && *s.trace.units < 1) throw InputError(source, "--trace-units", "an integer >= 1");
  if (s.trace.enabled && !s.out) throw InputError(source, "--trace", "--out DIR as well (the trace files go there)");
  // train's --overwrite also replaces the checkpoints of --checkpoint-dir: its verb checks it.
  if (s.overwrite && !s.out && s.verb != RunVerb::train) throw InputError(source, "--overwrite", "--out DIR as well");
}

}  // namespace asteria::cli
