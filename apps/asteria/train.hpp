#pragma once
// `asteria train`: a GPT-style language model (core/model) trained on a text corpus (core/data)
// through the runtime (tiered state store, preconditioner service, step plans) on the real
// backend, with any optimizer, under the shared run spec (measured time, values).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/asteria/run_report.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "apps/asteria/train_ranks.hpp"
#include "core/checkpoint/checkpoint_reader.hpp"
#include "core/io/file_system.hpp"
#include "core/platform/comm.hpp"

namespace asteria::cli {

struct TrainSettings {
  RunConfig spec = default_run_config(RunVerb::train);  // its train part: corpus, device, batch, checkpoints
  // --resume: the checkpoint this run continues from (this rank's), opened and verified.
  std::shared_ptr<const checkpoint::CheckpointReader> resume_from;
  std::string saved_arguments;  // the command line a checkpoint records (JSON array)
  // A resumed run continuing in its own --out: the steps.csv written there before (empty: none);
  // its rows up to the restored step are kept ahead of the new ones.
  std::string earlier_steps_csv;
  io::FileSystem* checkpoint_files = nullptr;  // the calls checkpoints make (null: the system's)
};

struct TrainOutcome {
  RunReport report;  // steps.csv gets loss, validation_loss, tokens_per_s; summary.json the train keys
  double final_validation_loss = 0.0;
  // Final parameters, in tensor order (the checkpoint).
  std::vector<std::string> tensor_names;
  std::vector<std::vector<std::int64_t>> tensor_shapes;
  std::vector<std::vector<float>> tensors;
  // Data-parallel runs: this process's rank and every rank's figures (one entry: a plain run).
  RankPlace place;
  std::vector<RankFigures> ranks;
};

// Throws InputError naming the option for settings out of their domain or unusable inputs
// (a corpus that cannot be read, a model the CPU transformer does not implement). --out must have
// been prepared (the trace goes there).
// With a communicator of several ranks (mpirun), every rank calls it: each trains on its slice of
// the global batch (--batch sequences each), gradients are averaged over the ranks in every step's
// plan (reduce ops), and the reported loss is the global batch's. Only rank 0 prints progress.
// `side_comm`: the same ranks over a second communicator for refresh results (null: comm).
// `step_comm`: the same ranks for the step's collectives (the gradients' reduces) when those
// take device memory (NCCL over the ranks' GPUs, with --device cuda; null: comm). Host-side
// exchanges (figures, barriers) stay on comm.
TrainOutcome run_train(const TrainSettings& settings, std::ostream& progress, platform::Comm* comm = nullptr,
                       platform::Comm* side_comm = nullptr, platform::Comm* step_comm = nullptr);

// The report's lines, then the loss.
void print_train(const TrainOutcome& outcome, std::ostream& out);
// steps.csv, summary.json and checkpoint/<tensor>.npy (+ checkpoint/manifest.json). A
// data-parallel run: each rank's steps.csv, summary.json and plan.txt in rank<r>/, and from rank 0
// the aggregate summary.json (aggregate_summary) and the checkpoint.
void write_train(const TrainOutcome& outcome, const std::filesystem::path& dir);

}  // namespace asteria::cli
