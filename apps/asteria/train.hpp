#pragma once
// `asteria train`: a GPT-style language model (core/model) trained on a text corpus (core/data)
// through the runtime (tiered state store, preconditioner service, step driver) on the real
// backend, with any optimizer.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/driver/run_summary.hpp"
#include "core/runtime/store/store_options.hpp"
#include "traces/timeline.hpp"

namespace asteria::cli {

struct TrainSettings {
  std::string model = "gpt-mini";  // model config name (experiments/models) or path
  std::optional<std::filesystem::path> data;  // a directory of text files; default: the built-in corpus
  double validation_fraction = 0.05;
  std::size_t max_corpus_bytes = 0;  // 0: all of it
  optim::OptimizerKind optimizer = optim::OptimizerKind::soap;
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::soap);
  runtime::PlacementPolicy placement = runtime::PlacementPolicy::device;
  int lookahead = 2;
  int staleness = 0;
  std::string device = "cpu";  // cpu | cuda
  std::size_t device_budget = std::size_t{8} << 30;
  std::size_t host_budget = std::size_t{16} << 30;
  std::size_t nvme_budget = std::size_t{64} << 30;
  std::optional<std::filesystem::path> nvme_dir;
  int steps = 200;
  int eval_every = 50;       // validation loss every N steps (and after the last); 0: only at the end
  int eval_sequences = 64;   // validation windows per evaluation (in order from the start)
  int batch = 0;             // sequences per step; 0: the config's micro_batch
  std::uint64_t seed = 1;    // weights and batch order
  int host_workers = 1;      // refresh workers
  int blas_threads = 0;      // OpenBLAS threads of the model's GEMMs; 0: all cores
  bool progress = true;
  // Record what the device stream, the host workers and the copy engines ran, and when
  // (TrainOutcome::timeline, trace.json). Off by default: a long run makes a big trace.
  bool trace = false;
};

// One measured step of training.
struct TrainStep {
  runtime::StepRecord record;
  double loss = 0.0;
  std::optional<double> validation_loss;
  double model_s = 0.0;   // wall time of the forward and backward
  double tokens = 0.0;
};

struct TrainOutcome {
  TrainSettings settings;
  std::string model_name;
  std::string corpus;  // Corpus::description()
  std::string device;  // where the model ran
  std::size_t train_bytes = 0;
  std::size_t validation_bytes = 0;
  std::size_t parameters = 0;
  std::size_t blocks = 0;
  std::size_t state_bytes = 0;
  double step_flops = 0.0;  // model FLOPs of one step (Gpt::step_flops)
  std::vector<TrainStep> steps;
  runtime::RunSummary summary;
  double wall_seconds = 0.0;
  double final_validation_loss = 0.0;
  std::int64_t refresh_failures = 0;
  // With settings.trace: the run's work (work_log_timeline.hpp) and a "steps" track with one
  // slice per step and per validation, in seconds since the platform started.
  std::optional<traces::Timeline> timeline;
  std::size_t trace_dropped_records = 0;  // work the log had no room for (not in the timeline)
  // Final parameters, in tensor order (for the checkpoint).
  std::vector<std::string> tensor_names;
  std::vector<std::vector<std::int64_t>> tensor_shapes;
  std::vector<std::vector<float>> tensors;
};

// Throws InputError naming the option for settings out of their domain or unusable inputs
// (a corpus that cannot be read, a model the CPU transformer does not implement).
TrainOutcome run_train(const TrainSettings& settings, std::ostream& progress);

void print_train(const TrainOutcome& outcome, std::ostream& out);
// steps.csv, summary.json, checkpoint/<tensor>.npy (+ checkpoint/manifest.json), and trace.json
// (Chrome trace, open in Perfetto) when the outcome has a timeline.
void write_train(const TrainOutcome& outcome, const std::filesystem::path& dir);

}  // namespace asteria::cli
