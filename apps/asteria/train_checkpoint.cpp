#include "apps/asteria/train_checkpoint.hpp"

#include <ostream>
#include <span>

#include "apps/asteria/train_ranks.hpp"
#include "core/checkpoint/byte_codec.hpp"
#include "core/checkpoint/checkpoint_writer.hpp"
#include "core/common/error.hpp"
#include "core/io/xxhash64.hpp"

namespace asteria::cli {
namespace {
constexpr const char* kLoaderChunk = "train/loader";
constexpr const char* kGlobalBatchKey = "global_batch";  // sequences a step, all ranks together
constexpr const char* kCorpusKey = "corpus_digest";
}  // namespace

std::uint64_t corpus_digest(const data::Corpus& corpus) {
  io::Xxh64 hash;
  for (const std::vector<std::uint8_t>* part : {&corpus.train(), &corpus.validation()}) {
    const std::uint64_t size = part->size();  // the split is part of what is read
    hash.update(std::as_bytes(std::span<const std::uint64_t>(&size, 1)));
    hash.update(std::as_bytes(std::span<const std::uint8_t>(*part)));
  }
  return hash.digest();
}

std::filesystem::path checkpoint_directory(const TrainSettings& s, const RankPlace& place) {
  std::filesystem::path dir;
  if (s.spec.train.checkpoint_dir) {
    dir = *s.spec.train.checkpoint_dir;
  } else if (s.resume_from) {
    // The rank directory's parent when data-parallel: the checkpoint directory given to --resume.
    dir = place.ranks > 1 ? s.resume_from->slot().parent_path().parent_path() : s.resume_from->slot().parent_path();
  } else if (s.spec.out) {
    dir = *s.spec.out / "resume";
  } else {
    throw InputError("command line", "--checkpoint-every", "a place for the checkpoints: --checkpoint-dir DIR or --out DIR");
  }
  return place.ranks > 1 ? dir / ("rank" + std::to_string(place.rank)) : dir;
}

void save_train_checkpoint(const TrainSettings& s, const RankPlace& place, runtime::StepDriver<float>& driver,
                           const data::BatchLoader& loader, optim::Step t, std::uint64_t corpus) {
  const std::filesystem::path dir = checkpoint_directory(s, place);
  if (place.ranks > 1) std::filesystem::create_directories(dir.parent_path());
  checkpoint::CheckpointWriter writer(dir, t,
                                      {{"verb", "train"},
                                       {"args", s.saved_arguments},
                                       {"rank", std::to_string(place.rank)},
                                       {"ranks", std::to_string(place.ranks)},
                                       {kCorpusKey, hex(corpus)},
                                       {kGlobalBatchKey, std::to_string(loader.batch())}},
                                      s.checkpoint_files);
  driver.save(writer);
  checkpoint::ByteWriter position;
  position.u64(loader.batches_drawn());
  writer.add(kLoaderChunk, position.image());
  writer.commit();
}

optim::Step restore_train_checkpoint(const TrainSettings& s, const RankPlace& place, runtime::StepDriver<float>& driver,
                                     data::BatchLoader& loader, std::uint64_t corpus, std::ostream& warnings) {
  const checkpoint::CheckpointReader& reader = *s.resume_from;
  const std::string source = reader.slot().string();
  for (const std::string& problem : reader.passed_over())
    warnings << "asteria train: warning: a newer checkpoint could not be loaded, resuming from step " << reader.step()
             << " in " << source << " instead (" << problem << ")\n";
  if (reader.meta("verb") != "train") throw InputError(source, "meta.verb", "expected a checkpoint of asteria train");
  if (reader.meta("ranks") != std::to_string(place.ranks))
    throw InputError(source, "meta.ranks",
                     "the checkpoint was taken with " + reader.meta("ranks") + " data-parallel ranks, this run has " +
                         std::to_string(place.ranks));
  if (reader.meta("rank") != std::to_string(place.rank))
    throw InputError(source, "meta.rank", "expected rank " + std::to_string(place.rank) + "'s checkpoint");
  if (reader.has_meta(kCorpusKey) && reader.meta(kCorpusKey) != hex(corpus))
    throw InputError("command line", "--data",
                     "the corpus the checkpoint in " + source + " was trained on (digest " + reader.meta(kCorpusKey) +
                         "); the text read now differs (digest " + hex(corpus) +
                         "): resume with the same files, --max-corpus-bytes and --validation-fraction");
  // The loader's position counts batches of this size: another size would resume on other data.
  // A data-parallel checkpoint without the key was written when --batch was the global batch.
  if (!reader.has_meta(kGlobalBatchKey) && place.ranks > 1)
    throw InputError(source, std::string("meta.") + kGlobalBatchKey,
                     "a data-parallel checkpoint that records its global batch: this one was written when --batch "
                     "was all ranks' sequences together (now each rank's), so resuming it would train on another "
                     "batch");
  if (reader.has_meta(kGlobalBatchKey) && reader.meta(kGlobalBatchKey) != std::to_string(loader.batch()))
    throw InputError("command line", "--batch",
                     "the batch the checkpoint in " + source + " was trained on (" + reader.meta(kGlobalBatchKey) +
                         " sequences a step over " + std::to_string(place.ranks) +
                         " rank(s); --batch is each rank's), found " + std::to_string(loader.batch()) +
                         " (the model config's micro_batch may have changed)");
  const std::vector<std::byte> image = reader.read(kLoaderChunk);
  checkpoint::ByteReader position(image, source + " (chunk " + kLoaderChunk + ")");
  const std::uint64_t drawn = position.u64("batches drawn");
  position.expect_end();
  driver.restore(reader);
  loader.seek(drawn);
  return driver.steps_done();
}

}  // namespace asteria::cli
