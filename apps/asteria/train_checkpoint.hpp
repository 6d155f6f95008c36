#pragma once
// The checkpoints of `asteria train`: the step driver's state (weights, optimizer blocks wherever
// they rest, refreshes in flight), the data loader's position and the command line, per rank.
#include <cstdint>
#include <filesystem>

#include "apps/asteria/train.hpp"
#include "core/data/batch_loader.hpp"
#include "core/data/corpus.hpp"
#include "core/runtime/driver/step_driver.hpp"

namespace asteria::cli {

// Where this rank's checkpoints go: --checkpoint-dir, else the --resume directory, else
// <--out>/resume; rank<r>/ of it in data-parallel runs. InputError naming --checkpoint-every
// when checkpoints are asked for and there is nowhere to put them.
std::filesystem::path checkpoint_directory(const TrainSettings& settings, const RankPlace& place);

// Checkpoint of the state after step t (every rank at the same step: shared refresh results
// are exchanged on the way).
// `corpus_digest` (corpus_digest()) is kept with it: a resumed run must read the same text.
void save_train_checkpoint(const TrainSettings& settings, const RankPlace& place, runtime::StepDriver<float>& driver,
                           const data::BatchLoader& loader, optim::Step t, std::uint64_t corpus_digest);

// Restores settings.resume_from into a driver that has run no step and moves the loader to
// where it was; returns the step the checkpoint was taken after. Warnings (a newer slot that
// could not be loaded) go to `warnings`. InputError naming --data when the corpus read now is
// not the one the checkpoint was trained on (checkpoints from before the digest was kept are
// not checked).
optim::Step restore_train_checkpoint(const TrainSettings& settings, const RankPlace& place,
                                     runtime::StepDriver<float>& driver, data::BatchLoader& loader,
                                     std::uint64_t corpus_digest, std::ostream& warnings);

// XXH64 of the corpus's training and validation text (written as 16 hex digits, hex()).
std::uint64_t corpus_digest(const data::Corpus& corpus);

}  // namespace asteria::cli
