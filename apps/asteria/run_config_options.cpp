#include "apps/asteria/run_config_options.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <map>
#include <ostream>
#include <stdexcept>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/setting_options.hpp"
#include "core/run/run_schema.hpp"
#include "core/run/settings_list.hpp"
#include "core/runtime/driver/warmup.hpp"
#include "apps/asteria/plan_file.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/real/blas_kernel_choice.hpp"

namespace asteria::cli {

po::options_description run_config_options(std::optional<RunVerb> verb) {
  RunConfig defaults = default_run_config(verb.value_or(RunVerb::sim));
  po::options_description o;
  po::options_description shared("Run options (synth, sim, train)");
  // Each verb's own settings apart, so --help shows what is particular to it.
  po::options_description own(verb ? std::string(to_string(*verb)) + "'s own options" : std::string("Verbs' own options"));
  const auto count = [](run::Verbs verbs) { return std::popcount(static_cast<unsigned>(verbs)); };
  OptionsBuilder shared_options(shared, verb, /*show_defaults=*/true,
                                [&](const run::Setting& s) { return count(s.verbs) > 1; });
  OptionsBuilder own_options(own, verb, /*show_defaults=*/true,
                             [&](const run::Setting& s) { return count(s.verbs) == 1; });
  run::describe_run(shared_options, defaults);
  run::describe_run(own_options, defaults);
  o.add(shared);
  if (!own.options().empty()) o.add(own);
  o.add(hyperparameter_options());
  return o;
}

void warn_if_planned_elsewhere(const RunConfig& spec, std::string_view verb, std::ostream& err) {
  if (!spec.planned_for_hw || !spec.hw || *spec.hw == *spec.planned_for_hw) return;
  err << "asteria " << verb << ": warning: the plan file " << spec.placement_file->string() << " was made for "
      << *spec.planned_for_hw << "; running it on " << *spec.hw
      << " (a what-if: its placement was chosen for the other machine)\n";
}

namespace {
// A plan file's planned settings apply to the run unless the command line gives the option with
// another value: a plan predicted for one schedule says nothing about another, and its blocks are
// those of its block shapes.
class PlanSettings {
 public:
  PlanSettings(const PlanFile& plan, const po::variables_map& given, std::string file)
      : given_(given), file_(std::move(file)) {
    for (const auto& [name, value] : plan.settings) planned_.emplace(name, value);
  }

  template <class T>
  void value(const run::Setting& s, T& value, const run::Codec<T>& codec) {
    const std::string name(s.name);
    const auto planned = planned_.find(name);
    if (planned == planned_.end()) return;
    const T wanted = codec.parse(planned->second, "--" + name);
    if (given(name) && !(value == wanted)) refuse(name, planned->second, codec.format(value).value_or(""));
    value = wanted;
  }

  void flag(const run::Setting& s, bool& value, bool when_given) {
    const std::string name(s.name);
    const auto planned = planned_.find(name);
    if (planned == planned_.end()) return;
    const bool set = planned->second == "true";
    if (given(name) && !set) refuse(name, planned->second, "--" + name);
    value = set ? when_given : !when_given;
  }

 private:
  bool given(const std::string& name) const { return given_.count(name) != 0 && !given_[name].defaulted(); }
  [[noreturn]] void refuse(const std::string& name, const std::string& planned, const std::string& found) const {
    std::string key = name;
    std::replace(key.begin(), key.end(), '-', '_');
    throw InputError("command line", "--" + name,
                     "the plan file's value " + planned + " (" + file_ + ": " + key + ") or no --" + name +
                         ", found " + found);
  }

  const po::variables_map& given_;
  std::string file_;
  std::map<std::string, std::string> planned_;
};

// Model, hardware and optimizer of the plan: taken when not given; a model or optimizer other
// than the plan's is refused (its blocks would not be the run's). --hw may differ (a what-if on
// another machine); sim takes the plan's when none is given.
void apply_plan_identity(RunConfig& s, const po::variables_map& v, const PlanFile& plan) {
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

}  // namespace

RunConfig read_run_config(RunVerb verb, const po::variables_map& v, bool every_verbs_settings) {
  RunConfig s = default_run_config(verb);
  OptionsReader reader(v, every_verbs_settings ? std::nullopt : std::optional<RunVerb>(verb));
  run::describe_run(reader, s);
  std::optional<PlanFile> plan;
  if (s.placement_file) {
    s.placement_file = std::filesystem::absolute(*s.placement_file);
    plan = read_plan_file(*s.placement_file);
    apply_plan_identity(s, v, *plan);
    if (v["optimizer"].defaulted()) s.optimizer = optim::parse_optimizer_kind(plan->optimizer, "--optimizer");
  }
  // The hyperparameters follow the optimizer: its defaults as this verb runs them, then those given.
  s.hp = run::verb_hyperparameters(verb, s.optimizer, s.preset);
  run::describe(reader, s.hp);
  if (plan) {
    if (!v["placement"].defaulted() && s.placement != runtime::PlacementPolicy::planned)
      throw InputError("command line", "--placement",
                       "planned (or no --placement) with --placement-file, found " +
                           std::string(runtime::to_string(s.placement)));
    s.placement = runtime::PlacementPolicy::planned;
    s.planned_blocks = std::move(plan->blocks);
    s.planned_for_hw = plan->hw;
  }
  if (plan) {
    PlanSettings planned(*plan, v, s.placement_file->string());
    run::describe_run(planned, s);
    run::describe(planned, s.hp);
  }
  s.recompute_activations = s.recompute_activations || s.model_tiers.checkpoints != platform::Tier::device;
  return s;
}

void validate(const RunConfig& s) {
  const std::string source = "command line";  // the verb prefixes the message already
  run::check_ranges(s);
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
  if (s.defer_fraction > 0.0 && plan::shards_state(s.parallelism))
    throw InputError(source, "--defer-fraction",
                     "0 with --parallelism " + std::string(plan::to_string(s.parallelism)) +
                         " (a deferred update's weights would be gathered during the next forward)");
  if (s.parallelism == plan::Parallelism::fsdp && s.model_tiers.weights != platform::Tier::device)
    throw InputError(source, "--weights-on",
                     "device with --parallelism fsdp (a layer's weights are gathered from their owners into device "
                     "memory; shards resting off the device are not modelled)");
  if (!s.reshard_after_use && s.parallelism != plan::Parallelism::fsdp)
    throw InputError(source, "--reshard",
                     "after-use unless --parallelism fsdp (only fsdp shards the weights after-step keeps), found "
                     "after-step with --parallelism " + std::string(plan::to_string(s.parallelism)));
  if (s.host_workers < 0) throw InputError(source, "--host-workers", "expected an integer >= 0");
  if (s.device_budget == 0) throw InputError(source, "--device-budget", "expected a size > 0");
  if (s.host_budget == 0) throw InputError(source, "--host-budget", "expected a size > 0");
  switch (s.verb) {
    case RunVerb::sim:
      if (s.time != platform::TimeSource::simulated)
        throw InputError(source, "--time", "simulated (the simulator's clock); use asteria synth for a real clock");
      if (s.nvme_dir) throw InputError(source, "--nvme-dir", "no NVMe directory: the simulated NVMe tier is a model");
      if (s.sim.gradients == run::SimGradients::corpus && s.numerics != platform::Numerics::values)
        throw InputError(source, "--gradients",
                         "corpus trains the model, so it needs --numerics values (data-true), found another numerics");
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
