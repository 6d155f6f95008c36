// Inputs past what the machine can hold are refused before any work, naming the field or the
// option, the bytes needed and the bytes available (they ended in std::bad_alloc, or the OOM
// killer, after seconds or minutes); a corpus of binary files is refused, binary files among
// text ones are skipped with a warning.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "apps/asteria/memory_check.hpp"
#include "core/common/error.hpp"
#include "core/data/corpus.hpp"
#include "core/model/gpt.hpp"
#include "tests/apps/child_cli.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// The tiny model with one line changed, as a config file.
fs::path tiny_with(const fs::path& dir, const std::string& field, const std::string& value) {
  std::ifstream in(workload::shipped_models_dir() / "tiny.yaml");
  std::ostringstream text;
  for (std::string line; std::getline(in, line);)
    text << (line.rfind(field + ":", 0) == 0 ? field + ": " + value : line) << '\n';
  const fs::path file = dir / ("tiny-" + field + "-" + value + ".yaml");
  std::ofstream(file) << text.str();
  return file;
}

void write_text_corpus(const fs::path& dir) {
  fs::create_directories(dir);
  const data::Corpus corpus = data::Corpus::synthetic(20'000, 4);
  std::ofstream(dir / "a.txt", std::ios::binary)
      .write(reinterpret_cast<const char*>(corpus.train().data()), static_cast<std::streamsize>(corpus.train().size()));
}

void write_binary(const fs::path& file) {
  std::string bytes("\x7f" "ELF\x02\x01\x01\0\0\0", 10);
  for (int i = 0; i < 1000; ++i) bytes.push_back(static_cast<char>(i * 37));
  std::ofstream(file, std::ios::binary) << bytes;
}

// std::cerr, where the corpus reports skipped files, read while in scope.
class CapturedStderr {
 public:
  CapturedStderr() : old_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CapturedStderr() { std::cerr.rdbuf(old_); }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* old_;
};

TEST(InputLimits, TrainRefusesAModelOrABatchPastTheMachinesMemory) {
  const TempDir dir;
  write_text_corpus(dir.path() / "corpus");
  const std::string corpus = (dir.path() / "corpus").string();
  const std::string wide = tiny_with(dir.path(), "d_model", "4194304").string();
  const auto model = testing::run_cli({"train", "--model", wide, "--data", corpus, "--steps", "1", "--no-progress"});
  EXPECT_EQ(model.code, 1) << model.err;
  EXPECT_NE(model.err.find("tiny: d_model: expected a model that fits in memory, at most "), std::string::npos)
      << model.err;
  EXPECT_NE(model.err.find("need 4.50 PB for one rank's model (weights 563 TB, gradients 563 TB, activations 51.5 GB, "
                           "optimizer state 3.38 PB (--optimizer soap"),
            std::string::npos)
      << model.err;
  // 10^7 sequences: 11 TB of activations, past any machine (10^5 were 112 GB here).
  const auto batch = testing::run_cli({"train", "--model", "tiny", "--batch", "10000000", "--data", corpus, "--steps",
                                       "1", "--no-progress"});
  EXPECT_EQ(batch.code, 1) << batch.err;
  EXPECT_NE(batch.err.find("command line: --batch: expected a batch that fits in memory, at most "), std::string::npos)
      << batch.err;
  EXPECT_NE(batch.err.find("10000000 sequences of 64 tokens (--batch, or the model config's micro_batch) need 11.2 TB"),
            std::string::npos)
      << batch.err;
  EXPECT_NE(batch.err.find("(the machine's physical memory)"), std::string::npos) << batch.err;
  // A batch that fits trains.
  EXPECT_EQ(testing::run_cli({"train", "--model", "tiny", "--batch", "4", "--data", corpus, "--steps", "1",
                              "--blas-threads", "1", "--no-progress"})
                .code,
            0);
}

TEST(InputLimits, TheTrainCheckComparesAgainstTheLimitItIsGiven) {
  workload::ModelConfig c = workload::find_model_config("tiny");
  c.micro_batch = 64;
  EXPECT_NO_THROW(check_train_memory(c, true, std::nullopt, {1e9, "a test budget"}));
  try {
    check_train_memory(c, true, std::nullopt, {1e7, "a test budget"});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--batch");
    EXPECT_NE(std::string(e.what()).find("at most 10.0 MB (a test budget)"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_train_memory(c, false, std::nullopt, {1e7, "a test budget"}));  // activations on the GPU
  EXPECT_GT(machine_memory().bytes, 1e8);
}

TEST(InputLimits, RanksOnOneNodeEachGetAnEqualShareOfItsMemory) {
  const workload::MemoryLimit machine{8e9, "the machine's physical memory"};
  EXPECT_EQ(share_of_node(machine, 1).bytes, 8e9);
  EXPECT_EQ(share_of_node(machine, 1).what, machine.what);
  const workload::MemoryLimit quarter = share_of_node(machine, 4);
  EXPECT_EQ(quarter.bytes, 2e9);
  EXPECT_EQ(quarter.what, "the machine's physical memory, shared by the 4 ranks on this node");
  // A model that fits the machine but not a quarter of it is refused on a rank of four.
  workload::ModelConfig c = workload::find_model_config("tiny");
  c.micro_batch = 64;
  const workload::ModelFootprint f = [&] {
    workload::ModelFootprint m = workload::weights_footprint(c, sizeof(float));
    m.activations = model::workspace_bytes(c, c.micro_batch, c.sequence_length, sizeof(float));
    return m;
  }();
  const workload::MemoryLimit room{f.total() * 2, "a test budget"};
  EXPECT_NO_THROW(check_train_memory(c, true, std::nullopt, room));
  EXPECT_THROW(check_train_memory(c, true, std::nullopt, share_of_node(room, 4)), InputError);
}

TEST(InputLimits, TheTrainCheckCountsTheOptimizerStateItBuildsOnTheHost) {
  const workload::ModelConfig c = workload::find_model_config("tiny");
  workload::ModelFootprint model = workload::weights_footprint(c, sizeof(float));
  model.activations = model::workspace_bytes(c, c.micro_batch, c.sequence_length, sizeof(float));
  TrainOptimizer soap{optim::OptimizerKind::soap, {}};
  const double state = workload::optimizer_state_size(c, soap.kind, soap.hp, sizeof(float)).bytes;
  ASSERT_GT(state, 0.0);
  // Room for the model but not for the model and SOAP's state.
  const workload::MemoryLimit limit{model.total() + state / 2, "a test budget"};
  EXPECT_NO_THROW(check_train_memory(c, true, std::nullopt, limit));
  try {
    check_train_memory(c, true, soap, limit);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("optimizer state " + workload::bytes_text(state)), std::string::npos) << what;
    EXPECT_NE(what.find("--optimizer soap, --max-precond-dim"), std::string::npos) << what;
  }
  // AdamW's two moments are smaller than SOAP's factors and bases here: it fits.
  const double adamw = workload::optimizer_state_size(c, optim::OptimizerKind::adamw, {}, sizeof(float)).bytes;
  ASSERT_LT(adamw, state / 2);
  EXPECT_NO_THROW(check_train_memory(c, true, TrainOptimizer{optim::OptimizerKind::adamw, {}}, limit));
}

TEST(InputLimits, SimAndSynthRefuseAModelTheyCannotHold) {
  const TempDir dir;
  const std::string wide = tiny_with(dir.path(), "d_model", "4194304").string();
  // Data-free: the optimizer blocks' bookkeeping (5.4e8 blocks, 3 TB) alone is past any machine.
  const auto sim = testing::run_cli_in_child({"sim", "--model", wide, "--max-precond-dim", "512", "--steps", "1",
                                              "--no-progress"});
  EXPECT_EQ(sim.code, 1) << sim.err;
  EXPECT_NE(sim.err.find(wide + ": d_model: expected a model that fits in memory"), std::string::npos) << sim.err;
  EXPECT_NE(sim.err.find("(bookkeeping of the optimizer blocks 3.22 TB (data-free: 5.37e+08 blocks per rank"),
            std::string::npos)
      << sim.err;
  const auto values = testing::run_cli_in_child({"sim", "--model", wide, "--numerics", "values", "--steps", "1",
                                                 "--no-progress"});
  EXPECT_EQ(values.code, 1) << values.err;
  EXPECT_NE(values.err.find("(weights 563 TB, gradients 563 TB, optimizer state"), std::string::npos) << values.err;
  const auto synth = testing::run_cli({"synth", "--model", wide, "--steps", "1", "--no-progress"});
  EXPECT_EQ(synth.code, 1) << synth.err;
  EXPECT_NE(synth.err.find(wide + ": d_model: expected a model that fits in memory"), std::string::npos) << synth.err;
}

TEST(InputLimits, TrainRefusesADataDirectoryOfBinaryFilesNamingThem) {
  const TempDir dir;
  fs::create_directories(dir.path() / "bin");
  write_binary(dir.path() / "bin" / "program");
  const auto run = testing::run_cli({"train", "--model", "tiny", "--data", (dir.path() / "bin").string(), "--steps",
                                     "1", "--no-progress"});
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.err.find((dir.path() / "bin").string() + ": corpus: expected at least one text file"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find((dir.path() / "bin" / "program").string()), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--data"), std::string::npos) << run.err;
}

TEST(InputLimits, TrainSkipsBinaryFilesAmongTextWithOneWarning) {
  const TempDir dir;
  write_text_corpus(dir.path() / "mixed");
  write_binary(dir.path() / "mixed" / "a.out");
  const CapturedStderr captured;
  const auto run = testing::run_cli({"train", "--model", "tiny", "--data", (dir.path() / "mixed").string(), "--steps",
                                     "1", "--blas-threads", "1", "--no-progress"});
  EXPECT_EQ(run.code, 0) << run.err;
  const std::string warning = captured.text() + run.err;
  EXPECT_NE(warning.find("warning: " + (dir.path() / "mixed").string() + ": skipped 1 binary file"), std::string::npos)
      << warning;
  EXPECT_NE(warning.find((dir.path() / "mixed" / "a.out").string()), std::string::npos) << warning;
}

}  // namespace
}  // namespace asteria::cli
