#pragma once
// The plan file `asteria plan --out FILE` writes and `--placement-file FILE` (sim, synth, train)
// reads: where each optimizer block's state rests and where its update runs, with the run
// settings the plan was made for and what it predicted. YAML, versioned:
//
//   format: asteria-plan 1
//   hw: a100-80gb            # informational: the profile the prediction used
//   model: gpt-mini          # the run's --model and --optimizer must match (or are taken from here)
//   optimizer: soap
//   batch: 8                 # informational: sequences per step of the prediction
//   schedule: horizontal     # the planned settings (the schedule and the blocks' shapes, run_schema.hpp)
//   micro_batches: 1         #   are applied to the run (unless given on its command line with
//   defer_fraction: 0        #   another value: an error)
//   weights_on: device
//   gradients_on: device
//   checkpoints_on: device
//   recompute_activations: false
//   max_precond_dim: 2048
//   host_workers: 7          # informational: the workers the prediction assumed
//   method: optimal          # informational: optimal | all-device | all-host | interleaved:K
//   predicted: {update_s: 0.0123, step_s: 0.0456, binding: device_compute}   # informational
//   blocks:                  # one per optimizer block, in the run's block order
//     - {label: "layer0.attn.q block 0 (rows 0:64, cols 0:64)", tier: host, update: host}
//
// Required: format, model, optimizer, blocks; every other key is optional (absent: not applied,
// not known). Unknown and repeated keys are refused. A block's tier is device, host or nvme; its
// update device or host, and a block resting on the device is updated there.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/schedule.hpp"
#include "core/runtime/store/block_placement.hpp"

namespace asteria::cli {

inline constexpr const char* kPlanFormat = "asteria-plan 1";

struct PlanPredicted {
  double update_s = 0.0;  // the blocks' update phase alone (the solver's objective without the step's other loads)
  double step_s = 0.0;    // the whole step: the busiest resource with the step's fixed loads
  std::string binding;    // that resource ("device_compute", "link_h2d", ...)
};

struct PlanFile {
  std::optional<std::string> hw;
  std::string model;
  std::string optimizer;
  std::optional<int> batch;
  // The planned settings (run_schema.hpp: Setting::planned): the schedule and the blocks' shapes,
  // by the setting's name ("micro-batches") with its value as the setting's codec writes it. In the
  // file, a top-level key each, with '_' for '-' (micro_batches: 4).
  std::vector<std::pair<std::string, std::string>> settings;
  std::optional<int> host_workers;
  std::optional<std::string> method;
  std::optional<PlanPredicted> predicted;
  std::vector<runtime::BlockPlacement> blocks;
};

// Reads and checks a plan file. Throws InputError(file, field, expectation) for a file that
// cannot be read, malformed YAML, a missing, unknown, repeated or out-of-domain field.
PlanFile read_plan_file(const std::filesystem::path& file);
// The same for a plan file's text; `source` names it in errors.
PlanFile parse_plan_file(const std::string& text, const std::string& source);

// The file's text (YAML, every present field; numbers in their shortest exact form).
std::string plan_file_text(const PlanFile& plan);
// Writes plan_file_text atomically (io::write_file_atomically); InputError naming the file.
void write_plan_file(const std::filesystem::path& file, const PlanFile& plan);

}  // namespace asteria::cli
