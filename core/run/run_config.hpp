#pragma once
// One run configuration for the verbs that run the runtime: `synth` (the real backend, or the
// fake one, on a synthetic stack), `sim` (the SimGrid backend on a simulated machine) and `train`
// (a real transformer on a text corpus). Its fields are described once, in run_schema.hpp: the
// command-line options and their help, their reading and checks, the arguments a trace records
// for its replay and the rules of resumed and data-parallel runs all follow from that list.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/plan/schedule.hpp"
#include "core/platform/execution.hpp"
#include "core/runtime/service/service_options.hpp"
#include "core/runtime/store/block_placement.hpp"
#include "core/runtime/store/store_options.hpp"

namespace asteria::run {

enum class RunVerb { synth, sim, train };
std::string_view to_string(RunVerb verb) noexcept;

struct TraceSettings {
  bool enabled = false;
  std::optional<std::pair<std::int64_t, std::int64_t>> steps;  // --trace-steps FIRST:LAST
  std::optional<int> units;                                     // --trace-units N: units 0..N-1
  std::size_t max_bytes = std::size_t{100} * 1000 * 1000;       // --trace-max-bytes
};

// Straggler injection: this data-parallel rank's host workers (its refreshes) run `factor`
// times slower. rank -1: none.
struct Straggler {
  int rank = -1;
  double factor = 1.0;
  bool operator==(const Straggler&) const = default;
};

// train's own settings: the corpus, the model's device and batch, evaluation and checkpoints.
struct TrainConfig {
  std::optional<std::filesystem::path> data;  // a directory of text files; default: the built-in corpus
  double validation_fraction = 0.05;
  std::size_t max_corpus_bytes = 0;  // 0: all of it
  std::string device = "cpu";        // cpu | cuda
  int eval_every = 50;               // validation loss every N steps (and after the last); 0: only at the end
  int eval_sequences = 64;           // validation windows per evaluation (in order from the start)
  int blas_threads = 0;              // OpenBLAS threads of the model's GEMMs; 0: all cores
  // Checkpoints of the whole training state after every checkpoint_every-th step (0: none) into
  // checkpoint_dir (each rank's in rank<r>/ of it when data-parallel).
  int checkpoint_every = 0;
  std::optional<std::filesystem::path> checkpoint_dir;
  std::optional<std::filesystem::path> resume;  // --resume DIR: the run whose checkpoints are there
};

// sim's simulated machine: GPUs and whole nodes (units fill nodes of the profile in order; either
// or both, agreeing; neither: one unit), and the simulator's shortcuts (sim/simulation_options.hpp).
// Where a simulated step's gradients come from: the workload's synthetic ones, or the model's
// own forward and backward on the corpus (data-true: the run has a loss).
enum class SimGradients { synthetic, corpus };

struct SimConfig {
  SimGradients gradients = SimGradients::synthetic;
  std::optional<int> units;
  std::optional<int> nodes;
  // Representative ranks: only the first simulated_nodes nodes run, the other units mirror them.
  std::optional<int> simulated_nodes;
  bool coalesce_ring_steps = false;  // each collective's ring steps as one transfer (approximate)
  bool serial_collectives = true;    // each group's collectives one at a time, in call order (as NCCL)
  std::string collective_algorithm = "auto";  // auto | ring | tree | hierarchical
  bool predicted_collectives = true;  // a collective alone on its links takes its exact predicted time
};

// synth's stack without --model: one weight matrix per layer, either --shape's list or --layers
// matrices of --rows x --cols, with costs from --layer-flops or --step-seconds; the roofline device
// that paces device work without --hw; the fake backend's host speed; the gradients' structure.
struct SynthConfig {
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;  // --shape
  std::optional<int> layers;                 // default 8
  std::optional<std::int64_t> rows, cols;    // default 512 each
  std::optional<double> layer_flops;         // forward + backward flops of one layer per step
  std::optional<double> step_seconds;        // modelled forward + backward seconds of a step (default 0.1)
  double device_tflops = 67.0;               // H100 FP32
  double device_bandwidth_tbps = 3.35;
  double launch_latency_us = 5.0;
  double fake_host_gflops = 20.0;            // --time simulated: one host worker's refresh speed
  int gradient_rank = 8;
  double gradient_noise = 0.1;
};

struct RunConfig {
  RunVerb verb = RunVerb::sim;
  std::optional<std::string> hw;      // hardware profile name or path (modelled/simulated time)
  std::optional<std::string> model;   // model config name or path
  optim::OptimizerKind optimizer = optim::OptimizerKind::soap;
  // The defaults the hyperparameters start from (options given replace them).
  optim::HyperparameterPreset preset = optim::HyperparameterPreset::asteria;
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::soap);
  runtime::PlacementPolicy placement = runtime::PlacementPolicy::device;
  // --placement-file FILE (a plan of asteria plan): placement is then planned, and every block
  // rests and is updated where the file says (one entry per block, in the driver's block order).
  std::optional<std::filesystem::path> placement_file;
  std::vector<runtime::BlockPlacement> planned_blocks;
  std::optional<std::string> planned_for_hw;  // the machine the plan file was made for, if it says
  int lookahead = 2;
  int staleness = 0;
  // Data-parallel ranks: owners run each block's refreshes and share the results (or every rank
  // runs them all), sent at most every sync_period steps.
  bool share_refreshes = true;
  int sync_period = 1;
  // How data-parallel ranks share the optimizer state, gradients and weights (plan::Parallelism).
  plan::Parallelism parallelism = plan::Parallelism::ddp;
  platform::DType reduce_dtype = platform::DType::fp32;  // gradients on the wire (plan::StepPlan::reduce_dtype)
  // Data-parallel ranks: gradients are reduced in buckets of at least this many bytes (layers in
  // the order their gradients complete; DDP's bucket_cap_mb); 0: one reduce per layer.
  std::size_t bucket_bytes = std::size_t{25} << 20;
  Straggler straggler;
  // The step's schedule (core/plan/schedule.hpp): order, micro-batches, the fraction of the
  // update deferred into the next forward, and where the model's own tensors rest.
  plan::ScheduleOrder schedule = plan::ScheduleOrder::horizontal;
  int micro_batches = 1;
  double defer_fraction = 0.0;
  int prefetch_depth = 2;  // layer visits ahead that weights are fetched (or gathered: fsdp)
  bool reshard_after_use = true;  // fsdp: --reshard after-use | after-step
  plan::ModelStateTiers model_tiers{};
  bool recompute_activations = false;  // activation checkpointing (implied by checkpoints off the device)
  runtime::PublishPolicy publish = runtime::PublishPolicy::deterministic;
  // Where refreshes run: the host workers (Asteria) or the device stream at S = 0 (the native
  // synchronous optimizer, the baseline).
  runtime::RefreshSite refresh_on = runtime::RefreshSite::host;
  int host_workers = 0;  // refresh workers per unit; 0: the platform's default
  // Sequences per step on each unit (GPU, data-parallel rank), split over the micro-batches; 0:
  // the model config's micro_batch. The step's global batch is batch x units.
  int batch = 0;
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
  TrainConfig train;  // train only
  SimConfig sim;      // sim only
  SynthConfig synth;  // synth only
};

// The verb's defaults (numerics, time, steps, budgets, optimizer) before options are read.
RunConfig default_run_config(RunVerb verb);

// The optimizer's hyperparameters as `verb` runs them unless options say otherwise: the
// optimizer's defaults, with refreshes every 10 steps outside train (the runtime's setting of
// interest) and blocks up to 2048 in sim; a preset other than asteria gives its reference's
// values unchanged (InputError naming --preset when it is not the optimizer's).
optim::Hyperparameters verb_hyperparameters(RunVerb verb, optim::OptimizerKind optimizer,
                                            optim::HyperparameterPreset preset = optim::HyperparameterPreset::asteria);

}  // namespace asteria::run
