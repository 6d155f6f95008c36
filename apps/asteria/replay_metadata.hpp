#pragma once
// What a trace says of the run that recorded it, so that a replay can rebuild the run: its options
// in command-line form (optimizer, hyperparameters, placement, staleness, workers, steps, budgets),
// the model's layers with their declared device costs, and what the model keeps on the device.
// Written as "# key=value" metadata lines (traces/README.md lists the keys).
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/plan/step_plan.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "core/runtime/driver/training_model.hpp"
#include "traces/native_trace.hpp"

namespace asteria::cli {

// Who recorded a trace: the verb, the model's name (empty: --model as given), the data-parallel
// ranks a replay simulates, and keys of the verb's own (sim: hw; train: device, blas_threads).
struct TraceOrigin {
  std::string verb;
  std::string model;
  int units = 1;
  std::map<std::string, std::string> more;
};

// `host_workers` and `warmup_steps` as the run resolved them. `state_budgets`: the spec's tier
// budgets bounded the optimizer state (real and fake backends); false when a profile did (sim).
// `model_pass`: how the model computed a step (where a replay charges the step's compute).
std::map<std::string, std::string> replay_metadata(const RunConfig& spec, const TraceOrigin& origin,
                                                   std::span<const runtime::LayerSpec> layers,
                                                   int host_workers, int warmup_steps, std::size_t model_device_bytes,
                                                   bool state_budgets,
                                                   runtime::ModelPass model_pass);

// The run's recorded settings as command-line arguments ("--optimizer", "soap", "--lr", "0.003",
// ...; core/run/run_arguments.hpp), with the workers and warm-up the run resolved.
std::vector<std::string> run_arguments(const RunConfig& spec, int host_workers, int warmup_steps);

struct RecordedRun {
  std::string verb;                      // "train", "synth", "sim"
  std::string model;                     // the model's name
  std::vector<std::string> arguments;    // run_arguments() of the recorded run
  int units = 1;                         // data-parallel ranks of the recorded run (metadata units)
  std::vector<runtime::LayerSpec> layers;
  std::size_t model_device_bytes = 0;
  bool state_budgets = false;
  plan::NumericsSite numerics_site = plan::NumericsSite::own_launch;  // where it computed host-placed ops
  runtime::ModelPass model_pass = runtime::ModelPass::layer_by_layer;  // where its model spent compute
};

// Reads the keys replay_metadata() wrote; InputError naming `source` and the key when one is
// missing or does not parse (a trace recorded before these keys existed cannot be replayed), and
// naming the record when a record's layer is not one of the listed layers or a forward or backward
// record's label names another layer than the listed one (records of another model).
RecordedRun recorded_run(const traces::NativeTrace& trace, const std::string& source);

}  // namespace asteria::cli
