// `asteria train` end to end on a small corpus: the files it writes, the checkpoint it leaves,
// and the errors it gives for unusable input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/data/corpus.hpp"
#include "core/io/npy.hpp"
#include "core/model/gpt.hpp"
#include "core/workload/model_config.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"
#include "traces/native_trace.hpp"

namespace asteria::cli {
namespace {

using testing::TempDir;

// Two text files of synthetic prose (the structure a small model learns quickly).
void write_corpus(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "sub");
  const data::Corpus corpus = data::Corpus::synthetic(60'000, 4);
  const auto& bytes = corpus.train();
  const std::size_t half = bytes.size() / 2;
  std::ofstream(dir / "a.txt", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(half));
  std::ofstream(dir / "sub" / "b.txt", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data() + half), static_cast<std::streamsize>(bytes.size() - half));
}

std::vector<std::vector<std::string>> csv_rows(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

TEST(TrainVerb, WritesStepsSummaryAndACheckpointThatMatchesTheModel) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  const std::filesystem::path out = dir.path() / "run";
  const auto run = testing::run_cli({"train", "--model", "tiny", "--data", (dir.path() / "corpus").string(),
                                     "--optimizer", "soap", "--lr", "0.003", "--staleness", "1", "--steps", "4",
                                     "--eval-every", "2", "--eval-sequences", "4", "--blas-threads", "1",
                                     "--soap-second-moment", "rotate", "--no-progress", "--out", out.string()});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("train: tiny"), std::string::npos) << run.out;

  const auto rows = csv_rows(out / "steps.csv");
  ASSERT_EQ(rows.size(), 5u);  // header + 4 steps
  ASSERT_EQ(rows[0][0], "step");
  // The shared columns of every verb first, then train's own.
  const std::size_t loss = rows[0].size() - 3;
  ASSERT_EQ(rows[0][loss], "loss");
  ASSERT_EQ(rows[0][loss + 1], "validation_loss");
  ASSERT_EQ(rows[0][loss + 2], "tokens_per_s");
  ASSERT_EQ(rows[0][2], "step_time_s");
  ASSERT_EQ(rows[0][3], "compute_s");
  for (std::size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), rows[0].size());
    EXPECT_EQ(rows[r][0], std::to_string(r));
    EXPECT_GT(std::stod(rows[r][loss]), 0.0);
    EXPECT_GT(std::stod(rows[r][3]), 0.0) << "the measured forward + backward";
    EXPECT_EQ(rows[r][loss + 1].empty(), r % 2 == 1) << "validation on steps 2 and 4 only, row " << r;
  }

  std::ifstream summary_file(out / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(summary_file);
  EXPECT_EQ(summary.at("optimizer"), "soap");
  EXPECT_EQ(summary.at("staleness"), 1);
  EXPECT_EQ(summary.at("soap_second_moment"), "rotate");
  EXPECT_EQ(summary.at("steps"), 4);
  const double final_validation = summary.at("final_validation_loss").get<double>();
  EXPECT_EQ(final_validation, std::stod(rows[4][loss + 1]));  // every digit in both files
  EXPECT_LE(summary.at("max_staleness").get<int>(), 1);
  // No trace unless asked for.
  EXPECT_FALSE(std::filesystem::exists(out / "trace.json"));
  EXPECT_FALSE(std::filesystem::exists(out / "trace.csv"));
  EXPECT_EQ(summary.at("trace"), false);
  EXPECT_FALSE(summary.contains("trace_dropped_records"));

  // The checkpoint lists every tensor of the model with its shape, and each file holds it.
  std::ifstream manifest_file(out / "checkpoint" / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  const model::Gpt<float> reference(workload::find_model_config("tiny"), 1);
  ASSERT_EQ(manifest.at("tensors").size(), reference.tensor_count());
  EXPECT_EQ(summary.at("parameters").get<std::size_t>(), reference.parameter_count());
  for (std::size_t i = 0; i < reference.tensor_count(); ++i) {
    const nlohmann::json& t = manifest.at("tensors")[i];
    EXPECT_EQ(t.at("name"), reference.tensor(i).name);
    const io::NpyArray array = io::read_npy(out / "checkpoint" / t.at("file").get<std::string>());
    EXPECT_EQ(array.size(), reference.parameter(i).size()) << reference.tensor(i).name;
    EXPECT_EQ(array.dtype(), io::DType::float32);
  }
}

// name of each thread, by (pid, tid), from the trace's thread_name metadata.
std::map<std::pair<int, int>, std::string> thread_names(const nlohmann::json& trace) {
  std::map<std::pair<int, int>, std::string> names;
  for (const nlohmann::json& e : trace.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      names[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
  return names;
}

TEST(TrainVerb, TraceWritesTheDeviceStreamWorkersAndSteps) {
  const TempDir dir;
  write_corpus(dir.path() / "corpus");
  const std::filesystem::path out = dir.path() / "run";
  // SOAP refreshing every 2 steps: steps 2 and 4 (at least) send refreshes to the host workers.
  const auto run = testing::run_cli({"train", "--model", "tiny", "--data", (dir.path() / "corpus").string(),
                                     "--optimizer", "soap", "--precondition-frequency", "2", "--staleness", "1",
                                     "--host-workers", "2", "--steps", "4", "--eval-every", "2",
                                     "--eval-sequences", "2", "--blas-threads", "1", "--no-progress", "--trace",
                                     "--out", out.string()});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("trace.json"), std::string::npos) << run.out;

  std::ifstream trace_file(out / "trace.json");
  const nlohmann::json trace = nlohmann::json::parse(trace_file);  // throws, failing the test, if not JSON
  const auto names = thread_names(trace);
  std::map<std::string, int> slices_on;  // thread name -> X events
  std::set<std::string> worker_categories;
  std::set<std::string> device_categories;
  std::vector<std::string> steps;
  int validations = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    EXPECT_GE(e.at("dur").get<double>(), 0.0) << e.dump();
    const auto name = names.find({e.at("pid").get<int>(), e.at("tid").get<int>()});
    ASSERT_NE(name, names.end()) << "an X event on an unnamed thread: " << e.dump();
    ++slices_on[name->second];
    if (name->second.starts_with("cpu0 worker")) worker_categories.insert(e.at("cat").get<std::string>());
    if (name->second == "gpu0 stream") device_categories.insert(e.at("cat").get<std::string>());
    if (e.at("cat") == "step") {
      EXPECT_EQ(name->second, "cpu0 main");
      steps.push_back(e.at("name").get<std::string>());
    }
    if (e.at("name").get<std::string>().starts_with("validation after step")) ++validations;
  }
  // tiny has layers on the device stream: forward, backward and optimizer work every step.
  EXPECT_GE(slices_on["gpu0 stream"], 3 * 4);
  // With values, the layer's optimizer launch also runs the snapshot-and-submit of its refreshes.
  EXPECT_EQ(device_categories, (std::set<std::string>{"bookkeeping", "compute", "optimizer"}));
  EXPECT_GE(slices_on["cpu0 worker 0"], 1);
  EXPECT_TRUE(worker_categories.contains("refresh"));
  EXPECT_EQ(steps, (std::vector<std::string>{"step 1", "step 2", "step 3", "step 4"}));  // sorted by time
  EXPECT_EQ(validations, 2);  // after steps 2 and 4
  // The issuing thread's bookkeeping (acquire, release, ...) is on its own track.
  EXPECT_GE(slices_on["cpu0 main"], 4 + 2);

  std::ifstream summary_file(out / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(summary_file);
  EXPECT_EQ(summary.at("trace_dropped_records"), 0);
  EXPECT_EQ(trace.at("otherData").at("optimizer"), "soap");
  // The native trace beside it holds the same records, with the plan's ops.
  const traces::NativeTrace native = traces::read_native_trace(out / "trace.csv");
  EXPECT_EQ(native.records.size(), summary.at("trace_records").get<std::size_t>());
  std::set<std::string> kinds;
  for (const traces::TraceRecord& r : native.records) kinds.insert(r.kind);
  for (const char* kind : {"forward", "backward", "acquire", "release", "accumulate", "update", "refresh",
                           "refresh_job", "step"})
    EXPECT_TRUE(kinds.contains(kind)) << kind;
}

TEST(TrainVerb, TraceWithoutOutIsAnErrorNamingBoth) {
  const TempDir dir;
  write_corpus(dir.path());
  const auto run = testing::run_cli(
      {"train", "--model", "tiny", "--data", dir.path().string(), "--steps", "1", "--no-progress", "--trace"});
  EXPECT_NE(run.code, 0);
  EXPECT_NE(run.err.find("--trace"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--out"), std::string::npos) << run.err;
}

TEST(TrainVerb, AnEmptyCorpusDirectoryIsAnErrorNamingIt) {
  const TempDir dir;
  std::filesystem::create_directories(dir.path() / "empty");
  const auto run = testing::run_cli({"train", "--model", "tiny", "--data", (dir.path() / "empty").string(),
                                     "--steps", "1", "--no-progress"});
  EXPECT_NE(run.code, 0);
  EXPECT_NE(run.err.find((dir.path() / "empty").string()), std::string::npos) << run.err;
}

TEST(TrainVerb, UnsupportedDeviceAndModelAreErrorsNamingTheOption) {
  const TempDir dir;
  write_corpus(dir.path());
  const auto cuda = testing::run_cli(
      {"train", "--model", "tiny", "--data", dir.path().string(), "--device", "cuda", "--steps", "1"});
  EXPECT_NE(cuda.code, 0);
  EXPECT_NE(cuda.err.find("--device"), std::string::npos) << cuda.err;
  // olmo2-7b uses grouped-query attention and QK-norm, which the CPU transformer does not implement.
  const auto gqa = testing::run_cli(
      {"train", "--model", "olmo2-7b", "--data", dir.path().string(), "--steps", "1", "--no-progress"});
  EXPECT_NE(gqa.code, 0);
  EXPECT_NE(gqa.err.find("olmo2-7b"), std::string::npos) << gqa.err;
  const auto variant = testing::run_cli({"train", "--model", "tiny", "--data", dir.path().string(), "--steps",
                                         "1", "--soap-second-moment", "transpose", "--no-progress"});
  EXPECT_NE(variant.code, 0);
  EXPECT_NE(variant.err.find("--soap-second-moment"), std::string::npos) << variant.err;
  EXPECT_NE(variant.err.find("transpose"), std::string::npos) << variant.err;
}

}  // namespace
}  // namespace asteria::cli
