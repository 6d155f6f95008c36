#include "apps/asteria/corpus_training.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/common/error.hpp"

namespace asteria::cli {

void validate_corpus_settings(const RunConfig& spec) {
  const std::string source = "command line";
  if (spec.train.eval_every < 0) throw InputError(source, "--eval-every", "expected an integer >= 0");
  if (spec.train.eval_sequences < 1) throw InputError(source, "--eval-sequences", "expected an integer >= 1");
  if (!(spec.train.validation_fraction > 0.0 && spec.train.validation_fraction < 1.0))
    throw InputError(source, "--validation-fraction", "expected a fraction in (0, 1)");
}

int micro_batched_passes(const RunConfig& spec) {
  return spec.micro_batches > 1 || spec.schedule != plan::ScheduleOrder::horizontal ? spec.micro_batches : 0;
}

data::Corpus read_corpus(const RunConfig& spec, std::ostream* warnings) {
  data::CorpusOptions corpus_options;
  corpus_options.validation_fraction = spec.train.validation_fraction;
  corpus_options.seed = spec.seed;
  corpus_options.max_bytes = spec.train.max_corpus_bytes;
  corpus_options.warnings = warnings;  // binary files skipped
  std::filesystem::path root;
  if (spec.train.data) {
    root = *spec.train.data;
  } else {
    root = data::default_corpus_dir();
    corpus_options.extensions = data::default_corpus_extensions();
  }
  return data::Corpus::from_directory(root, corpus_options);
}

double validation_loss(TrainModel& model, data::BatchLoader& loader, int max_sequences) {
  loader.rewind_in_order();
  std::vector<data::TokenId> tokens;
  double weighted = 0.0;
  int counted = 0;
  int sequences = 0;
  while (counted < max_sequences) {
    const bool more = loader.next_in_order(tokens, sequences);
    const int use = std::min(sequences, max_sequences - counted);
    if (use > 0) {
      const std::size_t per = static_cast<std::size_t>(loader.sequence_length()) + 1;
      weighted += model.loss(std::span<const data::TokenId>(tokens.data(), per * static_cast<std::size_t>(use)), use) * use;
      counted += use;
    }
    if (!more) break;
  }
  if (counted == 0)
    throw InputError("corpus", "validation", "expected at least one validation window of sequence_length + 1 bytes");
  return weighted / counted;
}

}  // namespace asteria::cli
