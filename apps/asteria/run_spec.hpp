#pragma once
// One run spec for the verbs that run the runtime: `synth` (the real backend, or the fake one, on
// a synthetic stack), `sim` (the SimGrid backend on a simulated machine) and `train` (a real
// transformer on a text corpus). They share option names and meanings, one validation path,
// one progress reporter and one set of output files (run_report.hpp): a flag means the same
// thing in every verb that takes it, and a verb rejects a combination it cannot run with a
// message that names the option.
//
// Shared options: --hw --model --optimizer (+ hyperparameters) --placement --placement-file --lookahead
// --staleness --publish --schedule --micro-batches --defer-fraction --weights-on --gradients-on
// --checkpoints-on --recompute-activations --host-workers --steps --warmup-steps --seed --numerics --time --out
// --overwrite --trace --trace-steps --trace-max-bytes --no-progress, and the tier budgets
// --device-budget --host-budget --nvme-budget --nvme-dir where the verb's platform takes them.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/asteria/options.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/plan/schedule.hpp"
#include "core/platform/execution.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/service/service_options.hpp"
#include "core/runtime/store/store_options.hpp"

namespace asteria::cli {

enum class RunVerb { synth, sim, train };
std::string_view to_string(RunVerb verb) noexcept;

struct TraceSettings {
  bool enabled = false;
  std::optional<std::pair<std::int64_t, std::int64_t>> steps;  // --trace-steps FIRST:LAST
  std::optional<int> units;                                     // --trace-units N: units 0..N-1
  std::size_t max_bytes = std::size_t{100} * 1000 * 1000;       // --trace-max-bytes
};

struct RunSpec {
  RunVerb verb = RunVerb::sim;
  std::optional<std::string> hw;      // hardware profile name or path (modelled/simulated time)
  std::optional<std::string> model;   // model config name or path
  optim::OptimizerKind optimizer = optim::OptimizerKind::soap;
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::soap);
  runtime::PlacementPolicy placement = runtime::PlacementPolicy::device;
  // --placement-file FILE (a plan of asteria plan, apps/asteria/plan_file.hpp): placement is then
  // planned, and every block rests and is updated where the file says (one entry per block, in
  // the driver's block order).
  std::optional<std::filesystem::path> placement_file;
  std::vector<runtime::BlockPlacement> planned_blocks;
  int lookahead = 2;
  int staleness = 0;
  // Data-parallel ranks: owners run each block's refreshes and share the results (or every rank
  // runs them all), sent at most every sync_period steps.
  bool share_refreshes = true;
  int sync_period = 1;
  bool shard_state = false;  // optimizer state sharded among data-parallel ranks (ZeRO-1)
  // Straggler injection: this data-parallel rank's host workers (its refreshes) run `factor`
  // times slower. rank -1: none.
  struct Straggler {
    int rank = -1;
    double factor = 1.0;
  } straggler;
  // The step's schedule (core/plan/schedule.hpp): order, micro-batches, the fraction of the
  // update deferred into the next forward, and where the model's own tensors rest.
  plan::ScheduleOrder schedule = plan::ScheduleOrder::horizontal;
  int micro_batches = 1;
  double defer_fraction = 0.0;
  plan::ModelStateTiers model_tiers{};
  bool recompute_activations = false;  // activation checkpointing (implied by checkpoints off the device)
  runtime::PublishPolicy publish = runtime::PublishPolicy::deterministic;
  // Where refreshes run: the host workers (Asteria) or the device stream at S = 0 (the native
  // synchronous optimizer, the baseline).
  runtime::RefreshSite refresh_on = runtime::RefreshSite::host;
  int host_workers = 0;  // refresh workers per unit; 0: the platform's default
  int steps = 30;        // measured steps
  std::optional<int> warmup_steps;  // default: the verb's (sim, synth: until the first refresh is published)
  std::uint64_t seed = 1;
  platform::Numerics numerics = platform::Numerics::shapes;
  platform::TimeSource time = platform::TimeSource::simulated;
  std::optional<std::filesystem::path> out;
  bool overwrite = false;
  TraceSettings trace;
  bool progress = true;
  // Tier budgets of the real and fake backends (the simulator takes them from the profile).
  std::size_t device_budget = std::size_t{1} << 30;
  std::size_t host_budget = std::size_t{4} << 30;
  std::size_t nvme_budget = std::size_t{64} << 30;
  std::optional<std::filesystem::path> nvme_dir;
};

// The verb's defaults (numerics, time, steps, budgets, optimizer) before options are read.
RunSpec default_run_spec(RunVerb verb);

// The shared options of `verb`, with its defaults shown, plus the hyperparameter options.
po::options_description run_spec_options(RunVerb verb);
// Reads the shared options (and hyperparameters) from `values` into a spec; validate() is
// called by the verbs once their own settings are read too.
RunSpec read_run_spec(RunVerb verb, const po::variables_map& values);

// The one validation of a spec: every value in its domain, and the settings valid together
// (numerics with time, time with the verb, placement with an NVMe directory, ...). Throws
// InputError naming the option.
void validate(const RunSpec& spec);

// The warm-up: --warmup-steps if given, otherwise until the first refresh is published (at least
// `at_least` steps), so that measured steps are steady state. A derived warm-up longer than both
// 1000 steps and 10 x --steps is an InputError naming --staleness (a huge S would otherwise run
// for ages before the first measured step).
int warmup_steps_of(const RunSpec& spec, int at_least = 0);

// The step driver's options the spec implies (numerics, placement, staleness, publication, the
// failure policies of its hyperparameters) with `warmup_steps` and the device time model.
runtime::DriverOptions driver_options(const RunSpec& spec, int warmup_steps, runtime::DeviceSeconds device_seconds);

// "FIRST:LAST" (1-based steps, FIRST <= LAST); InputError naming `option` otherwise.
std::pair<std::int64_t, std::int64_t> parse_step_range(const std::string& text, const std::string& option);

}  // namespace asteria::cli
