#pragma once
// What a run that trains a byte-level model on a corpus needs, whichever verb runs it (train on
// the real machine, sim data-true with --gradients corpus): the corpus the settings name and the
// validation loss of the model's current weights.
#include <iosfwd>

#include "apps/asteria/run_config_options.hpp"
#include "apps/asteria/train_models.hpp"
#include "core/data/batch_loader.hpp"
#include "core/data/corpus.hpp"

namespace asteria::cli {

// The corpus and evaluation settings (--eval-every, --eval-sequences, --validation-fraction):
// InputError naming the option otherwise.
void validate_corpus_settings(const RunConfig& spec);

// How the model computes a step's passes: 0, the whole batch at the step's first backward; k >= 1,
// one pass per (layer, micro-batch) where the schedule puts it (micro-batches, or the vertical
// schedule).
int micro_batched_passes(const RunConfig& spec);

// --data, or the built-in corpus (this machine's Python sources), split by --validation-fraction
// with the run's seed. `warnings` (may be null) hears of the files skipped.
data::Corpus read_corpus(const RunConfig& spec, std::ostream* warnings);

// Mean loss of the model over the first `max_sequences` validation windows, in order.
// InputError when the validation text holds no window.
double validation_loss(TrainModel& model, data::BatchLoader& loader, int max_sequences);

}  // namespace asteria::cli
