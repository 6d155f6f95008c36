// `asteria train --checkpoint-every N` and `--resume DIR` end to end: a run stopped after k steps
// and resumed to n ends with the weights, optimizer state and losses of the run that went to n
// straight; the resumed run keeps its checkpoint's settings; bad combinations are refused early.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/asteria/train_resume.hpp"
#include "core/common/error.hpp"
#include "core/workload/model_config.hpp"
#include "core/data/corpus.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using testing::TempDir;

// Synthetic prose as a text file (the in-memory corpus's end-of-document bytes become newlines).
void write_corpus(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const data::Corpus corpus = data::Corpus::synthetic(40'000, 5);
  std::string text(corpus.train().begin(), corpus.train().end());
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n') c = '\n';
  std::ofstream(dir / "a.txt", std::ios::binary) << text;
}

nlohmann::json summary_of(const std::filesystem::path& out) {
  std::ifstream in(out / "summary.json");
  return nlohmann::json::parse(in);
}

std::vector<std::string> losses_of(const std::filesystem::path& out) {
  std::ifstream in(out / "steps.csv");
  std::vector<std::string> losses;
  std::string line;
  std::getline(in, line);
  std::size_t column = 0;
  for (std::size_t p = 0, c = 0; p <= line.size(); ++c) {
    const std::size_t q = std::min(line.find(',', p), line.size());
    if (line.substr(p, q - p) == "loss") column = c;
    p = q + 1;
  }
  while (std::getline(in, line)) {
    std::size_t p = 0;
    for (std::size_t c = 0; c < column; ++c) p = line.find(',', p) + 1;
    losses.push_back(line.substr(p, line.find(',', p) - p));
  }
  return losses;
}

std::vector<std::string> train_args(const std::filesystem::path& corpus, const std::string& optimizer, int staleness,
                                    int steps) {
  return {"train", "--model", "tiny", "--data", corpus.string(), "--optimizer", optimizer, "--staleness",
          std::to_string(staleness), "--steps", std::to_string(steps), "--warmup-steps", "1", "--eval-every", "0",
          "--eval-sequences", "2", "--blas-threads", "1", "--host-workers", "2", "--no-progress"};
}

TEST(TrainResume, StoppedAndResumedEqualsStraightBitForBit) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  for (const std::string optimizer : {"soap", "kl-shampoo"})
    for (int staleness : {0, 5}) {
      SCOPED_TRACE(optimizer + " S=" + std::to_string(staleness));
      const std::string tag = optimizer + std::to_string(staleness);
      std::vector<std::string> straight = train_args(dir.path() / "corpus", optimizer, staleness, 8);
      straight.insert(straight.end(), {"--out", (dir.path() / ("straight" + tag)).string()});
      const auto a = testing::run_cli(straight);
      ASSERT_EQ(a.code, 0) << a.err;
      // The same run stopped after 5 of its 9 steps, with a checkpoint every 2: the newest is of step 4.
      std::vector<std::string> first = train_args(dir.path() / "corpus", optimizer, staleness, 4);
      first.insert(first.end(), {"--checkpoint-every", "2", "--out", (dir.path() / ("first" + tag)).string()});
      const auto b = testing::run_cli(first);
      ASSERT_EQ(b.code, 0) << b.err;
      const std::filesystem::path checkpoints = dir.path() / ("first" + tag) / "resume";
      const auto c = testing::run_cli({"train", "--resume", checkpoints.string(), "--steps", "8", "--no-progress", "--out",
                                       (dir.path() / ("resumed" + tag)).string()});
      ASSERT_EQ(c.code, 0) << c.err;
      const nlohmann::json x = summary_of(dir.path() / ("straight" + tag));
      const nlohmann::json y = summary_of(dir.path() / ("resumed" + tag));
      EXPECT_EQ(y["resumed_from_step"], 4);
      EXPECT_EQ(x["weights_digest"], y["weights_digest"]);
      EXPECT_EQ(x["optimizer_state_digest"], y["optimizer_state_digest"]);
      const std::vector<std::string> all = losses_of(dir.path() / ("straight" + tag));
      const std::vector<std::string> tail = losses_of(dir.path() / ("resumed" + tag));
      ASSERT_EQ(all.size(), 9U);
      ASSERT_EQ(tail.size(), 5U);
      for (std::size_t i = 0; i < tail.size(); ++i) EXPECT_EQ(tail[i], all[4 + i]) << "step " << 5 + i;
    }
}

// A run killed after its last checkpoint but before it wrote its outputs is finished by
// --resume: no step left to run, the outputs written from the restored state (the same weights).
TEST(TrainResume, ARunKilledAfterItsLastCheckpointIsFinishedByResume) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  const std::filesystem::path out = dir.path() / "run";
  std::vector<std::string> run = train_args(dir.path() / "corpus", "shampoo", 1, 3);
  run.insert(run.end(), {"--checkpoint-every", "2", "--out", out.string()});
  const auto a = testing::run_cli(run);
  ASSERT_EQ(a.code, 0) << a.err;
  const nlohmann::json finished = summary_of(out);
  // The outputs a kill before the end would not have written.
  for (const char* name : {"summary.json", "steps.csv", "plan.txt", "checkpoint"}) std::filesystem::remove_all(out / name);
  const auto b = testing::run_cli({"train", "--resume", (out / "resume").string(), "--out", out.string()});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_NE(b.err.find("the checkpoint holds step 4, the run's last: no step left to run"), std::string::npos) << b.err;
  const nlohmann::json again = summary_of(out);
  EXPECT_EQ(again["resumed_from_step"], 4);
  EXPECT_EQ(again["weights_digest"], finished["weights_digest"]);
  EXPECT_EQ(again["optimizer_state_digest"], finished["optimizer_state_digest"]);
  EXPECT_TRUE(std::filesystem::exists(out / "checkpoint"));
  // A finished run made longer in its own --out ("the same command with --resume"): its rows
  // stay as they were and the new steps follow, without --overwrite.
  const std::filesystem::path whole = dir.path() / "whole";
  std::vector<std::string> finished_run = train_args(dir.path() / "corpus", "shampoo", 1, 3);
  finished_run.insert(finished_run.end(), {"--checkpoint-every", "2", "--out", whole.string()});
  ASSERT_EQ(testing::run_cli(finished_run).code, 0);
  const std::vector<std::string> before = losses_of(whole);
  ASSERT_EQ(before.size(), 4U);
  const auto longer =
      testing::run_cli({"train", "--resume", (whole / "resume").string(), "--steps", "5", "--out", whole.string()});
  ASSERT_EQ(longer.code, 0) << longer.err;
  const std::vector<std::string> after = losses_of(whole);
  ASSERT_EQ(after.size(), 6U);
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]) << "row " << i;
  EXPECT_EQ(summary_of(whole)["resumed_from_step"], 4);
  // Past the run's last step is still an error naming --steps.
  const auto fewer = testing::run_cli({"train", "--resume", (out / "resume").string(), "--steps", "1", "--out",
                                       (dir.path() / "fewer").string()});
  EXPECT_NE(fewer.code, 0);
  EXPECT_NE(fewer.err.find("--steps: at least 3"), std::string::npos) << fewer.err;
}

TEST(TrainResume, ChangedSettingsCheckpointsInTheWayAndDeferredUpdatesAreRefused) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  std::vector<std::string> first = train_args(dir.path() / "corpus", "soap", 1, 2);
  first.insert(first.end(), {"--checkpoint-dir", (dir.path() / "ckpt").string(), "--checkpoint-every", "1"});
  ASSERT_EQ(testing::run_cli(first).code, 0);

  // The same command line with --resume added goes on; another --lr is refused, naming it.
  std::vector<std::string> again = train_args(dir.path() / "corpus", "soap", 1, 3);
  again.insert(again.end(), {"--resume", (dir.path() / "ckpt").string()});
  const auto same = testing::run_cli(again);
  EXPECT_EQ(same.code, 0) << same.err;
  again.insert(again.end(), {"--lr", "0.5"});
  const auto changed = testing::run_cli(again);
  EXPECT_NE(changed.code, 0);
  EXPECT_NE(changed.err.find("--lr"), std::string::npos) << changed.err;
  EXPECT_NE(changed.err.find("keeps the settings of its checkpoint"), std::string::npos) << changed.err;

  // A new run into a directory that holds checkpoints is refused (it would mix two runs).
  const auto mixed = testing::run_cli(first);
  EXPECT_NE(mixed.code, 0);
  EXPECT_NE(mixed.err.find("holds checkpoints of an earlier run"), std::string::npos) << mixed.err;
  // --overwrite replaces them, with --checkpoint-dir alone (no --out); with neither it is refused.
  std::vector<std::string> replace = first;
  replace.push_back("--overwrite");
  const auto replaced = testing::run_cli(replace);
  EXPECT_EQ(replaced.code, 0) << replaced.err;
  std::vector<std::string> overwrite_nothing = train_args(dir.path() / "corpus", "soap", 1, 2);
  overwrite_nothing.push_back("--overwrite");
  const auto nothing = testing::run_cli(overwrite_nothing);
  EXPECT_NE(nothing.code, 0);
  EXPECT_NE(nothing.err.find("--out DIR or --checkpoint-dir DIR"), std::string::npos) << nothing.err;

  // Checkpoints without a place, and with deferred updates, are refused before any step.
  std::vector<std::string> nowhere = train_args(dir.path() / "corpus", "soap", 1, 2);
  nowhere.insert(nowhere.end(), {"--checkpoint-every", "1"});
  const auto no_place = testing::run_cli(nowhere);
  EXPECT_NE(no_place.err.find("--checkpoint-every"), std::string::npos) << no_place.err;
  std::vector<std::string> deferred = train_args(dir.path() / "corpus", "adamw", 0, 2);
  deferred.insert(deferred.end(), {"--checkpoint-every", "1", "--checkpoint-dir", (dir.path() / "ckpt2").string(),
                                   "--schedule", "vertical", "--micro-batches", "2", "--defer-fraction", "0.5"});
  const auto defer = testing::run_cli(deferred);
  EXPECT_NE(defer.err.find("--defer-fraction"), std::string::npos) << defer.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "ckpt2" / "slot-a" / "manifest.json"));
}

// The corpus is compared by its text, not its path: a moved copy resumes, other text at the same
// path is refused naming --data (the loader's position would point into other data).
TEST(TrainResume, TheCorpusIsComparedByItsTextNotItsPath) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  std::vector<std::string> first = train_args(dir.path() / "corpus", "adamw", 0, 2);
  first.insert(first.end(), {"--checkpoint-dir", (dir.path() / "ckpt").string(), "--checkpoint-every", "1"});
  ASSERT_EQ(testing::run_cli(first).code, 0);

  std::filesystem::rename(dir.path() / "corpus", dir.path() / "moved");
  std::vector<std::string> moved = train_args(dir.path() / "moved", "adamw", 0, 3);
  moved.insert(moved.end(), {"--resume", (dir.path() / "ckpt").string()});
  const auto resumed = testing::run_cli(moved);
  EXPECT_EQ(resumed.code, 0) << resumed.err;

  std::ofstream(dir.path() / "moved" / "a.txt", std::ios::app) << "a few more words at the end of the corpus\n";
  std::vector<std::string> edited = train_args(dir.path() / "moved", "adamw", 0, 4);
  edited.insert(edited.end(), {"--resume", (dir.path() / "ckpt").string()});
  const auto refused = testing::run_cli(edited);
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("--data"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("the text read now differs"), std::string::npos) << refused.err;
}

// The loader's position counts batches: a checkpoint resumed with another batch (here the model
// file's micro_batch edited between the runs) would train on other data, and is refused.
TEST(TrainResume, AnotherBatchThanTheCheckpointsIsRefused) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  std::string model;
  {
    std::ifstream in(workload::shipped_models_dir() / "tiny.yaml");
    model.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::filesystem::path file = dir.path() / "mine.yaml";
  std::ofstream(file) << model;
  std::vector<std::string> first = train_args(dir.path() / "corpus", "adamw", 0, 2);
  first[2] = file.string();  // --model
  first.insert(first.end(), {"--checkpoint-dir", (dir.path() / "ckpt").string(), "--checkpoint-every", "1"});
  ASSERT_EQ(testing::run_cli(first).code, 0);

  const std::size_t at = model.find("micro_batch: 2");
  ASSERT_NE(at, std::string::npos);
  model.replace(at, std::string("micro_batch: 2").size(), "micro_batch: 4");
  std::ofstream(file, std::ios::trunc) << model;
  std::vector<std::string> again = train_args(dir.path() / "corpus", "adamw", 0, 3);
  again[2] = file.string();
  again.insert(again.end(), {"--resume", (dir.path() / "ckpt").string()});
  const auto refused = testing::run_cli(again);
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("--batch: the batch the checkpoint in "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("was trained on (2 sequences a step over 1 rank(s); --batch is each rank's), found 4"),
            std::string::npos)
      << refused.err;
}

TEST(TrainResumeArguments, OverridesReplaceTheCheckpointsAndOtherOptionsMustAgree) {
  namespace po = boost::program_options;
  po::options_description o;
  o.add_options()("steps", po::value<int>())("lr", po::value<double>())("out", po::value<std::string>())(
      "overwrite", "")("resume", po::value<std::string>())("checkpoint-every", po::value<int>());
  const Args saved = {"--lr", "0.01", "--steps", "4", "--checkpoint-every", "2", "--overwrite", "--out", "a"};
  const Args merged = resumed_arguments(saved, {"--resume", "d", "--steps", "9", "--lr", "0.01"}, o, "ckpt");
  EXPECT_EQ(merged, (Args{"--lr", "0.01", "--checkpoint-every", "2", "--out", "a", "--steps", "9"}));
  EXPECT_THROW((void)resumed_arguments(saved, {"--lr", "0.02"}, o, "ckpt"), InputError);
  EXPECT_EQ(arguments_to_save({"--resume", "d", "--steps", "3"}, o), (Args{"--steps", "3"}));
  EXPECT_EQ(parse_arguments_text(arguments_text(saved), "x"), saved);
  EXPECT_THROW((void)parse_arguments_text("{\"a\":1}", "x"), InputError);
}

}  // namespace
}  // namespace asteria::cli
