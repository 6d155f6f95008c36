#include "apps/asteria/sim_training.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <ostream>
#include <thread>

#include "apps/asteria/corpus_training.hpp"
#include "apps/asteria/memory_check.hpp"
#include "apps/asteria/train_ranks.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"

namespace asteria::cli {

namespace {

// The settings a training simulation needs, checked before the corpus is read.
data::Corpus checked_corpus(const RunConfig& spec, const workload::ModelConfig& config, int units,
                            std::ostream* warnings) {
  if (config.vocab != data::kByteVocabulary)
    throw InputError(*spec.model, "vocab",
                     "expected " + std::to_string(data::kByteVocabulary) +
                         " (byte-level tokens) to train on a corpus (--gradients corpus), found " +
                         std::to_string(config.vocab));
  validate_corpus_settings(spec);
  // Every unit's replica trains in this process: its weights, gradients, activations and state.
  check_train_memory(config, /*activations_on_host=*/true, TrainOptimizer{spec.optimizer, spec.hp},
                     share_of_node(machine_memory(), units));
  return read_corpus(spec, warnings);
}

}  // namespace

struct SimTraining::Unit {
  std::unique_ptr<TrainModel> model;
  data::BatchLoader loader;  // the global batch's; the unit takes its slice
  std::vector<data::TokenId> tokens;
};

SimTraining::SimTraining(const RunConfig& spec, const workload::ModelConfig& config, int units, int total_steps,
                         std::ostream* warnings)
    : spec_(spec),
      units_(units),
      total_steps_(total_steps),
      rank_batch_(static_cast<int>(config.micro_batch)),
      global_batch_(global_batch(rank_batch_, units)),
      sequence_length_(static_cast<int>(config.sequence_length)),
      micro_batched_(micro_batched_passes(spec)),
      corpus_(checked_corpus(spec, config, units, warnings)),
      validation_loader_(corpus_.validation(), global_batch_, sequence_length_, spec.seed),
      losses_(static_cast<std::size_t>(total_steps), std::vector<double>(static_cast<std::size_t>(units), 0.0)),
      validation_(static_cast<std::size_t>(total_steps), std::numeric_limits<double>::quiet_NaN()) {
  // The models' GEMMs (and the data-true optimizer math beside them) on --blas-threads threads.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  openblas_set_num_threads(spec.train.blas_threads > 0 ? spec.train.blas_threads : cores);
  for (int u = 0; u < units; ++u) {
    // The same seed on every unit: replicas start from the same weights.
    units_state_.push_back(std::make_unique<Unit>(Unit{make_train_model("cpu", config, spec.seed),
                                                       data::BatchLoader(corpus_.train(), global_batch_,
                                                                         sequence_length_, spec.seed),
                                                       {}}));
  }
}

SimTraining::~SimTraining() = default;

runtime::TrainingModel<float>& SimTraining::model(int unit) {
  return units_state_.at(static_cast<std::size_t>(unit))->model->driver_model();
}

void SimTraining::before_step(int unit, int t) {
  (void)t;  // the loader draws the run's batches in step order
  Unit& u = *units_state_.at(static_cast<std::size_t>(unit));
  u.loader.next(u.tokens);
  const RankPlace place{unit, units_, nullptr};
  const std::size_t per_sequence = static_cast<std::size_t>(sequence_length_) + 1;
  u.model->set_batch(rank_slice<data::TokenId>(u.tokens, global_batch_, per_sequence, place), rank_batch_,
                     micro_batched_);
}

std::string SimTraining::after_step(int unit, int t, runtime::StepDriver<float>& driver) {
  Unit& u = *units_state_.at(static_cast<std::size_t>(unit));
  const double loss = u.model->last_loss();
  if (!std::isfinite(loss))
    throw NumericalError("asteria sim: the training loss of unit " + std::to_string(unit) + " is " +
                         exact_number(loss) + " at step " + std::to_string(t) + " (try a smaller --lr)");
  const std::size_t row = static_cast<std::size_t>(t - 1);
  losses_.at(row).at(static_cast<std::size_t>(unit)) = loss;
  const int every = spec_.train.eval_every;
  const bool evaluates = t == total_steps_ || (every > 0 && t % every == 0);
  if (!evaluates) return {};
  driver.gather_weights();  // fsdp: every unit's part of the collective
  if (unit != 0) return {};
  // Validation takes no simulated time: it is not part of the training step being simulated.
  validation_.at(row) = validation_loss(*u.model, validation_loader_, spec_.train.eval_sequences);
  return "loss " + significant(loss, 4) + ", validation " + significant(validation_.at(row), 4);
}

void SimTraining::report(RunReport& out) const {
  out.extra_columns = {"loss", "validation_loss", "tokens_per_s"};
  out.extra_cells.clear();
  const double step_tokens = static_cast<double>(global_batch_) * sequence_length_;
  double first_loss = std::numeric_limits<double>::quiet_NaN(), final_loss = first_loss, final_validation = first_loss;
  for (std::size_t i = 0; i < losses_.size(); ++i) {
    // The global batch's loss: each unit's slice is an equal share of it.
    const double loss = std::accumulate(losses_[i].begin(), losses_[i].end(), 0.0) / units_;
    if (i == 0) first_loss = loss;
    final_loss = loss;
    const double step_s = i < out.records.size() ? out.records[i].step_time_s : 0.0;
    const bool validated = !std::isnan(validation_[i]);
    if (validated) final_validation = validation_[i];
    out.extra_cells.push_back({exact_number(loss), validated ? exact_number(validation_[i]) : "",
                               exact_number(step_s > 0.0 ? step_tokens / step_s : 0.0)});
  }
  out.extra.emplace_back("gradients", "corpus");
  out.extra.emplace_back("corpus", corpus_.description());
  out.extra.emplace_back("train_bytes", corpus_.train().size());
  out.extra.emplace_back("validation_bytes", corpus_.validation().size());
  out.extra.emplace_back("batch", global_batch_);
  out.extra.emplace_back("rank_batch", rank_batch_);
  out.extra.emplace_back("sequence_length", sequence_length_);
  out.extra.emplace_back("first_loss", first_loss);
  out.extra.emplace_back("final_loss", final_loss);
  out.extra.emplace_back("final_validation_loss", final_validation);
  // The training loss's drop over the measured steps per kJ they drew (the seed paper's loss
  // reduction per unit of energy); null without power in the profile.
  const auto first_measured = static_cast<std::size_t>(std::max<std::int64_t>(0, out.warmup_steps));
  nlohmann::ordered_json per_kj;
  if (out.energy && out.energy->total_j() > 0.0 && first_measured < losses_.size()) {
    const auto mean = [&](std::size_t i) {
      return std::accumulate(losses_[i].begin(), losses_[i].end(), 0.0) / units_;
    };
    per_kj = (mean(first_measured) - mean(losses_.size() - 1)) / (out.energy->total_j() / 1e3);
  }
  out.extra.emplace_back("loss_reduction_per_kj", per_kj);
}

}  // namespace asteria::cli
