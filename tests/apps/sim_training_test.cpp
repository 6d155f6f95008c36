// asteria sim --gradients corpus: a data-true simulation that trains the model on a corpus. Under
// deterministic publication its losses are a real run's bit for bit (the loss depends on S only),
// data-parallel units train slices of one global batch, and the settings it needs are checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/data/corpus.hpp"
#include "tests/apps/child_cli.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using testing::TempDir;

void write_corpus(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const data::Corpus corpus = data::Corpus::synthetic(40'000, 7);
  const auto& bytes = corpus.train();
  std::ofstream(dir / "a.txt", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A column of steps.csv, by name, one cell per row.
std::vector<std::string> column(const std::filesystem::path& file, const std::string& name) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream fields(line);
  for (std::string cell; std::getline(fields, cell, ',');) header.push_back(cell);
  std::size_t index = header.size();
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) index = i;
  EXPECT_LT(index, header.size()) << file << " has no column " << name;
  std::vector<std::string> cells;
  while (std::getline(in, line)) {
    std::vector<std::string> row;
    std::stringstream f(line);
    for (std::string cell; std::getline(f, cell, ',');) row.push_back(cell);
    if (!line.empty() && line.back() == ',') row.emplace_back();
    cells.push_back(index < row.size() ? row[index] : "?");
  }
  return cells;
}

nlohmann::json summary(const std::filesystem::path& dir) {
  std::ifstream in(dir / "summary.json");
  return nlohmann::json::parse(in);
}

std::vector<std::string> common_args(const std::filesystem::path& corpus, const std::string& optimizer) {
  return {"--model", "tiny", "--data", corpus.string(), "--optimizer", optimizer, "--lr", "0.003", "--steps", "6",
          "--eval-every", "2", "--eval-sequences", "4", "--blas-threads", "1", "--no-progress"};
}

// Whole-step passes, and per micro-batch passes of the vertical schedule (the model's passes
// where the plan puts them).
TEST(SimTraining, DeterministicPublicationGivesTheRealRunsLossesBitForBit) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  const std::vector<std::vector<std::string>> schedules = {{}, {"--schedule", "vertical", "--micro-batches", "2"}};
  const std::vector<std::pair<std::string, std::size_t>> cases = {{"soap", 0}, {"soap", 1}, {"shampoo", 0}, {"shampoo", 1}};
  for (const auto& [optimizer, k] : cases) {
    SCOPED_TRACE(optimizer + (k == 0 ? "" : ", vertical, 2 micro-batches"));
    std::vector<std::string> train = {"train"};
    std::vector<std::string> sim = {"sim", "--hw", "gb10", "--numerics", "values", "--gradients", "corpus",
                                    "--warmup-steps", "0", "--placement", "tiered"};
    for (std::vector<std::string>* args : {&train, &sim}) {
      const std::vector<std::string> common = common_args(dir.path() / "corpus", optimizer);
      args->insert(args->end(), common.begin(), common.end());
      args->insert(args->end(), {"--staleness", "2", "--precondition-frequency", "2"});
      args->insert(args->end(), schedules[k].begin(), schedules[k].end());
    }
    const std::string run = optimizer + std::to_string(k);
    train.insert(train.end(), {"--out", (dir.path() / ("train-" + run)).string()});
    sim.insert(sim.end(), {"--out", (dir.path() / ("sim-" + run)).string()});
    const auto trained = testing::run_cli(cli::Args(train.begin(), train.end()));
    ASSERT_EQ(trained.code, 0) << trained.err;
    const auto simulated = testing::run_cli_in_child(cli::Args(sim.begin(), sim.end()));
    ASSERT_EQ(simulated.code, 0) << simulated.err;
    const std::filesystem::path t = dir.path() / ("train-" + run), s = dir.path() / ("sim-" + run);
    EXPECT_EQ(column(s / "steps.csv", "loss"), column(t / "steps.csv", "loss")) << optimizer;
    EXPECT_EQ(column(s / "steps.csv", "validation_loss"), column(t / "steps.csv", "validation_loss")) << optimizer;
    EXPECT_EQ(column(s / "steps.csv", "validation_loss")[1], column(t / "steps.csv", "validation_loss")[1]);
    EXPECT_FALSE(column(s / "steps.csv", "validation_loss")[1].empty()) << "validation after step 2";
    const nlohmann::json js = summary(s);
    EXPECT_EQ(js["gradients"], "corpus");
    EXPECT_EQ(js["final_validation_loss"], summary(t)["final_validation_loss"]);
    EXPECT_LT(js["final_loss"].get<double>(), js["first_loss"].get<double>()) << "the model learns";
    // Loss reduction per kJ: the first measured step's loss (no warm-up: step 1) less the last's,
    // over the measured steps' energy (gb10 has a power section).
    const double joules = js["energy_per_step_j"].get<double>() * js["steps"].get<double>();
    EXPECT_NEAR(js["loss_reduction_per_kj"].get<double>(),
                (js["first_loss"].get<double>() - js["final_loss"].get<double>()) / (joules / 1e3),
                1e-9 * std::abs(js["loss_reduction_per_kj"].get<double>()));
    // The clock is the simulated machine's: a GB10 step of the tiny model is far below a
    // millisecond, where this machine's real step is not.
    EXPECT_GT(js["simulated_seconds"].get<double>(), 0.0);
  }
}

// Two units of one sequence each train the global batch of two: the first step's loss is the
// one-process run's (the mean of the two slices' losses), later ones follow it up to the rounding
// of the gradients' reduce.
TEST(SimTraining, DataParallelUnitsTrainSlicesOfTheGlobalBatch) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  std::vector<std::string> train = {"train", "--batch", "2", "--out", (dir.path() / "train").string()};
  std::vector<std::string> sim = {"sim", "--hw", "gh200-alps", "--units", "2", "--batch", "1", "--numerics", "values",
                                  "--gradients", "corpus", "--warmup-steps", "0", "--out", (dir.path() / "sim").string()};
  for (std::vector<std::string>* args : {&train, &sim}) {
    const std::vector<std::string> common = common_args(dir.path() / "corpus", "adamw");
    args->insert(args->end(), common.begin(), common.end());
  }
  ASSERT_EQ(testing::run_cli(cli::Args(train.begin(), train.end())).code, 0);
  const auto simulated = testing::run_cli_in_child(cli::Args(sim.begin(), sim.end()));
  ASSERT_EQ(simulated.code, 0) << simulated.err;
  const std::vector<std::string> a = column(dir.path() / "train" / "steps.csv", "loss");
  const std::vector<std::string> b = column(dir.path() / "sim" / "steps.csv", "loss");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  EXPECT_NEAR(std::stod(b[0]), std::stod(a[0]), 1e-6);
  for (std::size_t i = 1; i < a.size(); ++i) EXPECT_NEAR(std::stod(b[i]), std::stod(a[i]), 1e-3) << "step " << i + 1;
  const nlohmann::json js = summary(dir.path() / "sim");
  EXPECT_EQ(js["batch"], 2);
  EXPECT_EQ(js["rank_batch"], 1);
  EXPECT_EQ(js["tokens_per_step"].get<double>(), 2.0 * 64);
}

TEST(SimTraining, SettingsItNeedsAreNamed) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  const auto error_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"sim", "--gradients", "corpus", "--steps", "2", "--no-progress"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto given = [&](const std::string& option) { return std::find(args.begin(), args.end(), option) != args.end(); };
    if (!given("--hw")) args.insert(args.end(), {"--hw", "gb10"});
    if (!given("--data")) args.insert(args.end(), {"--data", (dir.path() / "corpus").string()});
    const auto run = testing::run_cli_in_child(cli::Args(args.begin(), args.end()));
    EXPECT_NE(run.code, 0);
    return run.err;
  };
  const std::string shapes = error_of({"--model", "tiny", "--numerics", "shapes"});
  EXPECT_NE(shapes.find("--gradients"), std::string::npos) << shapes;
  EXPECT_NE(shapes.find("--numerics values"), std::string::npos) << shapes;
  // A config whose tokens are not bytes.
  std::ofstream(dir.path() / "wide.yaml")
      << "name: wide\nlayers: 1\nd_model: 32\nheads: 2\nkv_heads: 2\nmlp_hidden: 64\nmlp: gelu\nvocab: 512\n"
         "sequence_length: 16\nmicro_batch: 2\ntied_embeddings: false\nnorm_weights: true\nqk_norm: false\n"
         "activation_bytes: 4\nparameter_bytes: 4\ngradient_bytes: 4\norigin: test\n";
  const std::string vocab = error_of({"--model", (dir.path() / "wide.yaml").string(), "--numerics", "values"});
  EXPECT_NE(vocab.find("vocab"), std::string::npos) << vocab;
  EXPECT_NE(vocab.find("256"), std::string::npos) << vocab;
  const std::string empty = error_of({"--model", "tiny", "--numerics", "values", "--data",
                                      (dir.path() / "nothing-here").string()});
  EXPECT_NE(empty.find("nothing-here"), std::string::npos) << empty;
  // Representative ranks would stand for units that train other slices.
  const std::string representative = error_of({"--model", "tiny", "--numerics", "values", "--hw", "gh200-alps",
                                               "--nodes", "2", "--simulated-nodes", "1"});
  EXPECT_NE(representative.find("--simulated-nodes"), std::string::npos) << representative;
}

}  // namespace
}  // namespace asteria::cli
